// Browsing (docs/http-api.md section 13): GET /api/source, GET /api/outline, POST /api/files,
// POST /api/tree, GET /api/folder_contents. A git repository is read through nodegit at its
// indexed branches, its tags and the commits they reach (repos/browse.ts, revision.ts); a
// directory, which has no git, from the files its index holds. An outline is the file's
// definitions from trawl's scanners (C, device trees, Kconfig) or universal-ctags
// (symbols/outline.ts). In a cluster each runs on a node that can read the repository
// (forward.ts).
//
// Listings (files, tree, folder contents) can be a whole repository's: each is built once
// per commit and index generation, in time slices, and kept as the JSON sent
// (answer-cache.ts).

import { createHash } from 'node:crypto';
import { detectLanguage } from '../../index/language.ts';
import { folderContents, listFiles, readSource, resolveRevision, tree, type FileEntry, type FolderEntry, type ResolvedRevision } from '../../repos/browse.ts';
import { outlineSymbols } from '../../symbols/outline.ts';
import { SYMBOL_MAX_FILE_BYTES } from '../../symbols/ctags.ts';
import { fileTooLarge } from '../../repos/blob-size.ts';
import { checkRepoPath } from '../../repos/repo-path.ts';
import type { RevisionScope } from '../../repos/revision.ts';
import { externalFileUrl, fileWebUrl } from '../../repos/web-urls.ts';
import { ServiceError } from '../../errors.ts';
import { AnswerCache, ANSWER_CACHE_BYTES, type AnswerScope, type BuiltAnswer } from '../answer-cache.ts';
import type { CatalogRepo } from '../catalog.ts';
import { readingRepository } from '../forward.ts';
import { baseName, nodeAt, pathTree } from '../path-tree.ts';
import { slicedJson } from '../sliced-json.ts';
import { nextSlice, sliceUsed } from '../../runtime/time-slices.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

interface SourceQuery {
  repo: string;
  path: string;
  ref?: string;
}

const BROWSE_ERRORS = ['INVALID_GIT_REF', 'REPOSITORY_NOT_FOUND', 'FILE_NOT_FOUND'] as const;

/** The repository a browsing request names: `repo` (source, outline) or `repoName`, in the query or the body. */
function repoName(ctx: RouteContext): string {
  const input = (ctx.body ?? ctx.query) as { repo?: string; repoName?: string };
  return input.repo ?? input.repoName ?? '';
}

/** A listing asked of a git repository (read at `dir`) at `ref`: `question` names it in the answer cache, `build` makes it at the resolved commit. */
interface GitListing {
  repo: CatalogRepo;
  dir: string;
  ref: string | undefined;
  question: string;
  build: (options: ResolvedRevision) => Promise<BuiltAnswer>;
}

export function browseRoutes(s: Services): Route[] {
  const routes: Route[] = [...fileRoutes(s), ...listingRoutes(s)];
  return routes.map((route) => readingRepository(s, 'source', repoName, route));
}

/** One file of a repository: its content, its outline. */
function fileRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/source',
      operationId: 'getSource',
      summary: "A file's content and metadata at a ref",
      description: `A file larger than settings.http.maxSourceBytes (${s.config.settings.http.maxSourceBytes} bytes here) is refused with 413 FILE_TOO_LARGE; its size is read from the git object's header, the file itself is never loaded.`,
      tag: 'Browse',
      query: 'SourceQuery',
      response: { status: 200, schema: 'SourceResponse', description: 'The file.' },
      errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', ...BROWSE_ERRORS, 'FILE_TOO_LARGE'],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const q = ctx.query as SourceQuery;
        const repo = s.catalog.find(q.repo, ctx.identity);
        const file = await sourceOf(s, repo, q, s.config.settings.http.maxSourceBytes);
        const branch = q.ref ?? repo.defaultBranch;
        const body: Record<string, unknown> = {
          source: file.source.toString('utf8'),
          language: detectLanguage(file.path, file.source.subarray(0, 512)),
          path: file.path,
          repo: repo.name,
          repoCodeHostType: repo.codeHostType,
          webUrl: fileWebUrl(s.baseUrl, repo.name, branch, file.path),
          repoDisplayName: repo.displayName,
        };
        if (repo.externalWebUrl) body.repoExternalWebUrl = repo.externalWebUrl;
        const external = externalFileUrl(repo.codeHostType, repo.externalWebUrl, branch, file.path);
        if (external) body.externalWebUrl = external;
        if (file.blobSha) body.blobSha = file.blobSha;
        return { body };
      },
    },
    {
      method: 'GET',
      path: '/api/outline',
      operationId: 'getOutline',
      summary: 'The symbol definitions of a file at a ref (its outline)',
      description:
        "The file is read as GET /api/source reads it and parsed as the indexer parses it (C, device tree sources and Kconfig files by trawl's own scanners, other languages by universal-ctags), at any ref GET /api/source takes. " +
        "A file larger than 1 MiB (not read at all: its size comes from the git object's header), a binary file (a NUL byte) or one ctags fails on has no symbols. 503 when the file is one for universal-ctags and it is not installed.",
      tag: 'Browse',
      query: 'OutlineQuery',
      response: { status: 200, schema: 'OutlineResponse', description: 'The definitions, by line, then name.' },
      errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', ...BROWSE_ERRORS, 'SERVICE_UNAVAILABLE'],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const q = ctx.query as SourceQuery;
        const repo = s.catalog.find(q.repo, ctx.identity);
        // A file ctags would skip for its size is not read either: no symbols, its language by its name.
        const file = await sourceOf(s, repo, q, SYMBOL_MAX_FILE_BYTES).catch((err: unknown) => {
          if (err instanceof ServiceError && err.errorCode === 'FILE_TOO_LARGE')
            return { path: checkRepoPath(q.path, { allowEmpty: false }), source: Buffer.alloc(0), tooLarge: true };
          throw err;
        });
        const outline = 'tooLarge' in file ? { symbols: [] } : await outlineSymbols(file.path, file.source, { signal: ctx.signal });
        if (outline.skipped === 'timeout' || outline.skipped === 'failed') {
          ctx.log.warn(
            { repo: repo.name, path: file.path, ref: q.ref, bytes: file.source.length, reason: outline.skipped },
            'outline: ctags gave no symbols for the file',
          );
        }
        return {
          body: {
            repo: repo.name,
            path: file.path,
            ref: q.ref ?? repo.defaultBranch,
            language: detectLanguage(file.path, file.source.subarray(0, 512)),
            symbols: outline.symbols.map((d) => ({
              symbol: d.name,
              kind: d.kind,
              line: d.line,
              endLine: d.endLine,
              ...(d.parent ? { parent: { symbol: d.parent.name, kind: d.parent.kind } } : {}),
            })),
          },
        };
      },
    },
  ];
}

