// POST /api/find_definitions and POST /api/find_references (docs/http-api.md section 13).
// Both are searches in the query language: definitions ask the symbol index for the exact
// name (`sym:^name$`), references ask for whole-word occurrences (`\bname\b`, case-sensitive);
// language, repository and revision become `lang:`, `repo:` and `branch:` filters, and a
// search context `context:`. The caller's default context does not apply: these answer
// about a symbol the caller is reading, wherever it is (the web UI's code navigation).

import { ServiceError } from '../../errors.ts';
import type { PlannedSearch } from '../../search/searcher.ts';
import type { FileResult, SearchRequest, SearchResponse } from '../../search/types.ts';
import { callerKey } from '../caller.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

interface FindRequest {
  symbolName: string;
  language?: string;
  revisionName?: string;
  repoName?: string;
  context?: string;
}

/** Match ranges returned at most (the response says how many there were). */
const MAX_MATCHES = 5000;

export function symbolRoutes(s: Services): Route[] {
  const route = (path: string, operationId: string, summary: string, description: string, query: (r: FindRequest) => Required<SearchRequest>): Route => ({
    method: 'POST',
    path,
    operationId,
    summary,
    description,
    tag: 'Symbols',
    body: 'FindSymbolRequest',
    response: { status: 200, schema: 'FindSymbolResponse', description: 'The matches, by file.' },
    errors: ['INVALID_REQUEST_BODY', 'UNKNOWN_CONTEXT', 'SERVICE_UNAVAILABLE'],
    rateLimited: true,
    authenticated: true,
    handle: (ctx) => find(s, ctx, query(ctx.body as FindRequest)),
  });
  return [
    route(
      '/api/find_definitions',
      'findDefinitions',
      'Where a symbol is defined',
      `Definitions of exactly this name in the symbol index (universal-ctags), at most ${MAX_MATCHES}.`,
      (r) => request(`sym:${quote(`^${escapeRegex(r.symbolName)}$`)}`, r, false),
    ),
    route(
      '/api/find_references',
      'findReferences',
      'Where a symbol is used',
      `Whole-word, case-sensitive occurrences of the name (definitions included), at most ${MAX_MATCHES}.`,
      (r) => request(quote(wholeWord(r.symbolName)), r, true),
    ),
  ];
}

function request(term: string, r: FindRequest, regex: boolean): Required<SearchRequest> {
  const parts = [term];
  if (r.language) parts.push(`lang:${quote(r.language)}`);
  if (r.repoName) parts.push(`repo:${quote(`^${escapeRegex(r.repoName)}$`)}`);
  if (r.revisionName) parts.push(`branch:${quote(r.revisionName)}`);
  if (r.context) parts.push(`context:${quote(r.context)}`);
  return { query: parts.join(' '), matches: MAX_MATCHES, contextLines: 0, whole: false, isRegexEnabled: regex, isCaseSensitivityEnabled: true };
}

async function find(s: Services, ctx: RouteContext, req: Required<SearchRequest>) {
  const caller = callerKey(ctx.identity, ctx.clientAddress);
  let planned: PlannedSearch;
  try {
    planned = await s.planner.plan(req, caller, ctx.signal);
  } catch (err) {
    // The query is built from the body's fields: what it cannot parse (an unknown
    // language, a branch glob the parser refuses) is a bad body.
    if (err instanceof ServiceError && err.errorCode === 'FAILED_TO_PARSE_QUERY') throw new ServiceError('INVALID_REQUEST_BODY', err.message);
    throw err;
  }
  const repoFilter = await s.contexts.searchFilter(ctx.identity, { named: planned.plan.context, useDefault: false });
  const release = await s.gate.enter(caller, ctx.signal);
  let res: SearchResponse;
  try {
    res = await s.searcher.search(req, {
      planned,
      caller,
      timeoutMs: s.config.settings.search.timeoutMs,
      signal: ctx.signal,
      repoFilter,
    });
  } finally {
    release();
  }
  s.metrics?.search('symbols', res.stats, res.isSearchExhaustive);
  const files = res.files.map(toSymbolFile).filter((f) => f.matches.length > 0);
  return { body: { stats: { matchCount: files.reduce((n, f) => n + f.matches.length, 0) }, files, repositoryInfo: res.repositoryInfo } };
}

function toSymbolFile(f: FileResult) {
  const matches: Array<{ lineContent: string; range: FileResult['chunks'][number]['matchRanges'][number] }> = [];
  for (const chunk of f.chunks) {
    const lines = chunk.content.split('\n');
    for (const range of chunk.matchRanges) {
      matches.push({ lineContent: lines[range.start.lineNumber - chunk.contentStart.lineNumber] ?? '', range });
    }
  }
  return { fileName: f.fileName.text, repository: f.repository, repositoryId: f.repositoryId, webUrl: f.webUrl, language: f.language, matches };
}

/** RE2 syntax for the literal text. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** `\b` only where the name starts or ends with a word character (elsewhere it would never match). */
function wholeWord(name: string): string {
  const word = /\w/;
  return `${word.test(name[0] ?? '') ? '\\b' : ''}${escapeRegex(name)}${word.test(name.at(-1) ?? '') ? '\\b' : ''}`;
}

/** A query-language string: quoted, with `\` and `"` escaped (docs/query-language.md). */
function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
