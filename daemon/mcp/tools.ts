// The tools of the tool server (MCP): read-only questions a language model asks about the
// indexed code, and the member's watches (watch-tools.ts: the only tools that change
// anything). Each tool is one REST request (invoke.ts: same validation, same identity,
// same answers), and presents the answer for a model: a compact text capped at a budget
// that ends with how to get the rest, and structuredContent, the REST answer itself or
// the documented slice of it that the text shows (render-*.ts say exactly which).

import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CONTEXT_NAME, GLOBAL_CONTEXT } from '../config/contexts.ts';
import { ServiceError } from '../errors.ts';
import { browseSchemas, REF_PARAM, REPO_PARAM } from '../http/schemas/browse.ts';
import { historySchemas } from '../http/schemas/history.ts';
import { repoSchemas } from '../http/schemas/repos.ts';
import type { CommitSummary } from '../repos/history.ts';
import { DEFAULT_MAX_MATCHES, MAX_CONTEXT_LINES, MAX_QUERY_BYTES } from '../search/request.ts';
import type { SearchResponse } from '../search/types.ts';
import { filterSliced } from '../glob/sliced-filter.ts';
import type { GlobMatcher } from '../glob/matcher.ts';
import { compileGlob, GlobError, MAX_GLOB_LENGTH } from './glob.ts';
import type { Invoke, RouteAnswer, ToolCaller } from './invoke.ts';
import { renderGlob, renderRepos, renderSource, renderTree, type SourceAnswer } from './render-browse.ts';
import { renderBlame, renderCommits, renderDiff, type BlameAnswer, type DiffAnswer } from './render-history.ts';
import { renderSearch, renderSymbols, type Rendered, type SymbolAnswer } from './render-search.ts';
import { bound, prop } from './rest-bounds.ts';
import { listTree } from './tree.ts';
import { registerWatchTools } from './watch-tools.ts';
import { ArgumentError, type ToolKit } from './tool-kit.ts';

/** Authenticates the caller and counts the call against its daily limit (an McpError when over it). */
export type PrepareCall = (extra: { signal: AbortSignal; authInfo?: AuthInfo }) => Promise<ToolCaller>;

export const TOOL_NAMES = [
  'search_code',
  'read_file',
  'list_repos',
  'list_tree',
  'glob',
  'find_symbol_definitions',
  'find_symbol_references',
  'list_commits',
  'get_diff',
  'blame',
  'create_watch',
  'list_watches',
  'get_watch_changes',
  'delete_watch',
] as const;

/** read_file's default and largest `limit`: a screenful of code, and what still fits the text budget at short lines. */
export const READ_FILE_LIMIT = 400;
export const READ_FILE_MAX_LIMIT = 2000;
export const SEARCH_MATCHES = 100;
export const COMMITS_PER_PAGE = 20;
export const GLOB_LIMIT = 200;
export const GLOB_MAX_LIMIT = 1000;
/**
 * The glob tool's matching runs in slices of `sliceMs` between which the daemon serves
 * other requests, and gives up after `totalMs` of matching: time enough for an ordinary
 * pattern over far more paths than a large repository holds; a worst-case pattern over
 * long paths gets there sooner, and the call says so.
 */
export const GLOB_MATCH_BUDGET = { sliceMs: 10, totalMs: 2000 };
export const TREE_DEPTH = 2;
export const TREE_MAX_DEPTH = 20;