/** Listings of a repository's files (all of them, a tree, a folder's children), each kept in the answer cache once built. */
function listingRoutes(s: Services): Route[] {
  const answers = new AnswerCache(ANSWER_CACHE_BYTES);
  /** A listing of a git repository: the ref resolved first, since the answer is the same for every name of its commit. */
  const gitListing = async (ctx: RouteContext, { repo, dir, ref, question, build }: GitListing) => {
    const options: ResolvedRevision = { ref, ...revisionScope(repo) };
    const commit = await resolveRevision(dir, options);
    return answers.answer(scopeOf(repo), `${question} ${commit}`, () => build({ ...options, commit }), ctx.signal);
  };
  return [
    {
      method: 'POST',
      path: '/api/files',
      operationId: 'listFiles',
      summary: 'Every file of a repository at a revision',
      tag: 'Browse',
      body: 'FilesRequest',
      response: { status: 200, schema: 'FilesResponse', description: 'The files, by path.' },
      errors: ['INVALID_GIT_REF', 'REPOSITORY_NOT_FOUND'],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const b = ctx.body as { repoName: string; revisionName?: string };
        const repo = s.catalog.find(b.repoName, ctx.identity);
        const dir = gitDir(repo);
        if (dir)
          return {
            body: await gitListing(ctx, {
              repo,
              dir,
              ref: b.revisionName,
              question: 'files',
              build: async (options) => fileListAnswer(await listFiles(dir, options)),
            }),
          };
        noRefs(repo, b.revisionName);
        return { body: await answers.answer(scopeOf(repo), 'files', async () => fileListAnswer(await indexedEntries(s, repo)), ctx.signal) };
      },
    },
    {
      method: 'POST',
      path: '/api/tree',
      operationId: 'getTree',
      summary: 'Files and directories of a repository, with the given paths expanded',
      tag: 'Browse',
      body: 'TreeRequest',
      response: { status: 200, schema: 'TreeResponse', description: 'The tree from the root.' },
      errors: [...BROWSE_ERRORS, 'INVALID_REQUEST_BODY'],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const b = ctx.body as { repoName: string; revisionName?: string; paths: string[] };
        const repo = s.catalog.find(b.repoName, ctx.identity);
        // The paths come in the body: a bad one is a bad body.
        const paths = asBodyError(() => b.paths.map((p) => checkRepoPath(p, { allowEmpty: true })));
        // Up to a thousand paths: the question is named by their digest.
        const question = `tree ${createHash('sha256').update(JSON.stringify(paths)).digest('base64url')}`;
        const dir = gitDir(repo);
        if (dir)
          return {
            body: await gitListing(ctx, {
              repo,
              dir,
              ref: b.revisionName,
              question,
              build: async (options) => ({ bytes: await slicedJson(await tree(dir, { ...options, paths })) }),
            }),
          };
        noRefs(repo, b.revisionName);
        return {
          body: await answers.answer(
            scopeOf(repo),
            question,
            async () => ({ bytes: await slicedJson({ tree: await pathTree(await indexedPaths(s, repo), paths) }) }),
            ctx.signal,
          ),
        };
      },
    },
    {
      method: 'GET',
      path: '/api/folder_contents',
      operationId: 'getFolderContents',
      summary: 'The immediate children of a directory',
      tag: 'Browse',
      query: 'FolderContentsQuery',
      response: { status: 200, schema: 'FolderContentsResponse', description: 'Directories first, then files, each by name.' },
      errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', ...BROWSE_ERRORS],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const q = ctx.query as { repoName: string; revisionName?: string; path?: string };
        const repo = s.catalog.find(q.repoName, ctx.identity);
        const dir = gitDir(repo);
        if (dir) {
          const path = checkRepoPath(q.path ?? '', { allowEmpty: true });
          return {
            body: await gitListing(ctx, {
              repo,
              dir,
              ref: q.revisionName,
              question: `folder ${path}`,
              build: async (options) => ({ bytes: await slicedJson(await folderContents(dir, { ...options, path })) }),
            }),
          };
        }
        noRefs(repo, q.revisionName);
        const path = checkRepoPath(q.path ?? '', { allowEmpty: true });
        return {
          body: await answers.answer(
            scopeOf(repo),
            `folder ${path}`,
            async () => {
              const node = nodeAt(await pathTree(await indexedPaths(s, repo), [path]), path);
              if (node?.type !== 'tree') throw new ServiceError('FILE_NOT_FOUND', `no folder "${path}" in ${repo.name}`);
              return { bytes: await slicedJson(node.children.map(({ type, path: p, name }): FolderEntry => ({ type, path: p, name }))) };
            },
            ctx.signal,
          ),
        };
      },
    },
  ];
}

