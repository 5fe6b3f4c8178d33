// The permission sync and members' code-host accounts (docs/http-api.md 4.8 and section 14), for
// owners under the `org-management` entitlement: where the sync stands per connection
// (what it asked, what fails and why), a sync now, and linking a member to their login on
// a connection's host. A member may list their own linked accounts. Changes are recorded
// in the audit log (permissions/account-links.ts); like member changes, only an API key or
// the web UI's session may make them.

import { actorOf } from '../../audit/log.ts';
import type { Identity } from '../../auth/identity.ts';
import { ServiceError } from '../../errors.ts';
import type { AccountLinks, LinkedAccount } from '../../permissions/account-links.ts';
import type { PermissionSyncScheduler } from '../../permissions/permission-scheduler.ts';
import type { Store } from '../../store/store.ts';
import { ownerWithEntitlement } from './entitled.ts';
import { pathId, USER_ID } from '../path-id.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

/** What the routes act through: the daemon's scheduler and account links. */
export interface PermissionParts {
  scheduler: PermissionSyncScheduler;
  links: AccountLinks;
}

/** Failures listed per connection in the status, newest first. */
const ERRORS_SHOWN = 20;

export function permissionRoutes(s: Services, parts: PermissionParts): Route[] {
  const base = { tag: 'Enterprise', rateLimited: false, authenticated: true } as const;
  return [
    {
      ...base,
      method: 'GET',
      path: '/api/ee/permissions',
      operationId: 'getPermissionSync',
      summary: 'Where the permission sync stands, per connection (owners only; org-management entitlement)',
      description:
        'With settings.permissions "code-host": per connection whose code host has a permission API, the accounts linked and the private repositories, how many of each were synced and how many fail now, the latest failures, and the last pass.',
      query: 'PermissionStatusQuery',
      response: { status: 200, schema: 'PermissionStatus', description: 'The status.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_QUERY_PARAMS'],
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity, 'read the permission sync');
        return { body: await status(s, parts, (ctx.query as { repositories: boolean }).repositories) };
      },
    },
    {
      ...base,
      method: 'POST',
      path: '/api/ee/permissions/sync',
      operationId: 'syncPermissions',
      summary: 'Asks the code hosts about permissions now (owners only; org-management entitlement)',
      description:
        "Everything due (default), everything (force), one member (userId) or one repository (repo). 202 at once, or with wait: true, 200 and the pass's report when it has ended. A pass already running is joined (or, for one member or repository, followed).",
      body: 'PermissionSyncRequest',
      response: { status: 200, schema: 'PermissionSyncReport', description: 'The report of the pass (wait: true); 202 without a body otherwise.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'USER_NOT_FOUND', 'REPOSITORY_NOT_FOUND'],
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity, 'start a permission sync');
        const body = ctx.body as { userId?: string; repo?: string; force?: boolean; wait?: boolean };
        if (body.userId !== undefined && body.repo !== undefined)
          throw new ServiceError('INVALID_REQUEST_BODY', 'name a member (userId) or a repository (repo), not both');
        const only: { userId?: string; repoId?: number } = {};
        if (body.userId !== undefined) {
          const user = await s.store.getUser(pathId(body.userId, USER_ID));
          if (!user) throw new ServiceError('USER_NOT_FOUND', `no user with id ${body.userId}`);
          only.userId = user.id;
        }
        if (body.repo !== undefined) {
          const repo = await s.store.getRepoByName(body.repo);
          if (!repo) throw new ServiceError('REPOSITORY_NOT_FOUND', `no repository named ${body.repo}`);
          only.repoId = repo.repoId;
        }
        const pass = parts.scheduler.runNow({ ...(Object.keys(only).length > 0 ? { only } : {}), ...(body.force === true ? { force: true } : {}) });
        if (body.wait === true) return { body: await pass };
        pass.catch((err: Error) => ctx.log.error({ err: err.message }, 'permission sync pass failed'));
        return { status: 202, body: undefined };
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/api/ee/users/{id}/accounts',
      operationId: 'listLinkedAccounts',
      summary: "A member's linked code-host accounts (owners; a member their own)",
      description: "A member asking for another member's accounts gets 404 USER_NOT_FOUND, as if there were none.",
      response: { status: 200, schema: 'LinkedAccounts', description: 'The accounts, by connection.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'USER_NOT_FOUND'],
      async handle(ctx) {
        const id = pathId(ctx.params.id!, USER_ID);
        await ownOrOwner(s, ctx.identity, id);
        return { body: await accountsWithState(s.store, await parts.links.list(id)) };
      },
    },
    {
      ...base,
      method: 'POST',
      path: '/api/ee/users/{id}/accounts',
      operationId: 'linkAccount',
      summary: "Links a member to their login on a connection's code host (owners only; org-management entitlement)",
      description:
        "The host is asked for the account with that login (502 CODE_HOST_UNAVAILABLE when it cannot be asked). A link the member had on the connection is replaced. The member's permissions are synced right after. API key or browser session only.",
      body: 'AccountLink',
      response: { status: 201, schema: 'LinkedAccount', description: 'The link.' },
      errors: [
        'INSUFFICIENT_PERMISSIONS',
        'INVALID_REQUEST_BODY',
        'USER_NOT_FOUND',
        'CONNECTION_NOT_FOUND',
        'HOST_ACCOUNT_NOT_FOUND',
        'HOST_ACCOUNT_LINKED_ELSEWHERE',
        'CODE_HOST_UNAVAILABLE',
      ],
      async handle(ctx) {
        await ownerChanging(s, ctx.identity);
        const id = pathId(ctx.params.id!, USER_ID);
        if (!(await s.store.getUser(id))) throw new ServiceError('USER_NOT_FOUND', `no user with id ${id}`);
        const { connection, login } = ctx.body as { connection: string; login: string };
        const linked = await parts.links.linkByLogin(actorOf(ctx.identity), id, connection, login, ctx.clientAddress || undefined);
        return { status: 201, body: (await accountsWithState(s.store, [linked]))[0] };
      },
    },
    {
      ...base,
      method: 'DELETE',
      path: '/api/ee/users/{id}/accounts/{connection}',
      operationId: 'unlinkAccount',
      summary: "Unlinks a member's code-host account on a connection (owners only; org-management entitlement)",
      description: 'What the account could read no longer counts for the member, at once. API key or browser session only.',
      response: { status: 204, description: 'Unlinked.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'USER_NOT_FOUND', 'HOST_ACCOUNT_NOT_FOUND'],
      async handle(ctx) {
        await ownerChanging(s, ctx.identity);
        const id = pathId(ctx.params.id!, USER_ID);
        const connection = ctx.params.connection!;
        if (!(await parts.links.unlink(actorOf(ctx.identity), id, connection, ctx.clientAddress || undefined)))
          throw new ServiceError('HOST_ACCOUNT_NOT_FOUND', `no account of ${id} is linked on connection "${connection}"`);
        return { status: 204, body: undefined };
      },
    },
  ];
}

