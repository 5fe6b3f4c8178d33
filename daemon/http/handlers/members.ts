// Organization members (docs/http-api.md section 14), for owners under the `org-management`
// entitlement: list them, read one, suspend one, make them active again, or limit their
// requests. Not rate limited (docs/http-api.md 8.9 does not list them); they need a user's
// credential. A change of a member is recorded in the audit log with it
// (audit/member-change.ts: the same rule as `trawl users suspend|unsuspend|limit`); only
// an API key or the web UI's session may make one, not a token handed to a program.

import { actorOf } from '../../audit/log.ts';
import { changeMember, type MemberChange } from '../../audit/member-change.ts';
import { ServiceError } from '../../errors.ts';
import type { UserRecord } from '../../store/store.ts';
import { ownerWithEntitlement } from './entitled.ts';
import { pathId, USER_ID } from '../path-id.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

export function memberRoutes(s: Services): Route[] {
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
        return { body: userJson(user, await s.contexts.defaultOf(user.id)) };
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
        const defaults = await s.contexts.defaults();
        return { body: (await s.store.listUsers()).map((u) => userJson(u, defaults.get(u.id))) };
      },
    },
    {
      ...base,
      method: 'PATCH',
      path: '/api/ee/users/{id}',
      operationId: 'changeUser',
      summary: 'Suspends a member, makes them active again, or sets their daily request limit (owners only; org-management entitlement)',
      description:
        "API key or browser session only (a scoped or OAuth token: 403). Fields left out stay as they are; at least one is needed. A suspended user's credentials stop working at once (401), browser sessions included; " +
        'making them active again lets their keys work again. You cannot suspend yourself (403 CANNOT_SUSPEND_SELF). ' +
        'Each change is recorded in the audit log (user.suspended, user.unsuspended, user.limit_changed); asking for what already holds changes nothing and records nothing.',
      body: 'UserChange',
      response: { status: 200, schema: 'User', description: 'The user as it is now.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'USER_NOT_FOUND', 'CANNOT_SUSPEND_SELF'],
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity, 'change users');
        if (ctx.identity.kind !== 'apiKey' && ctx.identity.kind !== 'browserSession') {
          throw new ServiceError(
            'INSUFFICIENT_PERMISSIONS',
            `a ${ctx.identity.kind === 'scopedToken' ? 'scoped access token' : 'OAuth token'} cannot change users: use an API key or the web UI`,
          );
        }
        const id = pathId(ctx.params.id!, USER_ID);
        const change = ctx.body as MemberChange;
        if (change.suspended === undefined && change.dailyLimit === undefined)
          throw new ServiceError(
            'INVALID_REQUEST_BODY',
            'say what changes: suspended (true or false), dailyLimit (an integer of at least 0, or null for the default), or both',
          );
        // Before the user is looked up: the rule does not depend on the record.
        if (change.suspended === true && id === ctx.identity.userId) {
          throw new ServiceError(
            'CANNOT_SUSPEND_SELF',
            'you cannot suspend yourself: your own credentials would stop working, and with them the way to undo it; another owner can suspend you',
          );
        }
        const user = await changeMember(s.store, s.audit, id, change, {
          actor: actorOf(ctx.identity),
          sourceAddress: ctx.clientAddress,
          now: s.now().toISOString(),
        });
        if (!user) throw new ServiceError('USER_NOT_FOUND', `no user with id ${id}`);
        return { body: userJson(user, await s.contexts.defaultOf(user.id)) };
      },
    },
  ];
}

/**
 * docs/http-api.md 2.9 plus role, dailyLimit and defaultContext; suspendedAt,
 * lastActivityAt, dailyLimit (the default applies) and defaultContext (none) are null when unset.
 */
function userJson(u: UserRecord, defaultContext: string | undefined): Record<string, unknown> {
  return {
    id: u.id,
    name: u.name,
    email: u.email,
    role: u.role,
    suspendedAt: u.suspendedAt ?? null,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
    lastActivityAt: u.lastActivityAt ?? null,
    dailyLimit: u.dailyLimit ?? null,
    defaultContext: defaultContext ?? null,
  };
}
