// `trawl users ...` and `trawl keys ...` (docs/command-line.md): organization members and
// their API keys, in the data dir's store. A new key is printed once, alone on its stdout
// line; only its keyed hash is kept (auth/credentials.ts). `keys list` shows under each key
// what it opened that still works (the listing of GET /api/keys); `keys revoke` ends all of
// it with the key; `users sign-out` ends everything of a user but the keys. Every change is
// recorded in the audit log with it (audit/log.ts), as the operating-system account that
// ran the command. A name or email with control characters is refused
// (auth/control-characters.ts); what the store holds is printed escaped (format.ts), as an
// older version may have stored such names.

import { parseArgs } from 'node:util';
import { AuditLog, cliActor, firstTime } from '../audit/log.ts';
import { endedAny, listKeyCredentials, type ListedKey } from '../auth/credential-listing.ts';
import { controlCharacterProblem } from '../auth/control-characters.ts';
import { installationSecret } from '../auth/credentials.ts';
import { keyNameProblem } from '../auth/key-name.ts';
import { issueApiKey } from '../audit/key-issue.ts';
import { changeMember } from '../audit/member-change.ts';
import { loadConfig } from '../config/load.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { openConfiguredStore, openStore } from '../store/open.ts';
import { StoreConflictError, type EndedCredentials, type Role, type Store, type UserRecord } from '../store/store.ts';
import { escaped, jsonText } from './format.ts';
import { UsageError } from './usage.ts';

const ROLES: Role[] = ['owner', 'member'];
const EMAIL = /^[^\s@]+@[^\s@]+$/;

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
}

export const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), now: () => new Date() };

export async function usersCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      json: { type: 'boolean' },
      'data-dir': { type: 'string' },
      config: { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  return withStore(
    values['data-dir'],
    async (store) => {
      const now = io.now().toISOString();
      const audit = new AuditLog(store, io.now);
      const actor = cliActor();
      switch (sub) {
        case 'add': {
          none(positionals, 'users add');
          const email = values.email;
          refuseControlCharacters('--email', email);
          if (!email || !EMAIL.test(email)) throw new UsageError(`users add needs --email ADDRESS${email ? `, got "${email}"` : ''}`);
          const name = values.name ?? email.slice(0, email.indexOf('@'));
          refuseControlCharacters('--name', name);
          const role = (values.role ?? 'member') as Role;
          if (!ROLES.includes(role)) throw new UsageError(`--role must be owner or member, got "${values.role}"`);
          try {
            const u = await audit.change(
              () => store.createUser({ email, name, role }, now),
              (u) => ({ action: 'user.added', actor, target: { type: 'user', id: u.id }, details: { email: u.email, role: u.role } }),
            );
            io.out(escaped`user ${u.id} ${u.email} (${u.role}) added`);
          } catch (err) {
            if (err instanceof StoreConflictError) throw new Error(`a user with the email ${email} exists already`);
            throw err;
          }
          return 0;
        }
        case 'list': {
          none(positionals, 'users list');
          const users = await store.listUsers();
          if (values.json) {
            io.out(jsonText(users));
            return 0;
          }
          if (users.length === 0) io.out('no users (add one with trawl users add --email ADDRESS --role owner)');
          for (const u of users) {
            const state = u.suspendedAt ? `suspended since ${u.suspendedAt}` : 'active';
            const limit = u.dailyLimit === undefined ? 'default limit' : `${u.dailyLimit} requests/day`;
            io.out(escaped`${u.id}  ${u.email}  ${u.name}  ${u.role}  ${state}  ${limit}  last active ${u.lastActivityAt ?? 'never'}`);
          }
          return 0;
        }
        case 'suspend':
        case 'unsuspend': {
          const u = await userByEmail(store, one(positionals, `users ${sub} EMAIL`));
          // Recorded when the state changes (suspending a suspended user changes nothing).
          await changeMember(store, audit, u.id, { suspended: sub === 'suspend' }, { actor, now });
          io.out(sub === 'suspend' ? escaped`${u.email} suspended: their API keys stop working now` : escaped`${u.email} is active again`);
          return 0;
        }
        case 'sign-out': {
          const u = await userByEmail(store, one(positionals, 'users sign-out EMAIL'));
          const ended = await audit.change(
            () => store.endUserCredentials(u.id, now),
            (e) => (endedAny(e) ? { action: 'user.signed_out', actor, target: { type: 'user', id: u.id }, details: { email: u.email, ended: e } } : undefined),
          );
          io.out(escaped`${u.email} signed out everywhere: ended ${describeEnded(ended)}; their API keys still work (trawl keys revoke ID ends one)`);
          return 0;
        }
        case 'limit': {
          if (positionals.length !== 2) throw new UsageError('usage: trawl users limit EMAIL N (N requests per day, or "default")');
          const u = await userByEmail(store, positionals[0]!);
          const text = positionals[1]!;
          const n = text === 'default' ? null : Number(text);
          if (n !== null && (!Number.isInteger(n) || n < 0))
            throw new UsageError(`the limit must be a whole number of requests per day or "default", got "${text}"`);
          await changeMember(store, audit, u.id, { dailyLimit: n }, { actor, now });
          io.out(n === null ? escaped`${u.email}: the default daily limit applies` : escaped`${u.email}: ${n} requests per day`);
          return 0;
        }
        default:
          throw new UsageError(`users takes add, list, suspend, unsuspend, limit or sign-out${sub ? `, not "${sub}"` : ''}`);
      }
    },
    values.config,
  );
}

