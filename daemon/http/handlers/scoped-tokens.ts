// Scoped access tokens (docs/http-api.md section 14): a token limited to some repositories,
// valid for one hour, created with an API key under the `scoped-access-tokens`
// entitlement and revoked with the API key of its user. Not rate limited (docs/http-api.md
// 8.9 does not list them). Creating and revoking one is recorded in the audit log with the change,
// and a refusal of an authenticated caller as a failure (audit/).

import type { AuditAction, AuditEntry } from '../../audit/events.ts';
import { actorOf, firstTime } from '../../audit/log.ts';
import { credentialHash, newScopedToken, SCOPED_TOKEN_LIFETIME_MS, serverSecret } from '../../auth/credentials.ts';
import type { Identity } from '../../auth/identity.ts';
import { ServiceError } from '../../errors.ts';
import { entitled } from './entitled.ts';
import { isPathId, pathId, SCOPED_TOKEN_ID } from '../path-id.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

export function scopedTokenRoutes(s: Services): Route[] {
  const base = { tag: 'Enterprise', rateLimited: false, authenticated: true } as const;
  return [
    {
      ...base,
      method: 'POST',
      path: '/api/ee/scoped_access_token',
      operationId: 'createScopedAccessToken',
      summary: 'A token limited to some repositories, valid for exactly one hour (API key only; scoped-access-tokens entitlement)',
      body: 'ScopedTokenRequest',
      response: { status: 201, schema: 'ScopedTokenResponse', description: 'The token, shown once, and its id.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'INVALID_REPOSITORY_SCOPE'],
      handle: (ctx) =>
        refusalNoted(s, ctx, 'scoped_token.created', undefined, async () => {
          const caller = apiKeyCaller(ctx.identity, 'create');
          await entitled(s, 'scoped-access-tokens');
          const ids = [...new Set((ctx.body as { repoIds: number[] }).repoIds)];
          const visible = new Set(
            s.catalog
              .list()
              .filter((r) => ctx.identity.canSee(r))
              .map((r) => r.repoId),
          );
          const outside = ids.filter((id) => !visible.has(id));
          if (outside.length > 0) {
            throw new ServiceError(
              'INVALID_REPOSITORY_SCOPE',
              `repository id${outside.length === 1 ? '' : 's'} ${outside.slice(0, 20).join(', ')} ${outside.length === 1 ? 'is' : 'are'} not among the repositories you can see (GET /api/repos lists them)`,
            );
          }
          const now = s.now();
          const token = newScopedToken();
          const hash = credentialHash(s.secret ?? serverSecret(s.dataDir), token);
          const record = await s.audit.change(
            // The key it is created with (identity.tokenId): revoking that key ends the token (auth/origin.ts).
            () =>
              s.store.createScopedToken(
                {
                  userId: caller,
                  apiKeyId: ctx.identity.tokenId!,
                  hash,
                  repoIds: ids,
                  expiresAt: new Date(now.getTime() + SCOPED_TOKEN_LIFETIME_MS).toISOString(),
                },
                now.toISOString(),
              ),
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
      handle: (ctx) =>
        refusalNoted(
          s,
          ctx,
          'scoped_token.revoked',
          isPathId(ctx.params.id!, SCOPED_TOKEN_ID) ? { type: 'scoped_token', id: ctx.params.id! } : undefined,
          async () => {
            const caller = apiKeyCaller(ctx.identity, 'revoke');
            const id = pathId(ctx.params.id!, SCOPED_TOKEN_ID);
            const token = await s.store.getScopedToken(id);
            // Another user's token is not revealed to exist.
            if (!token || token.userId !== caller) throw new ServiceError('SCOPED_ACCESS_TOKEN_NOT_FOUND', `no scoped access token ${id} of yours`);
            const now = s.now().toISOString();
            // Recorded when it takes effect: revoking a revoked token again changes nothing.
            await s.audit.change(
              async () => firstTime((await s.store.getScopedToken(id))?.revokedAt, await s.store.revokeScopedToken(id, now)),
              (t) =>
                t?.first
                  ? { action: 'scoped_token.revoked', actor: actorOf(ctx.identity), target: { type: 'scoped_token', id }, sourceAddress: ctx.clientAddress }
                  : undefined,
            );
            return { status: 204, body: undefined };
          },
        ),
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
      void s.audit.note({
        action,
        outcome: 'failure',
        actor: actorOf(ctx.identity),
        ...(target ? { target } : {}),
        sourceAddress: ctx.clientAddress,
        details: { errorCode: err.errorCode },
      });
    }
    throw err;
  }
}

/** The user behind an API key (whose id is identity.tokenId); anonymous 401, any other credential 403. */
function apiKeyCaller(identity: Identity, what: 'create' | 'revoke'): string {
  if (identity.kind === 'anonymous' || identity.userId === undefined)
    throw new ServiceError('NOT_AUTHENTICATED', `an API key is needed to ${what} scoped access tokens`);
  if (identity.kind !== 'apiKey' || identity.tokenId === undefined)
    throw new ServiceError(
      'INSUFFICIENT_PERMISSIONS',
      `only an API key can ${what} scoped access tokens, not a ${identity.kind === 'scopedToken' ? 'scoped access token' : 'token of this kind'}`,
    );
  return identity.userId;
}
