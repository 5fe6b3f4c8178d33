// GET /api/ee/audit: the audit log for organization owners (docs/audit-log.md), newest
// first, paged like the API's other lists. Enterprise, under the org-management
// entitlement: the log is the record of managing the organization's members and their
// credentials, which that entitlement's endpoints already show owners; a license that lets
// owners manage users but not see who changed what would serve no one. Read with an API
// key or a browser session only: a scoped access token is limited to some repositories
// (the log names others), and an OAuth token is an application's, for search.

import { auditEventJson, auditQuery, type AuditFilters } from '../../audit/query.ts';
import { ServiceError } from '../../errors.ts';
import { pageHeaders, PAGE_HEADERS } from '../paging.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';
import { ownerWithEntitlement } from './entitled.ts';

export function auditRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/ee/audit',
      operationId: 'listAuditEvents',
      summary: 'The audit log: credential and administration events, newest first (owners only; org-management entitlement)',
      description:
        'Keys, scoped tokens, OAuth clients and grants, browser sessions, users, the license, and failed authentications (counted per address and credential kind per minute). ' +
        'Filters: `actor` (an email, a user id or a credential id), `action` (exact, or a prefix ending in "."), `target` (an id), `since`/`until` (inclusive). ' +
        "Owners' API keys and browser sessions only: a scoped access token or an OAuth token is 403. Not rate limited. Events older than settings.audit.retentionDays (180) are pruned.",
      tag: 'Enterprise',
      query: 'AuditQuery',
      response: { status: 200, schema: 'AuditEventsResponse', description: 'One page of events, newest first.', headers: PAGE_HEADERS },
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_QUERY_PARAMS'],
      rateLimited: false,
      authenticated: true,
      async handle(ctx) {
        await ownerWithEntitlement(s, ctx.identity, 'read the audit log');
        if (ctx.identity.kind !== 'apiKey' && ctx.identity.kind !== 'browserSession') {
          throw new ServiceError(
            'INSUFFICIENT_PERMISSIONS',
            "the audit log is read with an API key (or the web UI's session), not with a scoped access token or an OAuth token",
          );
        }
        const q = ctx.query as AuditFilters & { page: number; perPage: number };
        const query = await auditQuery(s.store, q, s.now().getTime(), { offset: (q.page - 1) * q.perPage, limit: q.perPage });
        const { events, total } = await s.store.audit.list(query);
        const emails = new Map((await s.store.listUsers()).map((u) => [u.id, u.email]));
        return {
          body: events.map((e) => auditEventJson(e, (id) => emails.get(id))),
          headers: pageHeaders({
            baseUrl: s.baseUrl,
            path: '/api/ee/audit',
            query: q as unknown as Record<string, unknown>,
            page: q.page,
            perPage: q.perPage,
            total,
          }),
        };
      },
    },
  ];
}