/** An owner acting with an API key or the web UI's session (a token handed to a program may not change members). */
async function ownerChanging(s: Services, identity: Identity): Promise<void> {
  await ownerWithEntitlement(s, identity, "change members' linked accounts");
  if (identity.kind !== 'apiKey' && identity.kind !== 'browserSession') {
    throw new ServiceError('INSUFFICIENT_PERMISSIONS', "a token cannot change members' linked accounts: use an API key or the web UI");
  }
}

/** The member themself, or an owner with the entitlement; another member's id is 404 for a member. */
async function ownOrOwner(s: Services, identity: Identity, userId: string): Promise<void> {
  if (identity.kind === 'anonymous' || identity.userId === undefined) throw new ServiceError('NOT_AUTHENTICATED', 'this endpoint needs a member credential');
  if (identity.userId !== userId) {
    if (identity.role !== 'owner') throw new ServiceError('USER_NOT_FOUND', `no user with id ${userId} whose accounts you may read`);
    await ownerWithEntitlement(s, identity, "read members' linked accounts");
  }
  if (!(await s.store.getUser(userId))) throw new ServiceError('USER_NOT_FOUND', `no user with id ${userId}`);
}

async function accountsWithState(store: Store, accounts: LinkedAccount[]): Promise<unknown[]> {
  const states = new Map((await store.permissions.accountSyncStates(accounts[0]?.userId)).map((st) => [`${st.userId}\n${st.connection}`, st]));
  return accounts.map((a) => {
    const st = states.get(`${a.userId}\n${a.connection}`);
    return { ...a, permissionsSyncedAt: st?.syncedAt ?? null, permissionsError: st?.error ?? null };
  });
}

async function status(s: Services, parts: PermissionParts, perRepository: boolean): Promise<unknown> {
  const { store, config } = s;
  const sched = parts.scheduler.status();
  const connections = await store.listConnections();
  const accountStates = await store.permissions.accountSyncStates();
  const repoStates = new Map((await store.permissions.repoSyncStates()).map((st) => [st.repoId, st]));
  const out = [];
  for (const [name, connection] of Object.entries(config.connections)) {
    if (connection.type === 'git') continue;
    const accounts = await store.permissions.listAccounts({ connection: name });
    const record = connections.find((c) => c.name === name);
    const repos =
      record === undefined ? [] : (await store.listRepos({ connectionId: record.id })).filter((r) => r.state !== 'deleted' && r.visibility === 'private');
    const mine = accountStates.filter((st) => st.connection === name);
    const errors = [
      ...mine.filter((st) => st.error !== undefined).map((st) => ({ subject: `member ${st.userId}`, error: st.error!, at: st.errorAt! })),
      ...repos.flatMap((r) => {
        const st = repoStates.get(r.repoId);
        return st?.error === undefined ? [] : [{ subject: `repository ${r.repoName}`, error: st.error, at: st.errorAt! }];
      }),
    ]
      .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0))
      .slice(0, ERRORS_SHOWN);
    out.push({
      connection: name,
      type: connection.type,
      accounts: accounts.length,
      accountsSynced: mine.filter((st) => st.syncedAt !== undefined).length,
      accountsFailing: mine.filter((st) => st.error !== undefined).length,
      privateRepositories: repos.length,
      repositoriesSynced: repos.filter((r) => repoStates.get(r.repoId)?.syncedAt !== undefined).length,
      repositoriesFailing: repos.filter((r) => repoStates.get(r.repoId)?.error !== undefined).length,
      ...(perRepository
        ? {
            repositories: repos.map((r) => ({
              repoName: r.repoName,
              permissionsSyncedAt: repoStates.get(r.repoId)?.syncedAt ?? null,
              permissionsError: repoStates.get(r.repoId)?.error ?? null,
            })),
          }
        : {}),
      errors,
    });
  }
  return {
    mode: config.settings.permissions,
    intervalMs: config.settings.permissionSyncIntervalMs,
    running: sched.running,
    nextAt: sched.nextAt ?? null,
    last: sched.last ?? null,
    connections: out,
  };
}
