// Seeing, creating and ending credentials (docs/identity.md, "Seeing and ending
// credentials"): a user's API keys with what each opened that still works (scoped tokens,
// OAuth grants, browser sessions), a new key of one's own (the web UI's settings page makes
// keys with it), revoking a key (which ends all of those with it, in one store
// transaction), one OAuth grant or one browser session, and "sign out everywhere" (every
// scoped token, grant and session of the user; the keys stay).
//
// Who may call: an API key or the web UI's browser session. A delegated credential (a
// scoped access token, an OAuth token) is 403: what was handed to a program must not manage
// the credentials it came from, nor mint a longer-lived one. Members manage their own;
// owners anyone's (a new key, though, is always the caller's own). An id that is not the
// caller's is answered like an unknown one (404), so a member learns nothing of other
// users' keys, grants or sessions. No license is needed (ending a credential is never an
// enterprise feature), and none of these is rate limited: docs/http-api.md 8.9 does not
// list them, and revoking a leaked key must work when the budget is spent.
//
// A new key and each ending are recorded in the audit log in one transaction with it
// (audit/log.ts), an ending when it takes effect: api_key.created, api_key.revoked (with
// how many of each kind it ended), oauth_grant.revoked, session.ended, user.signed_out.

import { actorOf, firstTime } from '../../audit/log.ts';
import { endedAny, listKeyCredentials } from '../../auth/credential-listing.ts';
import { serverSecret } from '../../auth/credentials.ts';
import { issueApiKey } from '../../audit/key-issue.ts';
import { keyNameProblem } from '../../auth/key-name.ts';
import { ServiceError } from '../../errors.ts';
import type { Identity } from '../../auth/identity.ts';
import { API_KEY_ID, OAUTH_GRANT_ID, pathId, SESSION_ID, type IdKind } from '../path-id.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

/** What every route here is: authenticated, never rate limited (see above). */
const BASE = { tag: 'Credentials', rateLimited: false, authenticated: true } as const;

export function credentialRoutes(s: Services): Route[] {
  return [...keyRoutes(s), ...endingRoutes(s)];
}

