// Enterprise endpoints (API-DETAILS.md section 5): organization members for owners
// (`org-management` entitlement: list, read, suspend or limit them) and scoped access
// tokens (`scoped-access-tokens`).
// Neither is rate limited (API.md 8.9 does not list them); both need a user's credential.
// Creating and revoking a scoped token is recorded in the audit log with the change, and a
// refusal of an authenticated caller as a failure (audit/). A change of a member is
// recorded with it too (audit/member-change.ts: the same rule as `trawl users suspend|
// unsuspend|limit`); only an API key or the web UI's session may make one, not a token
// handed to a program.

import type { AuditAction, AuditEntry } from '../../audit/events.ts';
import { actorOf, firstTime } from '../../audit/log.ts';
import { credentialHash, newScopedToken, SCOPED_TOKEN_LIFETIME_MS, serverSecret } from '../../auth/credentials.ts';
import { changeMember, type MemberChange } from '../../audit/member-change.ts';
import { ServiceError } from '../../errors.ts';
import type { UserRecord } from '../../store/store.ts';
import type { Identity } from '../../auth/identity.ts';
import { isPathId, pathId, SCOPED_TOKEN_ID, USER_ID } from '../path-id.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

export function eeRoutes(s: Services): Route[] {
  const base = { tag: 'Enterprise', rateLimited: false, authenticated: true } as const;
  return [
    {
      ...base,
      method: 'GET',
      path: '/api/ee/user',
      operationId: 'getUser',
      summary: 'One organization member (owners only; org-management entitlement)',
      query: 'EeUserQuery',
      response: { status: 200, schema: 'User', description: 'The user.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'INVALID_QUERY_PARAMS', 'USER_NOT_FOUND'],
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity);
        const id = (ctx.query as { userId: string }).userId;
        const user = await s.store.getUser(id);
        if (!user) throw new ServiceError('USER_NOT_FOUND', `no user with id ${id}`);
        return { body: userJson(user) };
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/api/ee/users',
      operationId: 'listUsers',
      summary: 'Every organization member (owners only; org-management entitlement)',
      query: 'EmptyQuery',
      response: { status: 200, schema: 'UsersResponse', description: 'The users, by email.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_QUERY_PARAMS'],
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity);
        return { body: (await s.store.listUsers()).map(userJson) };
      },
    },
    {
      ...base,
      method: 'PATCH',
      path: '/api/ee/users/{id}',
      operationId: 'changeUser',
      summary: 'Suspends a member, makes them active again, or sets their daily request limit (owners only; org-management entitlement)',
      description:
        'API key or browser session only (a scoped or OAuth token: 403). Fields left out stay as they are; at least one is needed. A suspended user\'s credentials stop working at once (401), browser sessions included; ' +
        'making them active again lets their keys work again. You cannot suspend yourself (403 CANNOT_SUSPEND_SELF). ' +
        'Each change is recorded in the audit log (user.suspended, user.unsuspended, user.limit_changed); asking for what already holds changes nothing and records nothing.',
      body: 'UserChange',
      response: { status: 200, schema: 'User', description: 'The user as it is now.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'USER_NOT_FOUND', 'CANNOT_SUSPEND_SELF'],
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity, 'change users');
        if (ctx.identity.kind !== 'apiKey' && ctx.identity.kind !== 'browserSession') {
          throw new ServiceError('INSUFFICIENT_PERMISSIONS', `a ${ctx.identity.kind === 'scopedToken' ? 'scoped access token' : 'OAuth token'} cannot change users: use an API key or the web UI`);
        }
        const id = pathId(ctx.params.id!, USER_ID);
        const change = ctx.body as MemberChange;
        if (change.suspended === undefined && change.dailyLimit === undefined) throw new ServiceError('INVALID_REQUEST_BODY', 'say what changes: suspended (true or false), dailyLimit (an integer of at least 0, or null for the default), or both');
        // Before the user is looked up: the rule does not depend on the record.
        if (change.suspended === true && id === ctx.identity.userId) {
          throw new ServiceError('CANNOT_SUSPEND_SELF', 'you cannot suspend yourself: your own credentials would stop working, and with them the way to undo it; another owner can suspend you');
        }
        const user = await changeMember(s.store, s.audit, id, change, { actor: actorOf(ctx.identity), sourceAddress: ctx.clientAddress, now: s.now().toISOString() });
        if (!user) throw new ServiceError('USER_NOT_FOUND', `no user with id ${id}`);
        return { body: userJson(user) };
      },
    },
    {
      ...base,
      method: 'POST',
      path: '/api/ee/scoped_access_token',
      operationId: 'createScopedAccessToken',
      summary: 'A token limited to some repositories, valid for exactly one hour (API key only; scoped-access-tokens entitlement)',
      body: 'ScopedTokenRequest',
      response: { status: 201, schema: 'ScopedTokenResponse', description: 'The token, shown once, and its id.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'INVALID_REPOSITORY_SCOPE'],
      handle: (ctx) => refusalNoted(s, ctx, 'scoped_token.created', undefined, async () => {
        const caller = apiKeyCaller(ctx.identity, 'create');
        await entitled(s, 'scoped-access-tokens');
        const ids = [...new Set((ctx.body as { repoIds: number[] }).repoIds)];
        const visible = new Set(s.catalog.list().filter((r) => ctx.identity.canSee(r)).map((r) => r.repoId));
        const outside = ids.filter((id) => !visible.has(id));
        if (outside.length > 0) {
          throw new ServiceError('INVALID_REPOSITORY_SCOPE', `repository id${outside.length === 1 ? '' : 's'} ${outside.slice(0, 20).join(', ')} ${outside.length === 1 ? 'is' : 'are'} not among the repositories you can see (GET /api/repos lists them)`);
        }
        const now = s.now();
        const token = newScopedToken();
        const hash = credentialHash(s.secret ?? serverSecret(s.dataDir), token);
        const record = await s.audit.change(
          // The key it is created with (identity.tokenId): revoking that key ends the token (auth/origin.ts).
          () => s.store.createScopedToken({ userId: caller, apiKeyId: ctx.identity.tokenId!, hash, repoIds: ids, expiresAt: new Date(now.getTime() + SCOPED_TOKEN_LIFETIME_MS).toISOString() }, now.toISOString()),
          (t) => ({
            action: 'scoped_token.created',
            actor: actorOf(ctx.identity),
            target: { type: 'scoped_token', id: t.id },
            sourceAddress: ctx.clientAddress,
            // Small: the first hundred ids and the count.
            details: { repoIds: t.repoIds.slice(0, MAX_DETAIL_IDS), repoCount: t.repoIds.length, expiresAt: t.expiresAt },
          }),
        );
        return { status: 201, body: { id: record.id, token, createdAt: record.createdAt, expiresAt: record.expiresAt, repoIds: record.repoIds } };
      }),
    },
    {
      ...base,
      method: 'DELETE',
      path: '/api/ee/scoped_access_token/{id}',
      operationId: 'revokeScopedAccessToken',
      summary: 'Revokes one of your scoped access tokens at once (API key only)',
      response: { status: 204, description: 'Revoked (also when it had expired or was revoked before).' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'SCOPED_ACCESS_TOKEN_NOT_FOUND'],
      // A refusal names the token only when the path holds a token's id: nothing else of the
      // request goes into the log.
      handle: (ctx) => refusalNoted(s, ctx, 'scoped_token.revoked', isPathId(ctx.params.id!, SCOPED_TOKEN_ID) ? { type: 'scoped_token', id: ctx.params.id! } : undefined, async () => {
        const caller = apiKeyCaller(ctx.identity, 'revoke');
        const id = pathId(ctx.params.id!, SCOPED_TOKEN_ID);
        const token = await s.store.getScopedToken(id);
        // Another user's token is not revealed to exist.
        if (!token || token.userId !== caller) throw new ServiceError('SCOPED_ACCESS_TOKEN_NOT_FOUND', `no scoped access token ${id} of yours`);
        const now = s.now().toISOString();
        // Recorded when it takes effect: revoking a revoked token again changes nothing.
        await s.audit.change(
          async () => firstTime((await s.store.getScopedToken(id))?.revokedAt, await s.store.revokeScopedToken(id, now)),
          (t) => (t?.first ? { action: 'scoped_token.revoked', actor: actorOf(ctx.identity), target: { type: 'scoped_token', id }, sourceAddress: ctx.clientAddress } : undefined),
        );
        return { status: 204, body: undefined };
      }),
    },
  ];
}