// Bounds are the REST schemas' own (rest-bounds.ts).
const REPO_MAX = bound(REPO_PARAM, 'maxLength');
const REF_MAX = bound(REF_PARAM, 'maxLength');
const PATH_MAX = bound(prop(browseSchemas, 'SourceQuery', 'path'), 'maxLength');
const SYMBOL_MAX = bound(prop(browseSchemas, 'FindSymbolRequest', 'symbolName'), 'maxLength');
const LANGUAGE_MAX = bound(prop(browseSchemas, 'FindSymbolRequest', 'language'), 'maxLength');
const REVISION_MAX = bound(prop(browseSchemas, 'FindSymbolRequest', 'revisionName'), 'maxLength');
const PAGE_MAX = bound(prop(historySchemas, 'CommitsQuery', 'page'), 'maximum');
const COMMITS_PER_PAGE_MAX = bound(prop(historySchemas, 'CommitsQuery', 'perPage'), 'maximum');
const COMMIT_TEXT_MAX = bound(prop(historySchemas, 'CommitsQuery', 'query'), 'maxLength');
const DATE_MAX = bound(prop(historySchemas, 'CommitsQuery', 'since'), 'maxLength');
const REPOS_PER_PAGE_MAX = bound(prop(repoSchemas, 'ReposQuery', 'perPage'), 'maximum');
const REPOS_PER_PAGE = bound(prop(repoSchemas, 'ReposQuery', 'perPage'), 'default');
const REPOS_QUERY_MAX = bound(prop(repoSchemas, 'ReposQuery', 'query'), 'maxLength');

const repo = () => z.string().min(1).max(REPO_MAX).describe('Repository name exactly as list_repos or search results show it, e.g. github.com/org/repo.');
const ref = () =>
  z
    .string()
    .min(1)
    .max(REF_MAX)
    .optional()
    .describe(
      "An indexed branch, a tag, or a commit id (at least 7 hex digits) of their history; also relative, like main~1. Default: the repository's default branch.",
    );
const filePath = (what: string) => z.string().min(1).max(PATH_MAX).describe(what);
const page = () => z.number().int().min(1).max(PAGE_MAX).default(1).describe('1-based page number; the result says how many pages there are.');

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/** A search context to search in (GET /api/contexts lists them): the REST `context` field. */
const context = (what: string) =>
  z
    .string()
    .regex(CONTEXT_NAME)
    .optional()
    .describe(`Only the repositories of this search context, by name (lower case), e.g. backend; "${GLOBAL_CONTEXT}": every repository. ${what}`);

/**
 * `watchResources`: the server offers the watches as resources (watch-resources.ts), whose
 * list the watch tools tell the client has changed.
 */
export function registerTools(server: McpServer, invoke: Invoke, prepare: PrepareCall, options: { watchResources?: boolean } = {}): void {
  /**
   * The REST answer of `route` for `input`, as the caller. Absent arguments are left out,
   * as a JSON body or a query string leaves them out (a body field set to undefined would
   * fail the route's schema).
   */
  const rest = (caller: ToolCaller, route: Parameters<Invoke>[0], input: Record<string, unknown>, params?: Record<string, string>): Promise<RouteAnswer> =>
    invoke(route, Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)), caller, params);
  const t: ToolKit = {
    server,
    call: (run) => async (args, extra) => {
      const caller = await prepare(extra);
      return respond(() => run(args, caller, extra.signal));
    },
    rest,
    async fileList(caller, repoName, revisionName) {
      const a = await rest(caller, 'POST /api/files', { repoName, revisionName });
      return a.body as Array<{ path: string }>;
    },
    watchesChanged() {
      // Not awaited by the SDK: a failure (the session closing) is nobody's to hear.
      if (options.watchResources && server.isConnected()) server.server.sendResourceListChanged().catch(() => {});
    },
  };
  // In the order tools/list shows them.
  searchCodeTool(t);
  readFileTool(t);
  listReposTool(t);
  listTreeTool(t);
  globTool(t);
  findSymbolDefinitionsTool(t);
  findSymbolReferencesTool(t);
  listCommitsTool(t);
  getDiffTool(t);
  blameTool(t);
  registerWatchTools(t);
}