export async function keysCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean' },
      'data-dir': { type: 'string' },
      config: { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  const dataDir = resolveDataDir(values['data-dir']);
  const config = values.config === undefined ? undefined : loadConfig(values.config);
  return withStore(
    values['data-dir'],
    async (store) => {
      const now = io.now().toISOString();
      const audit = new AuditLog(store, io.now);
      const actor = cliActor();
      switch (sub) {
        case 'create': {
          none(positionals, 'keys create');
          if (!values.user) throw new UsageError('keys create needs --user EMAIL');
          const name = (values.name ?? 'default').trim();
          const problem = keyNameProblem(name);
          if (problem !== undefined) throw new Error(`--${problem}`);
          const u = await userByEmail(store, values.user);
          const { key, record } = await issueApiKey(
            { store, audit, secret: await installationSecret(store, config, dataDir) },
            { user: u, name },
            { actor, now },
          );
          io.out(key);
          io.err(escaped`trawl: key ${record.id} (${record.name}) for ${u.email}: shown once, store it now`);
          return 0;
        }
        case 'list': {
          none(positionals, 'keys list');
          if (!values.user) throw new UsageError('keys list needs --user EMAIL');
          const keys = await listKeyCredentials(store, (await userByEmail(store, values.user)).id, now);
          if (values.json) {
            io.out(jsonText(keys));
            return 0;
          }
          if (keys.length === 0) io.out('no keys');
          for (const k of keys) for (const line of keyLines(k)) io.out(line);
          return 0;
        }
        case 'revoke': {
          const id = one(positionals, 'keys revoke ID');
          // Recorded when it takes effect: revoking a revoked key again changes nothing, unless
          // it ends something opened with the key since (a request that raced the revocation).
          const r = await audit.change(
            async () => firstTime((await store.getApiKey(id))?.revokedAt, await store.revokeApiKey(id, now)),
            (r) =>
              r && (r.first || endedAny(r.ended))
                ? {
                    action: 'api_key.revoked',
                    actor,
                    target: { type: 'api_key', id: r.key.id },
                    details: { userId: r.key.userId, name: r.key.name, ended: r.ended },
                  }
                : undefined,
          );
          if (!r) throw new Error(`no API key with id ${id} (trawl keys list --user EMAIL shows them)`);
          io.out(escaped`key ${r.key.id} (${r.key.name}) revoked at ${r.key.revokedAt}; ended ${describeEnded(r.ended)} opened with it`);
          return 0;
        }
        default:
          throw new UsageError(`keys takes create, list or revoke${sub ? `, not "${sub}"` : ''}`);
      }
    },
    values.config,
  );
}

/** A key, and under it what it opened that still works. */
function keyLines(k: ListedKey): string[] {
  const lines = [
    escaped`${k.id}  ${k.name}  ${k.hint}...  created ${k.createdAt}  last used ${k.lastUsedAt ?? 'never'}` +
      (k.revokedAt ? escaped`  REVOKED ${k.revokedAt}` : ''),
  ];
  for (const t of k.scopedTokens)
    lines.push(escaped`  scoped token ${t.id}  created ${t.createdAt}  expires ${t.expiresAt}  repositories ${t.repoIds.join(',')}`);
  for (const g of k.oauthGrants)
    lines.push(escaped`  OAuth grant ${g.id}  ${JSON.stringify(g.clientName)} (${g.clientId})  since ${g.createdAt}  last used ${g.lastUsedAt ?? 'never'}`);
  for (const s of k.sessions) lines.push(`  ${sessionLine(s)}`);
  return lines;
}

/** One browser session, as `keys list` and `sessions list` show it. */
export function sessionLine(s: ListedKey['sessions'][number]): string {
  return (
    escaped`browser session ${s.id}  signed in ${s.createdAt}  expires ${s.expiresAt}  last used ${s.lastUsedAt ?? 'never'}` +
    (s.userAgent ? escaped`  ${JSON.stringify(s.userAgent)}` : '')
  );
}

/** "1 scoped token, 2 OAuth grants and 0 browser sessions". */
export function describeEnded(e: EndedCredentials): string {
  const n = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;
  return `${n(e.scopedTokens, 'scoped token')}, ${n(e.oauthGrants, 'OAuth grant')} and ${n(e.sessions, 'browser session')}`;
}

/**
 * Runs `fn` on the installation's store: the data dir's, or with `configPath` the one its
 * configuration names (a cluster's PostgreSQL, which every node reads at once).
 */
export async function withStore(dataDirFlag: string | undefined, fn: (store: Store) => Promise<number>, configPath?: string): Promise<number> {
  const dataDir = resolveDataDir(dataDirFlag);
  const store = configPath === undefined ? openStore(dataDir) : openConfiguredStore(loadConfig(configPath), dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export async function userByEmail(store: Store, email: string): Promise<UserRecord> {
  const u = await store.getUserByEmail(email);
  if (!u) throw new Error(`no user with the email ${email} (trawl users list shows them)`);
  return u;
}

/** Refuses a name or email given on the command line that holds a control character: one line, exit 1. */
function refuseControlCharacters(flag: string, text: string | undefined): void {
  const problem = text === undefined ? undefined : controlCharacterProblem(flag, text);
  if (problem !== undefined) throw new Error(problem);
}

export function none(positionals: string[], what: string): void {
  if (positionals.length > 0) throw new UsageError(`${what} takes no arguments, got "${positionals[0]}"`);
}

export function one(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`usage: trawl ${usage}`);
  return positionals[0]!;
}