/** Repository ids (and the like) an event's details hold at most; the count is given beside them. */
const MAX_DETAIL_IDS = 100;

/**
 * Runs an audited action's handler. When it refuses an authenticated caller (a 4xx other
 * than 401: not entitled, not their token, out of their reach), the attempt is recorded as
 * the action's failure, with the error code. Best-effort: the refusal is answered whatever
 * happens to the record.
 */
async function refusalNoted<T>(s: Services, ctx: RouteContext, action: AuditAction, target: AuditEntry['target'], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ServiceError && err.statusCode >= 400 && err.statusCode < 500 && err.statusCode !== 401 && ctx.identity.userId !== undefined) {
      void s.audit.note({ action, outcome: 'failure', actor: actorOf(ctx.identity), ...(target ? { target } : {}), sourceAddress: ctx.clientAddress, details: { errorCode: err.errorCode } });
    }
    throw err;
  }
}

/** The user behind an API key (whose id is identity.tokenId); anonymous 401, any other credential 403. */
function apiKeyCaller(identity: Identity, what: 'create' | 'revoke'): string {
  if (identity.kind === 'anonymous' || identity.userId === undefined) throw new ServiceError('NOT_AUTHENTICATED', `an API key is needed to ${what} scoped access tokens`);
  if (identity.kind !== 'apiKey' || identity.tokenId === undefined) throw new ServiceError('INSUFFICIENT_PERMISSIONS', `only an API key can ${what} scoped access tokens, not a ${identity.kind === 'scopedToken' ? 'scoped access token' : 'token of this kind'}`);
  return identity.userId;
}

