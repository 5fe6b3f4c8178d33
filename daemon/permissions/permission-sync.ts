// One pass of the permission sync: for every connection whose code host has a permission
// API (CodeHost.permissions), ask it who may read what and write the answers to the store
// (store.ts PermissionStoreSync), which the authenticator reads (auth/permissions.ts).
//
// Two directions, each where the host can answer it:
// - repository-driven: for each private repository of the connection, the host's list of
//   its readers, matched to members by their linked account on that connection or, when
//   the host gives a verified email, by the member's email (the account is then linked,
//   `linkedBy: 'email'`, so the account-driven direction can ask for it too);
// - account-driven: for each member with a linked account on the connection, what that
//   account can read, asked with the member's own token on the host (sealed in the store)
//   or, where the host lets an administrator act for an account, with the connection's.
// A member may read a repository when either direction says so; public repositories and
// the configuration's grants need no sync.
//
// Incremental: a member's account or a repository is asked again when its last sync is
// older than the interval (or never happened, or failed); `only` and `force` ask now. A
// failure is recorded on its subject (and the connection's) and leaves what was found
// before in place: a host that is down does not hide code from everyone, and a removal
// takes effect at the next sync that completes.

import type { Config, Connection } from '../config/types.ts';
import { createCodeHost, HostError, type CodeHost, type CodeHostOptions, type HostAccount } from '../repos/hosts/index.ts';
import { mapLimit } from '../repos/hosts/http.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ExternalAccountRecord, PermissionSyncState, RepoRecord, Store, UserRecord } from '../store/store.ts';
import { StoreConflictError } from '../store/store.ts';
import { type TokenSeal, tokenOwner } from '../auth/sealed-token.ts';

export interface PermissionSyncOptions {
  config: Config;
  store: Store;
  /** Opens members' sealed tokens on the hosts. */
  seal: TokenSeal;
  log: Logger;
  now: () => Date;
  hostOptions?: CodeHostOptions;
  /** Ask only about this member (all their accounts) or this repository, now. */
  only?: { userId?: string; repoId?: number };
  /** Ask about every subject now, whenever it was last synced. */
  force?: boolean;
  /** Called after each write, with the member whose permissions it changed (undefined: a repository's readers, several members). */
  onWrite?: (userId?: string) => void;
  /** Requests to one host at once (default 8). */
  concurrency?: number;
  /** Told of each account the pass links by a verified email (the audit log). */
  onEmailLink?: (account: ExternalAccountRecord) => void;
}

/** What one direction of one connection did in a pass. */
export interface DirectionReport {
  /** The host cannot answer this direction (no readers list; no way to ask as an account without its token). */
  unsupported: boolean;
  synced: number;
  failed: number;
  /** Synced recently enough to be left for a later pass. */
  skipped: number;
}

export interface ConnectionPermissionReport {
  connection: string;
  /** The connection could not be asked at all (its token missing, say). */
  error?: string;
  repositories: DirectionReport;
  accounts: DirectionReport;
  /** Accounts linked in this pass by a host's verified email. */
  linkedByEmail: number;
}

export interface PermissionSyncReport {
  startedAt: string;
  seconds: number;
  connections: ConnectionPermissionReport[];
}

const DEFAULT_CONCURRENCY = 8;

export async function syncPermissions(options: PermissionSyncOptions): Promise<PermissionSyncReport> {
  const started = options.now();
  const report: PermissionSyncReport = { startedAt: started.toISOString(), seconds: 0, connections: [] };
  const users = (await options.store.listUsers()).filter((u) => u.suspendedAt === undefined);
  const connectionIds = new Map((await options.store.listConnections()).map((c) => [c.name, c.id]));
  for (const [name, connection] of Object.entries(options.config.connections)) {
    if (connection.type === 'git') continue;
    const out = await syncConnection(options, { name, connection, connectionId: connectionIds.get(name), users });
    if (out !== undefined) report.connections.push(out);
  }
  report.seconds = (options.now().getTime() - started.getTime()) / 1000;
  return report;
}

interface ConnectionInput {
  name: string;
  connection: Exclude<Connection, { type: 'git' }>;
  connectionId: number | undefined;
  users: UserRecord[];
}