function searchCodeTool(t: ToolKit): void {
  t.server.registerTool(
    'search_code',
    {
      title: 'Search code',
      description: [
        "Search the contents of every indexed repository (each repository's default branch unless `branch:` says otherwise). Start here to find code; then read_file for more of a file.",
        'Query language: space-separated terms must all match in the same file (AND); lowercase `or` between terms or groups means OR; parentheses group; `-` before a term, filter or group negates it; "double quotes" make one term containing spaces (\\" and \\\\ escape).',
        'Filters: `context:` (a search context: a named set of repositories; or the context argument), `repo:` (regex on the repository name), `file:` (regex on the path), `lang:` (language, e.g. lang:go, lang:typescript), `sym:` (regex on the name of a symbol definition), `branch:`/`rev:` (branch glob, branch:* for all indexed; in a repository whose history is indexed also any commit: rev:<id>, rev:<tag>, rev:main~20), `at:` (the default branch at a date, e.g. at:2024-05-01; repositories whose history is indexed), `type:commit` (search commit messages instead of files, with `author:`, `committer:`, `after:`, `before:`), `type:diff` (the lines commits added or removed; `select:added|removed`), `history:yes` (when each file held matches: the commits they appeared and went away at), `case:yes|no|auto`, `regex:` (one term as a regular expression), `content:` (content only), `archived:` and `fork:` (yes|no|only), `visibility:` (public|private|any). Filter values may be quoted.',
        'Terms are literal, case-insensitive substrings; isRegexEnabled makes them RE2 regular expressions, isCaseSensitivityEnabled (or case:yes) makes them case-sensitive.',
        'Examples: `spin_lock -file:^drivers/` · `(kmalloc or kzalloc) lang:c file:^fs/` · `sym:^ext4_map_blocks$` · `"struct file_operations" case:yes` · `regex:"foo\\s+bar" -file:test`.',
        'Result: files best first, each under `## repo=... path=...`, then `N: text` for lines with a match and `N- text` for context lines, `--` between separate chunks. The text is limited in size; its last lines say how to get more.',
      ].join('\n'),
      inputSchema: {
        query: z.string().min(1).max(MAX_QUERY_BYTES).describe(`The query, in the query language above (at most ${MAX_QUERY_BYTES} bytes).`),
        matches: z
          .number()
          .int()
          .min(1)
          .max(DEFAULT_MAX_MATCHES)
          .default(SEARCH_MATCHES)
          .describe('The most match ranges to return (content and path matches together). Raise it when the result says more matches exist.'),
        contextLines: z.number().int().min(0).max(MAX_CONTEXT_LINES).default(0).describe('Lines of context before and after each matching line.'),
        isRegexEnabled: z.boolean().default(false).describe('Treat terms as RE2 regular expressions instead of literal substrings.'),
        isCaseSensitivityEnabled: z.boolean().default(false).describe('Match case exactly (a case: filter in the query overrides this).'),
        context: context("Default: the user's default context, if they chose one (a context: filter in the query does the same)."),
      },
      annotations: { title: 'Search code', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'POST /api/search', {
        query: args.query,
        matches: args.matches,
        contextLines: args.contextLines,
        isRegexEnabled: args.isRegexEnabled,
        isCaseSensitivityEnabled: args.isCaseSensitivityEnabled,
        context: args.context,
      });
      return renderSearch(a.body as SearchResponse, args);
    }),
  );
}

function readFileTool(t: ToolKit): void {
  t.server.registerTool(
    'read_file',
    {
      title: 'Read a file',
      description:
        'Read lines of one file of a repository, numbered. Find the file first (search_code, glob or list_tree give the repo and path). ' +
        `Reads \`limit\` lines (default ${READ_FILE_LIMIT}) from line \`offset\` (1-based, default 1); when lines remain, the result ends with the offset to read next. ` +
        'Very long lines are cut. Use search_code rather than reading whole large files.',
      inputSchema: {
        repo: repo(),
        path: filePath('Path of the file in the repository, e.g. src/main.ts (no leading slash).'),
        ref: ref(),
        offset: z.number().int().min(1).default(1).describe('First line to read, 1-based.'),
        limit: z.number().int().min(1).max(READ_FILE_MAX_LIMIT).default(READ_FILE_LIMIT).describe('How many lines to read.'),
      },
      annotations: { title: 'Read a file', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'GET /api/source', { repo: args.repo, path: args.path, ref: args.ref });
      return renderSource(a.body as SourceAnswer, args);
    }),
  );
}

