// Search contexts (docs/identity.md "Search contexts", docs/http-api.md 4.8): anyone who may
// search lists them and reads one with the repositories it holds that they may see;
// organization owners create, replace and delete the ones made through the API (those of
// the configuration file are read-only here: 409 CONTEXT_READ_ONLY); each user reads and
// sets their own default context, which their searches use when the query names none.
//
// Changing anything takes an owner's or the user's API key or browser session: a scoped or
// OAuth token, handed to a program, is 403, as for the other settings of the organization
// (handlers/members.ts). No license is needed, and none of these is rate limited
// (docs/http-api.md 8.9 does not list them).

import { actorOf } from '../../audit/log.ts';
import type { Identity } from '../../auth/identity.ts';
import type { WrittenContext } from '../../config/contexts.ts';
import type { ContextSelection } from '../../config/types.ts';
import { ServiceError } from '../../errors.ts';
import { contextPathName, notFound, type ContextView } from '../contexts.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

const BASE = { tag: 'Search contexts', rateLimited: false, authenticated: true } as const;

export function contextRoutes(s: Services): Route[] {
  return [
    {
      ...BASE,
      method: 'GET',
      path: '/api/contexts',
      operationId: 'listContexts',
      summary: 'Every search context, by name',
      description:
        'Those of the configuration file (`source: "configuration"`) and those made through the API (`"api"`). A query limits its search to one with `context:NAME`.',
      query: 'EmptyQuery',
      response: { status: 200, schema: 'ContextsResponse', description: 'The contexts, by name.' },
      errors: ['INVALID_QUERY_PARAMS'],
      async handle() {
        return { body: (await s.contexts.list()).map(contextJson) };
      },
    },
    {
      ...BASE,
      method: 'GET',
      path: '/api/contexts/{name}',
      operationId: 'getContext',
      summary: 'One search context, with the repositories it holds that you may see',
      description: 'The repositories are resolved now, as a search would resolve them, and only those the caller may see are named.',
      response: { status: 200, schema: 'ContextDetail', description: 'The context.' },
      errors: ['CONTEXT_NOT_FOUND'],
      async handle(ctx) {
        const name = contextPathName(ctx.params.name!);
        const view = await s.contexts.find(name);
        if (!view) throw notFound(name);
        const ids = await s.contexts.repoIds(view.definition);
        const repositories = s.catalog
          .list()
          .filter((r) => ids.has(r.repoId) && ctx.identity.canSee(r))
          .map((r) => r.name);
        return { body: { ...contextJson(view), repositories } };
      },
    },
    {
      ...BASE,
      method: 'PUT',
      path: '/api/contexts/{name}',
      operationId: 'putContext',
      summary: 'Creates or replaces a search context (owners only)',
      description:
        'The body is the whole definition (what it leaves out, the context no longer has). A name is a lower-case letter or digit followed by up to 63 lower-case letters, digits, ".", "_" or "-"; "global" is reserved. ' +
        'A connection must be one of the configuration. A context of the configuration file cannot be changed here (409 CONTEXT_READ_ONLY). An API key or browser session of an owner only.',
      body: 'ContextDefinition',
      response: { status: 201, schema: 'Context', description: 'Created.' },
      otherResponses: [{ status: 200, schema: 'Context', description: 'Replaced.' }],
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'INVALID_CONTEXT_NAME', 'CONTEXT_READ_ONLY'],
      async handle(ctx) {
        owner(ctx.identity, 'create or replace search contexts');
        const { view, created } = await s.audit.change(
          () => s.contexts.put(ctx.params.name!, ctx.body as WrittenContext, s.now().toISOString()),
          (r) => ({
            action: 'search_context.saved',
            actor: actorOf(ctx.identity),
            target: { type: 'search_context', id: r.view.name },
            sourceAddress: ctx.clientAddress,
            details: { created: r.created },
          }),
        );
        return { status: created ? 201 : 200, body: contextJson(view) };
      },
    },
    {
      ...BASE,
      method: 'DELETE',
      path: '/api/contexts/{name}',
      operationId: 'deleteContext',
      summary: 'Deletes a search context made through the API (owners only)',
      description:
        'The default context of every user who had chosen it is cleared with it. A context of the configuration file cannot be deleted here (409 CONTEXT_READ_ONLY). An API key or browser session of an owner only.',
      response: { status: 204, description: 'Deleted.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'CONTEXT_NOT_FOUND', 'CONTEXT_READ_ONLY'],
      async handle(ctx) {
        owner(ctx.identity, 'delete search contexts');
        const name = contextPathName(ctx.params.name!);
        await s.audit.change(
          () => s.contexts.delete(name),
          (r) => ({
            action: 'search_context.deleted',
            actor: actorOf(ctx.identity),
            target: { type: 'search_context', id: name },
            sourceAddress: ctx.clientAddress,
            details: { clearedDefaults: r.clearedDefaults },
          }),
        );
        return { status: 204, body: undefined };
      },
    },
    {
      ...BASE,
      method: 'GET',
      path: '/api/default_context',
      operationId: 'getDefaultContext',
      summary: 'Your default search context',
      description:
        'Your searches whose query names no context (`context:`) are limited to it. null: none. Any credential of a user; anonymous callers have none (401).',
      query: 'EmptyQuery',
      response: { status: 200, schema: 'DefaultContext', description: 'The default context, or null.' },
      errors: ['INVALID_QUERY_PARAMS'],
      async handle(ctx) {
        const userId = user(ctx.identity, 'sign in: a default context belongs to a user');
        return { body: { context: (await s.contexts.defaultOf(userId)) ?? null } };
      },
    },
    {
      ...BASE,
      method: 'PUT',
      path: '/api/default_context',
      operationId: 'setDefaultContext',
      summary: 'Sets your default search context, or clears it',
      description:
        'A context that exists (else 400 UNKNOWN_CONTEXT), or null (or "global") for none. Deleting the context clears it. An API key or browser session only (a scoped or OAuth token: 403).',
      body: 'DefaultContextChange',
      response: { status: 200, schema: 'DefaultContext', description: 'The default context as it is now.' },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_REQUEST_BODY', 'UNKNOWN_CONTEXT'],
      async handle(ctx) {
        const userId = changer(ctx.identity, 'change your default context', 'sign in: a default context belongs to a user');
        const chosen = (ctx.body as { context: string | null }).context;
        const now = await s.contexts.setDefault(userId, chosen ?? undefined, s.now().toISOString());
        return { body: { context: now ?? null } };
      },
    },
  ];
}