/** What a connection's two directions share. */
interface ConnectionPass {
  options: PermissionSyncOptions;
  name: string;
  host: CodeHost & { permissions: NonNullable<CodeHost['permissions']> };
  /** The connection's live repositories. */
  repos: RepoRecord[];
  users: UserRecord[];
  /** Host account id → member. */
  byAccount: Map<string, string>;
  /** Lower-case email → member. */
  byEmail: Map<string, string>;
  /** Members whose account on this connection is linked. */
  accounts: ExternalAccountRecord[];
  report: ConnectionPermissionReport;
}

const emptyDirection = (): DirectionReport => ({ unsupported: false, synced: 0, failed: 0, skipped: 0 });

async function syncConnection(options: PermissionSyncOptions, input: ConnectionInput): Promise<ConnectionPermissionReport | undefined> {
  const report: ConnectionPermissionReport = { connection: input.name, repositories: emptyDirection(), accounts: emptyDirection(), linkedByEmail: 0 };
  let host: CodeHost;
  try {
    host = createCodeHost(input.name, input.connection, options.hostOptions);
  } catch (err) {
    report.error = (err as Error).message;
    return report;
  }
  if (host.permissions === undefined) return undefined;
  const repos =
    input.connectionId === undefined ? [] : (await options.store.listRepos({ connectionId: input.connectionId })).filter((r) => r.state !== 'deleted');
  const accounts = await options.store.permissions.listAccounts({ connection: input.name });
  const pass: ConnectionPass = {
    options,
    name: input.name,
    host: host as ConnectionPass['host'],
    repos,
    users: input.users,
    byAccount: new Map(accounts.map((a) => [a.accountId, a.userId])),
    byEmail: new Map(input.users.map((u) => [u.email.toLowerCase(), u.id])),
    accounts,
    report,
  };
  await syncRepositories(pass);
  // Accounts linked by email just now are asked about in the same pass.
  pass.accounts = await options.store.permissions.listAccounts({ connection: input.name });
  await syncAccounts(pass);
  return report;
}

/**
 * Whether a subject's permissions are due: never synced, failed since, or synced at least
 * three quarters of the interval ago. Passes run every quarter of the interval
 * (permission-scheduler.ts), so each subject is asked again within one interval of its
 * last sync, which is the promise made for a permission removed on the host.
 */
function due(options: PermissionSyncOptions, state: PermissionSyncState | undefined): boolean {
  if (options.force === true || state?.syncedAt === undefined || state.error !== undefined) return true;
  return options.now().getTime() - Date.parse(state.syncedAt) >= (options.config.settings.permissionSyncIntervalMs * 3) / 4;
}

async function syncRepositories(pass: ConnectionPass): Promise<void> {
  const { options, report } = pass;
  const { only } = options;
  if (only !== undefined && only.repoId === undefined) return;
  const states = new Map((await options.store.permissions.repoSyncStates()).map((s) => [s.repoId, s]));
  const wanted = pass.repos.filter((r) => r.visibility === 'private' && (only === undefined || r.repoId === only.repoId));
  const todo = only === undefined ? wanted.filter((r) => due(options, states.get(r.repoId))) : wanted;
  report.repositories.skipped = wanted.length - todo.length;
  let unsupported = false;
  let firstError: string | undefined;
  await mapLimit(todo, options.concurrency ?? DEFAULT_CONCURRENCY, async (repo) => {
    if (unsupported) return;
    const now = () => options.now().toISOString();
    try {
      const readers = await pass.host.permissions.readersOf(repo.displayName);
      if (readers === undefined) {
        unsupported = true;
        return;
      }
      const userIds = await membersOf(pass, readers);
      await options.store.permissions.replaceRepoReaders(repo.repoId, userIds, now());
      report.repositories.synced++;
      options.onWrite?.();
    } catch (err) {
      if (report.repositories.failed++ === 0) firstError = `${repo.repoName}: ${failure(err)}`;
      await options.store.permissions.recordRepoSyncError(repo.repoId, failure(err), now());
    }
  });
  // One line per pass, not one per repository: a token without the right (GitHub's
  // collaborators need push access) fails them all alike.
  if (report.repositories.failed > 0)
    options.log.warn(
      { connection: pass.name, failed: report.repositories.failed, first: firstError },
      'permission sync: the readers of some repositories could not be listed (GET /api/ee/permissions lists them)',
    );
  if (unsupported) {
    report.repositories = { ...emptyDirection(), unsupported: true };
  }
}

