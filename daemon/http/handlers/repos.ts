// GET /api/repos and GET /api/connections (docs/http-api.md section 13): only what the
// caller may see; POST /api/repos/{id}/sync: one repository fetched and indexed now.

import { ServiceError } from '../../errors.ts';
import { eventLagSeconds } from '../../sync/repo-queue.ts';
import { ownerOnly } from './entitled.ts';
import { repoWebUrl } from '../../repos/web-urls.ts';
import { pageHeaders, pageOf, PAGE_HEADERS } from '../paging.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';
import type { CatalogRepo } from '../catalog.ts';

interface ReposQuery {
  page: number;
  perPage: number;
  sort: 'name' | 'pushed';
  direction: 'asc' | 'desc';
  query?: string;
  connectionId?: number;
}

export function repoRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/repos',
      operationId: 'listRepos',
      summary: 'Indexed repositories (each with its integer id)',
      tag: 'Repositories',
      query: 'ReposQuery',
      response: { status: 200, schema: 'ReposResponse', description: 'One page of repositories.', headers: PAGE_HEADERS },
      errors: ['INVALID_QUERY_PARAMS'],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const q = ctx.query as ReposQuery;
        const needle = q.query?.toLowerCase();
        let repos = s.catalog.list().filter((r) => ctx.identity.canSee(r));
        if (needle) repos = repos.filter((r) => r.name.toLowerCase().includes(needle) || r.displayName.toLowerCase().includes(needle));
        if (q.connectionId !== undefined) repos = repos.filter((r) => r.connectionId === q.connectionId);
        repos.sort(q.sort === 'pushed' ? byPushed : byName);
        if (q.direction === 'desc') repos.reverse();
        const page = pageOf(repos, q.page, q.perPage).map((r) => repoJson(s.baseUrl, r, s.now().getTime()));
        return {
          body: page,
          headers: pageHeaders({
            baseUrl: s.baseUrl,
            path: '/api/repos',
            query: q as unknown as Record<string, unknown>,
            page: q.page,
            perPage: q.perPage,
            total: repos.length,
          }),
        };
      },
    },
    {
      method: 'POST',
      path: '/api/repos/{id}/sync',
      operationId: 'syncRepo',
      summary: 'Fetches one repository and indexes what moved, now (owners only)',
      tag: 'Repositories',
      description:
        'Queued with the other requests and webhook deliveries of the next fraction of a second (one fetch and build for all of them; docs/operations.md). 202 at once, or with wait=true, 200 once its sync has ended, with the outcome. A repository backing off after failures is tried anyway.',
      query: 'RepoSyncQuery',
      response: { status: 200, schema: 'RepoSyncResult', description: "The sync's outcome (wait=true)." },
      otherResponses: [{ status: 202, schema: 'RepoSyncQueued', description: 'Queued (without wait).' }],
      errors: ['INSUFFICIENT_PERMISSIONS', 'INVALID_QUERY_PARAMS', 'REPOSITORY_NOT_FOUND', 'REPOSITORY_NOT_SYNCABLE', 'SERVICE_UNAVAILABLE'],
      rateLimited: false,
      authenticated: true,
      async handle(ctx) {
        ownerOnly(ctx.identity, 'start a repository sync');
        const id = ctx.params.id!;
        const record = REPO_ID.test(id) ? await s.store.getRepo(Number(id)) : undefined;
        // (A repository the caller may not see is answered as one that does not exist.)
        if (record === undefined || record.state === 'deleted' || !ctx.identity.canSee(record))
          throw new ServiceError('REPOSITORY_NOT_FOUND', 'no repository with that id');
        if (s.repoSync === undefined)
          throw new ServiceError('SERVICE_UNAVAILABLE', 'this server syncs no repositories (it has no connections, or its sync is turned off)');
        const refusal = await s.repoSync.refusal(record);
        if (refusal !== undefined) throw new ServiceError('REPOSITORY_NOT_SYNCABLE', refusal);
        const done = s.repoSync.request(record.repoId);
        if ((ctx.query as { wait: boolean }).wait) {
          const r = await done;
          return {
            body: { repoId: r.repoId, repoName: record.repoName, outcome: r.outcome, ...(r.error !== undefined ? { error: r.error } : {}), seconds: r.seconds },
          };
        }
        return { status: 202, body: { repoId: record.repoId, repoName: record.repoName, queued: true } };
      },
    },
    {
      method: 'GET',
      path: '/api/connections',
      operationId: 'listConnections',
      summary: 'Configured connections that have a repository the caller may see',
      tag: 'Repositories',
      response: { status: 200, schema: 'ConnectionsResponse', description: 'The connections, by name.' },
      errors: [],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const visible = new Set(
          s.catalog
            .list()
            .filter((r) => ctx.identity.canSee(r) && r.connectionId !== undefined)
            .map((r) => r.connectionId!),
        );
        const list = ((await s.store?.listConnections()) ?? [])
          .filter((c) => visible.has(c.id))
          .map((c) => ({ id: c.id, name: c.name, connectionType: c.connectionType }));
        list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        return { body: list };
      },
    },
  ];
}

/** A repository id as the store gives them: a positive integer. */
const REPO_ID = /^[1-9][0-9]{0,9}$/;

const byName = (a: CatalogRepo, b: CatalogRepo): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.repoId - b.repoId);

/** Least recently pushed first (asc); a repository without a push time counts from when it was indexed. */
const byPushed = (a: CatalogRepo, b: CatalogRepo): number => {
  const x = a.pushedAt ?? a.indexedAt;
  const y = b.pushedAt ?? b.indexedAt;
  return x < y ? -1 : x > y ? 1 : byName(a, b);
};

function repoJson(baseUrl: string, r: CatalogRepo, now: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    codeHostType: r.codeHostType,
    repoId: r.repoId,
    repoName: r.name,
    webUrl: repoWebUrl(baseUrl, r.name),
    repoDisplayName: r.displayName,
  };
  if (r.externalWebUrl) out.externalWebUrl = r.externalWebUrl;
  if (r.imageUrl) out.imageUrl = r.imageUrl;
  out.indexedAt = r.indexedAt;
  if (r.pushedAt) out.pushedAt = r.pushedAt;
  out.defaultBranch = r.defaultBranch;
  out.isFork = r.isFork;
  out.isArchived = r.isArchived;
  out.symbolsPending = r.symbolsPending;
  out.topics = r.topics;
  const commit = r.refs[0]?.commit;
  if (commit) out.indexedCommit = commit;
  if (r.lastEventAt) {
    out.lastEventAt = r.lastEventAt;
    if (r.lastEventSyncedAt) out.lastEventSyncedAt = r.lastEventSyncedAt;
    const lag = eventLagSeconds(r.lastEventAt, r.lastEventSyncedAt, now);
    if (lag !== undefined) out.eventLagSeconds = lag;
  }
  return out;
}