function listReposTool(t: ToolKit): void {
  t.server.registerTool(
    'list_repos',
    {
      title: 'List repositories',
      description:
        'List the repositories that can be searched, by name (the `repo` argument of the other tools), with id, code host, default branch and when each was indexed. ' +
        'Filter by a substring of the name with `query`. Paged: the result says which page it is and the page to ask for next.',
      inputSchema: {
        query: z.string().max(REPOS_QUERY_MAX).optional().describe('Only repositories whose name contains this (case-insensitive).'),
        sort: z.enum(['name', 'pushed']).default('name').describe('Order by name, or by when the repository was last pushed to.'),
        direction: z.enum(['asc', 'desc']).default('asc').describe('asc or desc (desc with sort=pushed: most recently pushed first).'),
        page: page(),
        perPage: z.number().int().min(1).max(REPOS_PER_PAGE_MAX).default(REPOS_PER_PAGE).describe('Repositories per page.'),
      },
      annotations: { title: 'List repositories', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'GET /api/repos', {
        query: args.query,
        sort: args.sort,
        direction: args.direction,
        page: args.page,
        perPage: args.perPage,
      });
      const repos = a.body as Array<Record<string, unknown>>;
      return renderRepos(repos, totalCount(a, repos.length), args);
    }),
  );
}

function listTreeTool(t: ToolKit): void {
  t.server.registerTool(
    'list_tree',
    {
      title: 'List a directory tree',
      description:
        'Show the directories and files of a repository below a directory, to a depth, one path a line (directories end with `/` and say how many files they hold). ' +
        `Start at the root with the default depth (${TREE_DEPTH}), then list deeper directories with \`path\`. Paths shown are full paths in the repository, ready for read_file.`,
      inputSchema: {
        repo: repo(),
        ref: ref(),
        path: z.string().max(PATH_MAX).default('').describe('The directory to list, e.g. src/lib; empty for the repository root.'),
        depth: z.number().int().min(1).max(TREE_MAX_DEPTH).default(TREE_DEPTH).describe('Levels below `path` to show (1: only its direct children).'),
        include: z.enum(['files', 'directories', 'both']).default('both').describe('List only files, only directories, or both.'),
      },
      annotations: { title: 'List a directory tree', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const files = await t.fileList(caller, args.repo, args.ref);
      const listing = await listTree(
        files.map((f) => f.path),
        args.path,
        args.depth,
        args.include,
      );
      if (listing.kind === 'file') return argumentError('path', `${listing.base} is a file, not a directory: read it with read_file`);
      if (listing.kind === 'missing')
        return argumentError('path', `no directory "${listing.base}" in ${args.repo}${args.ref === undefined ? '' : ` at ${args.ref}`}`);
      return renderTree(listing, args);
    }),
  );
}

function globTool(t: ToolKit): void {
  t.server.registerTool(
    'glob',
    {
      title: 'Find files by path pattern',
      description:
        'List the files of one repository whose path matches a glob pattern. The pattern matches the whole path from the repository root: ' +
        '`*` any characters within one directory, `**` any number of directories, `?` one character, `[abc]` / `[!abc]` a character class, `{ts,tsx}` alternatives, `\\` escapes. ' +
        '`*.md` matches only top-level files: use `**/*.md` for every directory, `src/**/test_*.py` below src. Case-sensitive. To search file contents use search_code.',
      inputSchema: {
        repo: repo(),
        ref: ref(),
        pattern: z.string().min(1).max(MAX_GLOB_LENGTH).describe('The glob, e.g. **/*.go or {src,lib}/**/index.{js,ts}.'),
        offset: z.number().int().min(0).default(0).describe("Matching paths to skip (from a previous result's continuation hint)."),
        limit: z.number().int().min(1).max(GLOB_MAX_LIMIT).default(GLOB_LIMIT).describe('The most paths to return.'),
      },
      annotations: { title: 'Find files by path pattern', ...READ_ONLY },
    },
    t.call(async (args, caller, signal) => {
      let glob: GlobMatcher;
      try {
        glob = compileGlob(args.pattern);
      } catch (err) {
        if (err instanceof GlobError) return argumentError('pattern', err.message);
        throw err;
      }
      const files = await t.fileList(caller, args.repo, args.ref);
      const r = await filterSliced(files, (f) => glob.test(f.path), { ...GLOB_MATCH_BUDGET, signal: signal });
      if (!r.done) {
        if (signal.aborted) throw new Error('the glob call was cancelled');
        return argumentError(
          'pattern',
          `matching stopped after ${Math.round(r.spentMs)} ms with ${r.checked} of ${files.length} paths checked: ` +
            'the pattern is too costly for this repository; use a simpler one, or start it with a fixed directory (src/**/...)',
        );
      }
      return renderGlob(r.kept, args);
    }),
  );
}