/** The members among a repository's readers: by linked account, else by verified email (linking the account). */
async function membersOf(pass: ConnectionPass, readers: HostAccount[]): Promise<string[]> {
  const out = new Set<string>();
  for (const reader of readers) {
    const linked = pass.byAccount.get(reader.id);
    if (linked !== undefined) {
      out.add(linked);
      continue;
    }
    const byEmail = reader.email === undefined ? undefined : pass.byEmail.get(reader.email.toLowerCase());
    if (byEmail === undefined) continue;
    out.add(byEmail);
    // A member who already has another account on this connection keeps it: the email
    // match grants this repository, but the link stays the one the member made.
    if (pass.accounts.some((a) => a.userId === byEmail)) continue;
    try {
      const link = {
        userId: byEmail,
        connection: pass.name,
        accountId: reader.id,
        login: reader.login,
        email: reader.email!.toLowerCase(),
        linkedBy: 'email' as const,
      };
      const linked = await pass.options.store.permissions.linkAccount(link, pass.options.now().toISOString());
      pass.accounts.push(linked);
      pass.options.onEmailLink?.(linked);
      pass.byAccount.set(reader.id, byEmail);
      pass.report.linkedByEmail++;
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
    }
  }
  return [...out];
}

async function syncAccounts(pass: ConnectionPass): Promise<void> {
  const { options, report } = pass;
  const { only } = options;
  if (only !== undefined && only.userId === undefined) return;
  const live = new Set(pass.users.map((u) => u.id));
  const states = new Map((await options.store.permissions.accountSyncStates()).filter((s) => s.connection === pass.name).map((s) => [s.userId, s]));
  const wanted = pass.accounts.filter((a) => live.has(a.userId) && (only === undefined || a.userId === only.userId));
  const todo = only === undefined ? wanted.filter((a) => due(options, states.get(a.userId))) : wanted;
  report.accounts.skipped = wanted.length - todo.length;
  const byName = new Map(pass.repos.map((r) => [r.repoName, r.repoId]));
  let unanswered = 0;
  let firstError: string | undefined;
  await mapLimit(todo, options.concurrency ?? DEFAULT_CONCURRENCY, async (account) => {
    const now = () => options.now().toISOString();
    const token = account.sealedToken === undefined ? undefined : options.seal.open(account.sealedToken, tokenOwner(account.userId, pass.name));
    try {
      const names = await pass.host.permissions.readableBy({
        account: { id: account.accountId, login: account.login, ...(account.email === undefined ? {} : { email: account.email }) },
        ...(token === undefined ? {} : { token }),
      });
      if (names === undefined) {
        unanswered++;
        return;
      }
      const repoIds = names.flatMap((n) => {
        const id = byName.get(n);
        return id === undefined ? [] : [id];
      });
      await options.store.permissions.replaceAccountRepos(account.userId, pass.name, repoIds, now());
      report.accounts.synced++;
      options.onWrite?.(account.userId);
    } catch (err) {
      report.accounts.failed++;
      firstError ??= `${account.userId}: ${failure(err)}`;
      const message =
        err instanceof HostError && err.kind === 'unauthorized' && token !== undefined
          ? `${err.message}; the member should sign in with the host again`
          : failure(err);
      await options.store.permissions.recordAccountSyncError(account.userId, pass.name, message, now());
    }
  });
  if (report.accounts.failed > 0)
    options.log.warn(
      { connection: pass.name, failed: report.accounts.failed, first: firstError },
      'permission sync: what some accounts can read could not be listed (GET /api/ee/permissions lists them)',
    );
  // Every account asked went unanswered: the host cannot be asked as an account without its token.
  if (todo.length > 0 && unanswered === todo.length) report.accounts.unsupported = true;
}

function failure(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