/**
 * A context as the API answers it (schemas/contexts.ts Context): its definition's fields
 * beside its name, each selection with its non-empty lists only, as a request writes it.
 */
function contextJson(v: ContextView): Record<string, unknown> {
  const out: Record<string, unknown> = { name: v.name };
  const { description, include, exclude } = v.definition;
  if (description !== undefined) out.description = description;
  if (include) out.include = written(include);
  if (exclude) out.exclude = written(exclude);
  out.source = v.source;
  if (v.createdAt !== undefined) out.createdAt = v.createdAt;
  if (v.updatedAt !== undefined) out.updatedAt = v.updatedAt;
  return out;
}

function written(s: ContextSelection): Partial<ContextSelection> {
  return Object.fromEntries(Object.entries(s).filter(([, list]) => list.length > 0));
}

/** The caller's user id: 401 for an anonymous caller (`why`: what the 401 says). */
function user(identity: Identity, why: string): string {
  if (identity.kind === 'anonymous' || identity.userId === undefined) throw new ServiceError('NOT_AUTHENTICATED', why);
  return identity.userId;
}

/** The caller's user id, when the credential may change settings: an API key or the web UI's session (`what`: what they would do). */
function changer(identity: Identity, what: string, why: string): string {
  const id = user(identity, why);
  if (identity.kind !== 'apiKey' && identity.kind !== 'browserSession')
    throw new ServiceError(
      'INSUFFICIENT_PERMISSIONS',
      `a ${identity.kind === 'scopedToken' ? 'scoped access token' : 'OAuth token'} cannot ${what}: use an API key or the web UI`,
    );
  return id;
}

/** An organization owner with an API key or browser session. */
function owner(identity: Identity, what: string): void {
  changer(identity, what, 'this endpoint needs the credential of an organization owner');
  if (identity.role !== 'owner') throw new ServiceError('INSUFFICIENT_PERMISSIONS', `only organization owners may ${what}`);
}