/** Runs `fn`, turning its INVALID_QUERY_PARAMS (a path check) into INVALID_REQUEST_BODY. */
function asBodyError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ServiceError && err.errorCode === 'INVALID_QUERY_PARAMS') throw new ServiceError('INVALID_REQUEST_BODY', err.message);
    throw err;
  }
}

/** What the git readers need to resolve the refs a request names in `repo`: only its indexed refs, its tags and what they reach are read (repos/revision.ts). */
export function revisionScope(repo: CatalogRepo): RevisionScope {
  return { defaultRef: repo.defaultBranch, label: repo.name, indexed: { refs: repo.refs, generation: repo.manifest.generation } };
}

/** The git directory to read, or undefined for a directory repository. */
export function gitDir(repo: CatalogRepo): string | undefined {
  return repo.kind === 'git' && repo.source ? repo.source : undefined;
}

/** A directory has one revision, what was indexed: any other ref is an error. */
export function noRefs(repo: CatalogRepo, ref: string | undefined): void {
  if (ref !== undefined && ref !== repo.defaultBranch) {
    throw new ServiceError('INVALID_GIT_REF', `${repo.name} is a directory, not a git repository: it has no ref "${ref}"`);
  }
}

/**
 * The file of a source or outline query: through git at the ref, or from a directory's
 * index. FILE_TOO_LARGE over `maxBytes`, before the file is read.
 */
async function sourceOf(s: Services, repo: CatalogRepo, q: SourceQuery, maxBytes: number): Promise<{ source: Buffer; path: string; blobSha?: string }> {
  const dir = gitDir(repo);
  return dir ? readSource(dir, { path: q.path, ref: q.ref, ...revisionScope(repo), maxBytes }) : indexedSource(s, repo, q, maxBytes);
}

async function indexedSource(s: Services, repo: CatalogRepo, q: SourceQuery, maxBytes: number): Promise<{ source: Buffer; path: string; blobSha?: string }> {
  noRefs(repo, q.ref);
  const path = checkRepoPath(q.path, { allowEmpty: false });
  const hit = (await s.catalog.indexedFiles(repo)).find((f) => f.path === path);
  if (!hit) throw new ServiceError('FILE_NOT_FOUND', `no file "${path}" in ${repo.name}`);
  // A view of the memory-mapped shard: its length costs nothing to check.
  const source = s.catalog.indexedContent(repo, hit);
  if (source.length > maxBytes) throw fileTooLarge(path, source.length, maxBytes, `in ${repo.name}`);
  return { source, path };
}

/** Where a repository's kept answers belong: a new index generation of it drops those of the old one. */
function scopeOf(repo: CatalogRepo): AnswerScope {
  return { repoId: repo.repoId, generation: repo.manifest.generation };
}

/** A file list's answer: its JSON, and the list itself for the tool server (list_tree, glob), which would otherwise parse it back. */
async function fileListAnswer(files: FileEntry[]): Promise<BuiltAnswer> {
  return { bytes: await slicedJson(files), value: files };
}

async function indexedPaths(s: Services, repo: CatalogRepo): Promise<string[]> {
  return (await s.catalog.indexedFiles(repo)).map((f) => f.path);
}

async function indexedEntries(s: Services, repo: CatalogRepo): Promise<FileEntry[]> {
  const files = await s.catalog.indexedFiles(repo);
  const out: FileEntry[] = [];
  for (const f of files) {
    if (sliceUsed()) await nextSlice();
    out.push({ type: 'blob', path: f.path, name: baseName(f.path) });
  }
  return out;
}