const symbolInput = (what: string) => ({
  symbolName: z.string().min(1).max(SYMBOL_MAX).describe(`The exact name of the ${what}, e.g. parseQuery (no regex, no qualification).`),
  repo: repo().optional().describe('Only this repository (default: all).'),
  language: z.string().min(1).max(LANGUAGE_MAX).optional().describe('Only files of this language (e.g. go, typescript, c++).'),
  ref: z.string().min(1).max(REVISION_MAX).optional().describe("A branch or tag (default: each repository's default branch)."),
  context: context('Default: every repository.'),
});
const symbolBody = (args: {
  symbolName: string;
  repo?: string | undefined;
  language?: string | undefined;
  ref?: string | undefined;
  context?: string | undefined;
}) => ({
  symbolName: args.symbolName,
  repoName: args.repo,
  language: args.language,
  revisionName: args.ref,
  context: args.context,
});

function findSymbolDefinitionsTool(t: ToolKit): void {
  t.server.registerTool(
    'find_symbol_definitions',
    {
      title: 'Find symbol definitions',
      description:
        'Find where a symbol (function, method, class, type, constant, ...) is defined, by its exact name, from the symbol index. ' +
        'Faster and more precise than search_code for "where is X defined". Use find_symbol_references for where it is used.',
      inputSchema: symbolInput('symbol'),
      annotations: { title: 'Find symbol definitions', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'POST /api/find_definitions', symbolBody(args));
      return renderSymbols(a.body as SymbolAnswer, 'definitions', args.symbolName);
    }),
  );
}

function findSymbolReferencesTool(t: ToolKit): void {
  t.server.registerTool(
    'find_symbol_references',
    {
      title: 'Find symbol references',
      description:
        'Find where a name is used: whole-word, case-sensitive occurrences of it (definitions included) in the indexed code, one line per occurrence. ' +
        'Narrow with repo and language when the name is common.',
      inputSchema: symbolInput('symbol whose uses to find'),
      annotations: { title: 'Find symbol references', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'POST /api/find_references', symbolBody(args));
      return renderSymbols(a.body as SymbolAnswer, 'references', args.symbolName);
    }),
  );
}

function listCommitsTool(t: ToolKit): void {
  t.server.registerTool(
    'list_commits',
    {
      title: 'List commits',
      description:
        'List the commits reachable from a ref, newest first: hash, date, author, refs, subject and the start of the message body. ' +
        'Filter by message text, author, date range or a path (commits that changed a file or directory). Paged. ' +
        'A hash shown here can be passed to get_diff (e.g. base=<hash>~1 head=<hash>) or as a ref to other tools.',
      inputSchema: {
        repo: repo(),
        ref: ref(),
        path: z.string().min(1).max(PATH_MAX).optional().describe('Only commits that changed this file or directory.'),
        author: z.string().min(1).max(COMMIT_TEXT_MAX).optional().describe('Only commits whose author name or email contains this (case-insensitive).'),
        query: z.string().min(1).max(COMMIT_TEXT_MAX).optional().describe('Only commits whose message contains this (case-insensitive).'),
        since: z
          .string()
          .min(1)
          .max(DATE_MAX)
          .optional()
          .describe(
            'Only commits on or after this author date: ISO 8601 date or date-time, or "N days ago" (any unit second..year), "yesterday", "last week|month|year".',
          ),
        until: z
          .string()
          .min(1)
          .max(DATE_MAX)
          .optional()
          .describe('Only commits on or before this author date (same forms as since; a date alone is the start of that day).'),
        page: page(),
        perPage: z.number().int().min(1).max(COMMITS_PER_PAGE_MAX).default(COMMITS_PER_PAGE).describe('Commits per page.'),
      },
      annotations: { title: 'List commits', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const { repo: r, ref: rf, path, author, query, since, until, page: p, perPage } = args;
      const a = await t.rest(caller, 'GET /api/commits', { repo: r, ref: rf, path, author, query, since, until, page: p, perPage });
      const commits = a.body as CommitSummary[];
      return renderCommits(commits, totalCount(a, commits.length), args);
    }),
  );
}

