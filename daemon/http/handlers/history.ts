// Git history (docs/http-api.md section 13): GET /api/blame, /api/diff, /api/commit,
// /api/commits and /api/commits/authors, read through nodegit (repos/history.ts, blame.ts, diff.ts) for any
// repository the caller may see, at its indexed branches, its tags and the commits they
// reach (repos/revision.ts). Lists are paged with X-Total-Count and Link headers. In a
// cluster each runs on a node that can read the repository's git (forward.ts).

import { ServiceError } from '../../errors.ts';
import { blame } from '../../repos/blame.ts';
import { diff } from '../../repos/diff.ts';
import { authors, commitInfo, commits } from '../../repos/history.ts';
import type { CatalogRepo } from '../catalog.ts';
import { pageHeaders, PAGE_HEADERS } from '../paging.ts';
import { readingRepository } from '../forward.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';
import { gitDir, revisionScope } from './browse.ts';

const HISTORY_ERRORS = ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'INVALID_GIT_REF', 'REPOSITORY_NOT_FOUND'] as const;

type Q = Record<string, string | number | undefined>;

export function historyRoutes(s: Services): Route[] {
  const repoOf = (name: string, ctx: Parameters<Route['handle']>[0]): { repo: CatalogRepo; dir: string } => {
    const repo = s.catalog.find(name, ctx.identity);
    const dir = gitDir(repo);
    if (!dir) throw new ServiceError('INVALID_QUERY_PARAMS', `${repo.name} is a directory, not a git repository: it has no history`);
    return { repo, dir };
  };
  const base = { method: 'GET' as const, tag: 'History', rateLimited: true, authenticated: true };
  const routes: Route[] = [
    {
      ...base,
      path: '/api/blame',
      operationId: 'getBlame',
      summary: 'Which commit last changed each line of a file',
      query: 'BlameQuery',
      description: 'A file larger than settings.http.maxSourceBytes is refused with 413 FILE_TOO_LARGE, from its size alone (it is not read).',
      response: { status: 200, schema: 'BlameResponse', description: 'Runs of lines with their commit, and those commits.' },
      errors: [...HISTORY_ERRORS, 'FILE_NOT_FOUND', 'FILE_TOO_LARGE'],
      async handle(ctx) {
        const q = ctx.query as Q;
        const { repo, dir } = repoOf(String(q.repo), ctx);
        const maxBytes = s.config.settings.http.maxSourceBytes;
        return { body: await blame(dir, { path: String(q.path), ref: q.ref as string | undefined, ...revisionScope(repo), maxBytes }) };
      },
    },
    {
      ...base,
      path: '/api/diff',
      operationId: 'getDiff',
      summary: 'The changes between two refs',
      description:
        "Files by path with unified-diff hunks (3 lines of context); renames detected. `base` (or `head`) may be git's empty tree, 4b825dc642cb6eb9a060e54bf8d69288fbee4904, which names no files: a root commit's changes are the diff from it. Cut at 1000 files or 10 MB of hunks (then `truncated: true`). A file larger than settings.http.maxSourceBytes on either side has no hunks and `tooLarge: true` (it is not read).",
      query: 'DiffQuery',
      response: { status: 200, schema: 'DiffResponse', description: 'The changed files.' },
      errors: [...HISTORY_ERRORS],
      async handle(ctx) {
        const q = ctx.query as Q;
        const { repo, dir } = repoOf(String(q.repo), ctx);
        const opts: Parameters<typeof diff>[1] = {
          base: String(q.base),
          head: String(q.head),
          ...revisionScope(repo),
          maxBytes: s.config.settings.http.maxSourceBytes,
        };
        if (q.path !== undefined) opts.path = String(q.path);
        return { body: await diff(dir, opts) };
      },
    },
    {
      ...base,
      path: '/api/commit',
      operationId: 'getCommit',
      summary: 'One commit',
      query: 'CommitQuery',
      response: { status: 200, schema: 'CommitResponse', description: 'The commit.' },
      errors: [...HISTORY_ERRORS],
      async handle(ctx) {
        const q = ctx.query as Q;
        const { repo, dir } = repoOf(String(q.repo), ctx);
        return { body: await commitInfo(dir, { ref: q.ref as string | undefined, ...revisionScope(repo) }) };
      },
    },
    {
      ...base,
      path: '/api/commits',
      operationId: 'listCommits',
      summary: 'Commits reachable from a ref, newest first',
      description:
        "Filters: `query` (message), `author` (name or email), `since`/`until` (author date, inclusive: ISO 8601, or `N <unit>s ago`, `yesterday`, `last week|month|year`; a date alone is the start of that day), `path` (commits that changed it). `refs` is git's `%D` decoration. History walks stop after 100,000 commits.",
      query: 'CommitsQuery',
      response: { status: 200, schema: 'CommitsResponse', description: 'One page of commits.', headers: PAGE_HEADERS },
      errors: [...HISTORY_ERRORS],
      async handle(ctx) {
        const q = ctx.query as Q & { page: number; perPage: number };
        const { repo, dir } = repoOf(String(q.repo), ctx);
        const opts: Parameters<typeof commits>[1] = {
          ref: q.ref as string | undefined,
          ...revisionScope(repo),
          page: q.page,
          perPage: q.perPage,
          now: s.now().getTime(),
        };
        for (const k of ['query', 'author', 'since', 'until', 'path'] as const) if (q[k] !== undefined) opts[k] = String(q[k]);
        const page = await commits(dir, opts);
        return {
          body: page.items,
          headers: pageHeaders({ baseUrl: s.baseUrl, path: '/api/commits', query: q, page: q.page, perPage: q.perPage, total: page.total }),
        };
      },
    },
    {
      ...base,
      path: '/api/commits/authors',
      operationId: 'listCommitAuthors',
      summary: 'Commit authors, most commits first',
      query: 'AuthorsQuery',
      response: { status: 200, schema: 'AuthorsResponse', description: 'One page of authors.', headers: PAGE_HEADERS },
      errors: [...HISTORY_ERRORS],
      async handle(ctx) {
        const q = ctx.query as Q & { page: number; perPage: number };
        const { repo, dir } = repoOf(String(q.repo), ctx);
        const opts: Parameters<typeof authors>[1] = { ref: q.ref as string | undefined, ...revisionScope(repo), page: q.page, perPage: q.perPage };
        if (q.path !== undefined) opts.path = String(q.path);
        const page = await authors(dir, opts);
        return {
          body: page.items,
          headers: pageHeaders({ baseUrl: s.baseUrl, path: '/api/commits/authors', query: q, page: q.page, perPage: q.perPage, total: page.total }),
        };
      },
    },
  ];
  return routes.map((route) => readingRepository(s, 'git', (ctx) => String((ctx.query as Q).repo), route));
}