/** Owners with the org-management entitlement: 401 anonymous, 403 without the license or the role (`what`: what they may do). */
export async function ownerWithEntitlement(s: Services, identity: Identity, what = 'list or read users'): Promise<void> {
  if (identity.kind === 'anonymous' || identity.userId === undefined) throw new ServiceError('NOT_AUTHENTICATED', 'this endpoint needs the credential of an organization owner');
  await entitled(s, 'org-management');
  if (identity.role !== 'owner') throw new ServiceError('INSUFFICIENT_PERMISSIONS', `only organization owners may ${what}`);
}

/** 403 naming the entitlement and why it is missing, unless the installed, active license grants it. */
async function entitled(s: Services, entitlement: string): Promise<void> {
  const off = await s.entitlements.missing(entitlement);
  if (off) throw new ServiceError('INSUFFICIENT_PERMISSIONS', `this endpoint needs an active license with the "${entitlement}" entitlement (${off})`);
}

/** API.md 2.9 plus role and dailyLimit; suspendedAt, lastActivityAt and dailyLimit (the default applies) are null when unset. */
function userJson(u: UserRecord): Record<string, unknown> {
  return { id: u.id, name: u.name, email: u.email, role: u.role, suspendedAt: u.suspendedAt ?? null, createdAt: u.createdAt, updatedAt: u.updatedAt, lastActivityAt: u.lastActivityAt ?? null, dailyLimit: u.dailyLimit ?? null };
}