function getDiffTool(t: ToolKit): void {
  t.server.registerTool(
    'get_diff',
    {
      title: 'Diff two refs',
      description:
        'Show the changes between two refs of a repository as unified diff hunks (3 lines of context), file by file, with renames detected. ' +
        'base and head are branches, tags or commits: the changes of one commit are base=<hash>~1 head=<hash>. Limit to a file or directory with `path` when the diff is large.',
      inputSchema: {
        repo: repo(),
        base: z.string().min(1).max(REF_MAX).describe('The old side: branch, tag or commit.'),
        head: z.string().min(1).max(REF_MAX).describe('The new side: branch, tag or commit.'),
        path: z.string().min(1).max(PATH_MAX).optional().describe('Only changes to this file, or to files under this directory.'),
      },
      annotations: { title: 'Diff two refs', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'GET /api/diff', { repo: args.repo, base: args.base, head: args.head, path: args.path });
      return renderDiff(a.body as DiffAnswer, args);
    }),
  );
}

function blameTool(t: ToolKit): void {
  t.server.registerTool(
    'blame',
    {
      title: 'Blame a file',
      description:
        'Show which commit last changed each line of a file: runs of lines with the commit hash, date, author and subject (renames followed). ' +
        'Give startLine/endLine to blame only part of a long file; read the lines themselves with read_file.',
      inputSchema: {
        repo: repo(),
        path: filePath('Path of the file in the repository.'),
        ref: ref(),
        startLine: z.number().int().min(1).default(1).describe('First line to blame, 1-based.'),
        endLine: z.number().int().min(1).optional().describe('Last line to blame, inclusive (default: the end of the file).'),
      },
      annotations: { title: 'Blame a file', ...READ_ONLY },
    },
    t.call(async (args, caller) => {
      if (args.endLine !== undefined && args.endLine < args.startLine)
        return argumentError('endLine', `endLine (${args.endLine}) is before startLine (${args.startLine})`);
      const a = await t.rest(caller, 'GET /api/blame', { repo: args.repo, path: args.path, ref: args.ref });
      return renderBlame(a.body as BlameAnswer, args);
    }),
  );
}

function argumentError(arg: string, message: string): ArgumentError {
  return new ArgumentError(`INVALID_ARGUMENT: ${arg}: ${message}`);
}

/**
 * The tool result of a rendering. A REST error is the model's to read and act on (a wrong
 * path, a bad query): an `isError` result `errorCode: message`. Anything else is a fault
 * and is thrown (the SDK reports it as an error result too, without our formatting).
 */
async function respond(run: () => Promise<Rendered | ArgumentError>): Promise<CallToolResult> {
  try {
    const r = await run();
    if (r instanceof ArgumentError) return { content: [{ type: 'text', text: r.text }], isError: true };
    return { content: [{ type: 'text', text: r.text }], structuredContent: r.structured };
  } catch (err) {
    if (err instanceof ServiceError) return { content: [{ type: 'text', text: `${err.errorCode}: ${err.message}` }], isError: true };
    throw err;
  }
}

/** X-Total-Count of a paged answer (every paged route sets it; the page's length if not). */
function totalCount(a: RouteAnswer, fallback: number): number {
  const header = a.headers.find(([name]) => name.toLowerCase() === 'x-total-count');
  const n = header ? Number(header[1]) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}
