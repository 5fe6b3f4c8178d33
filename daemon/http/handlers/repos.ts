// GET /api/repos and GET /api/connections (docs/http-api.md section 13): only what the
// caller may see.

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
        const page = pageOf(repos, q.page, q.perPage).map((r) => repoJson(s.baseUrl, r));
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

const byName = (a: CatalogRepo, b: CatalogRepo): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.repoId - b.repoId);

/** Least recently pushed first (asc); a repository without a push time counts from when it was indexed. */
const byPushed = (a: CatalogRepo, b: CatalogRepo): number => {
  const x = a.pushedAt ?? a.indexedAt;
  const y = b.pushedAt ?? b.indexedAt;
  return x < y ? -1 : x > y ? 1 : byName(a, b);
};

function repoJson(baseUrl: string, r: CatalogRepo): Record<string, unknown> {
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
  return out;
}