/** A user's API keys: listing them (with what each opened), creating one, revoking one. */
function keyRoutes(s: Services): Route[] {
  return [
    {
      ...BASE,
      method: 'GET',
      path: '/api/keys',
      operationId: 'listKeys',
      summary: 'Your API keys, each with the scoped tokens, OAuth grants and browser sessions it opened that still work',
      description:
        "API key or browser session only (a scoped or OAuth token: 403). Owners may pass userId to see a member's; a member passing another id gets 404 USER_NOT_FOUND. " +
        'Live means: not revoked or ended, not expired, and the key itself not revoked. No token is shown. Not rate limited.',
      query: 'KeysQuery',
      response: { status: 200, schema: 'KeysResponse', description: 'The keys, oldest first.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_QUERY_PARAMS', 'USER_NOT_FOUND'],
      async handle(ctx) {
        const userId = await subject(s, ctx.identity, (ctx.query as { userId?: string }).userId);
        return { body: await listKeyCredentials(s.store, userId, s.now().toISOString()), headers: [['Cache-Control', 'no-store']] };
      },
    },
    {
      ...BASE,
      method: 'POST',
      path: '/api/keys',
      operationId: 'createKey',
      summary: 'Creates an API key for yourself; the key is in this answer only',
      description:
        "API key or browser session only (a scoped or OAuth token: 403): the web UI's settings page creates keys with this. " +
        'The key is shown once: only its keyed hash is stored. Recorded in the audit log (api_key.created). Not rate limited.',
      body: 'KeyCreateRequest',
      response: { status: 201, schema: 'KeyCreated', description: 'The new key, shown once, and its id.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY'],
      async handle(ctx) {
        const userId = manager(ctx.identity);
        const name = (ctx.body as { name: string }).name.trim();
        const problem = keyNameProblem(name);
        if (problem !== undefined) throw new ServiceError('INVALID_REQUEST_BODY', problem);
        // The caller's own record, for the event's email (and in case they were removed just now).
        const user = await s.store.getUser(userId);
        if (!user) throw new ServiceError('NOT_AUTHENTICATED', 'your user no longer exists');
        const { key, record } = await issueApiKey(
          { store: s.store, audit: s.audit, secret: s.secret ?? serverSecret(s.dataDir) },
          { user, name },
          { actor: actorOf(ctx.identity), sourceAddress: ctx.clientAddress, now: s.now().toISOString() },
        );
        return {
          status: 201,
          body: { id: record.id, name: record.name, key, hint: record.hint, createdAt: record.createdAt },
          headers: [['Cache-Control', 'no-store']],
        };
      },
    },
    {
      ...BASE,
      method: 'DELETE',
      path: '/api/keys/{id}',
      operationId: 'revokeKey',
      summary: 'Revokes an API key and ends everything opened with it: its scoped tokens, OAuth grants and browser sessions',
      description:
        'In one transaction; each of them is refused from the next request on (401, or invalid_grant at the OAuth token endpoint). ' +
        "API key or browser session only; members their own keys, owners anyone's (else 404 API_KEY_NOT_FOUND). Revoking the key you call with is allowed: your next request is 401. " +
        'Revoking a revoked key again keeps its revokedAt and ends anything opened since (normally nothing).',
      response: { status: 200, schema: 'KeyRevoked', description: 'Revoked; how many credentials of each kind were ended.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'API_KEY_NOT_FOUND'],
      async handle(ctx) {
        const id = idOf(ctx, API_KEY_ID);
        owned(ctx.identity, (await s.store.getApiKey(id))?.userId, API_KEY_ID, id);
        const now = s.now().toISOString();
        const revoked = await s.audit.change(
          // Read before, in the same transaction: whether this revocation is the first.
          async () => firstTime((await s.store.getApiKey(id))?.revokedAt, await s.store.revokeApiKey(id, now)),
          (r) =>
            r && (r.first || endedAny(r.ended))
              ? {
                  action: 'api_key.revoked',
                  actor: actorOf(ctx.identity),
                  target: { type: 'api_key', id: r.key.id },
                  sourceAddress: ctx.clientAddress,
                  details: { userId: r.key.userId, name: r.key.name, ended: r.ended },
                }
              : undefined,
        );
        if (!revoked) throw new ServiceError('API_KEY_NOT_FOUND', `no API key ${id}`);
        return { body: { id: revoked.key.id, revokedAt: revoked.key.revokedAt, ended: revoked.ended } };
      },
    },
  ];
}

/** Ending the credentials a key opened: one OAuth grant, one browser session, or all of a user's at once. */
function endingRoutes(s: Services): Route[] {
  return [
    {
      ...BASE,
      method: 'DELETE',
      path: '/api/oauth_grants/{id}',
      operationId: 'revokeOAuthGrant',
      summary: 'Revokes an OAuth grant: every access and refresh token of that consent stops working',
      description:
        "API key or browser session only; members their own grants, owners anyone's (else 404 OAUTH_GRANT_NOT_FOUND). Revoking one again is a 204 too.",
      response: { status: 204, description: 'Revoked.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'OAUTH_GRANT_NOT_FOUND'],
      async handle(ctx) {
        const id = idOf(ctx, OAUTH_GRANT_ID);
        owned(ctx.identity, (await s.store.oauth.getGrant(id))?.userId, OAUTH_GRANT_ID, id);
        const now = s.now().toISOString();
        await s.audit.change(
          async () => firstTime((await s.store.oauth.getGrant(id))?.revokedAt, await s.store.oauth.revokeGrant(id, now)),
          (g) =>
            g?.first
              ? {
                  action: 'oauth_grant.revoked',
                  actor: actorOf(ctx.identity),
                  target: { type: 'oauth_grant', id },
                  sourceAddress: ctx.clientAddress,
                  details: { reason: reasonOf(ctx.identity, g.userId), clientId: g.clientId, userId: g.userId },
                }
              : undefined,
        );
        return { status: 204, body: undefined };
      },
    },
    {
      ...BASE,
      method: 'DELETE',
      path: '/api/sessions/{id}',
      operationId: 'endSession',
      summary: 'Ends a browser session of the web UI (signs that browser out)',
      description:
        "API key or browser session only (a session may end itself); members their own sessions, owners anyone's (else 404 SESSION_NOT_FOUND). Ending one again is a 204 too.",
      response: { status: 204, description: 'Ended.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'SESSION_NOT_FOUND'],
      async handle(ctx) {
        const id = idOf(ctx, SESSION_ID);
        owned(ctx.identity, (await s.store.getSession(id))?.userId, SESSION_ID, id);
        const now = s.now().toISOString();
        await s.audit.change(
          async () => firstTime((await s.store.getSession(id))?.endedAt, await s.store.endSession(id, now)),
          (x) =>
            x?.first
              ? {
                  action: 'session.ended',
                  actor: actorOf(ctx.identity),
                  target: { type: 'session', id },
                  sourceAddress: ctx.clientAddress,
                  details: { reason: reasonOf(ctx.identity, x.userId), userId: x.userId },
                }
              : undefined,
        );
        return { status: 204, body: undefined };
      },
    },
    {
      ...BASE,
      method: 'POST',
      path: '/api/sign_out_everywhere',
      operationId: 'signOutEverywhere',
      summary: 'Ends every scoped token, OAuth grant and browser session of a user (yours by default); the API keys stay',
      description:
        'In one transaction. `{}` for yourself (your own browser session, if you call with one, ends too); owners may pass {"userId"} for a member ' +
        '(a member passing another id gets 404 USER_NOT_FOUND). To stop an API key too, revoke it (DELETE /api/keys/{id}).',
      body: 'SignOutRequest',
      response: { status: 200, schema: 'SignedOut', description: 'How many credentials of each kind were ended.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'USER_NOT_FOUND'],
      async handle(ctx) {
        const userId = await subject(s, ctx.identity, (ctx.body as { userId?: string }).userId);
        const ended = await s.audit.change(
          () => s.store.endUserCredentials(userId, s.now().toISOString()),
          (e) =>
            endedAny(e)
              ? {
                  action: 'user.signed_out',
                  actor: actorOf(ctx.identity),
                  target: { type: 'user', id: userId },
                  sourceAddress: ctx.clientAddress,
                  details: { ended: e },
                }
              : undefined,
        );
        return { body: { userId, ended } };
      },
    },
  ];
}

/**
 * The user whose credentials `id` (a record's userId) names, when the caller may act on
 * them; otherwise `notFound` (never "forbidden": that would confirm the id exists).
 */
function owned(identity: Identity, ownerId: string | undefined, kind: IdKind, id: string): void {
  const caller = manager(identity);
  if (ownerId === undefined || (ownerId !== caller && identity.role !== 'owner'))
    throw new ServiceError(kind.code, `no ${kind.what} ${id}${identity.role === 'owner' ? '' : ' of yours'}`);
}

/** The route's {id}, once the caller may manage credentials at all and it has the form of `kind`'s ids. */
function idOf(ctx: RouteContext, kind: IdKind): string {
  manager(ctx.identity);
  return pathId(ctx.params.id!, kind);
}

/** The user the request is about: `userId` when given (owners: anyone; members: only themselves), else the caller. */
async function subject(s: Services, identity: Identity, userId: string | undefined): Promise<string> {
  const caller = manager(identity);
  if (userId === undefined || userId === caller) return caller;
  if (identity.role !== 'owner' || !(await s.store.getUser(userId)))
    throw new ServiceError('USER_NOT_FOUND', `no user with id ${userId}${identity.role === 'owner' ? '' : ' whose credentials you may manage'}`);
  return userId;
}

/** Why a credential was ended, for the audit log: by its own user, or by an owner for a member. */
function reasonOf(identity: Identity, ownerId: string): 'user' | 'owner' {
  return identity.userId === ownerId ? 'user' : 'owner';
}

/** The caller, when they may manage credentials: an API key or a browser session. */
function manager(identity: Identity): string {
  if (identity.kind === 'anonymous' || identity.userId === undefined)
    throw new ServiceError('NOT_AUTHENTICATED', 'an API key or a browser session is needed to manage credentials');
  if (identity.kind !== 'apiKey' && identity.kind !== 'browserSession') {
    throw new ServiceError(
      'INSUFFICIENT_PERMISSIONS',
      `a ${identity.kind === 'scopedToken' ? 'scoped access token' : 'OAuth token'} cannot manage credentials: use an API key or the web UI`,
    );
  }
  return identity.userId;
}
