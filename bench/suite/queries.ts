// The query mix: a JSON array of
//   {name, query, regex, caseSensitive, kind, set, matches?, peer?, pairOf?}
// `query` is in trawl's query language (docs/query-language.md); `regex` and
// `caseSensitive` are the request's isRegexEnabled / isCaseSensitivityEnabled. The peers
// (csearch, rg) take a raw pattern, which is derived from the query or given by `peer`
// (bench/METHOD.md, "The query mix").

import { readFileSync } from 'node:fs';
import type { QueryNode } from '../../daemon/query/ast.ts';
import { parseQuery } from '../../daemon/query/parser.ts';

export const KINDS = [
  // Plain patterns.
  'rare-literal',
  'common-literal',
  'ci-literal',
  'regex-literal',
  'regex-no-literal',
  'no-hit',
  // The query language.
  'file-filter',
  'lang-filter',
  'sym',
  'negation',
  'or',
  'group',
  'case',
  'and',
  'filter-pair',
  // The branch: filter.
  'branch',
] as const;
export type QueryKind = (typeof KINDS)[number];

/** What the peers run for a query: one raw pattern, optionally under one sub-directory. */
export interface PeerPattern {
  pattern: string;
  regex: boolean;
  caseSensitive: boolean;
  /** A directory relative to the corpus: rg searches only it, csearch gets `-f ^<corpus>/<path>/`. */
  path?: string;
  /** Only files with these extensions (`["c", "h"]` for `lang:c`): rg gets `-g '*.c'` per extension, csearch a `-f` ending in `\.(c|h)$`. */
  extensions?: string[];
}

export interface BenchQuery {
  name: string;
  /** In the query language. */
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  kind: QueryKind;
  /** The mix the query was added with (`issue-2`, `issue-3`): the summary has a median per set. */
  set: string;
  /** The request's `matches` (default MATCH_LIMIT, 100). */
  matches?: number;
  /** The peers' equivalent; null: no peer equivalent (not run, no ratio). */
  peer: PeerPattern | null;
  /** For the filtered half of a filter pair: the name of the unfiltered query. */
  pairOf?: string;
  /**
   * `trawl bench run`'s HTTP phase: "search" marks the query sent over and over to
   * POST /api/search, "stream" the one streamed from /api/stream_search (matches 100000).
   * Unmarked: the first query, and the first common literal.
   */
  http?: 'search' | 'stream';
}

type RawQuery = Partial<Omit<BenchQuery, 'peer'>> & { peer?: Partial<PeerPattern> | null };

/**
 * The peer pattern of a query that is one content term (a bare word or a quoted string,
 * with case: allowed): the term's pattern with its resolved case sensitivity. null for
 * anything else (filters, AND, OR, negation).
 */
export function derivePeer(query: string, regex: boolean, caseSensitive: boolean): PeerPattern | null {
  const node: QueryNode = parseQuery(query, { regex, caseSensitive });
  if (node.type !== 'content') return null;
  return { pattern: node.pattern, regex: node.regex, caseSensitive: node.caseSensitive };
}

export function loadQueries(file: string): BenchQuery[] {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${file}: expected a JSON array of queries`);
  const names = new Set<string>();
  const queries = raw.map((q: RawQuery, i): BenchQuery => {
    const where = `${file}[${i}]`;
    if (typeof q.name !== 'string' || typeof q.query !== 'string' || q.query === '') throw new Error(`${where}: name and query must be non-empty strings`);
    if (typeof q.regex !== 'boolean' || typeof q.caseSensitive !== 'boolean') throw new Error(`${where}: regex and caseSensitive must be booleans`);
    if (!KINDS.includes(q.kind as QueryKind)) throw new Error(`${where}: kind must be one of ${KINDS.join(', ')}`);
    if (typeof q.set !== 'string' || q.set === '') throw new Error(`${where}: set must be a non-empty string (e.g. "issue-3")`);
    if (q.matches !== undefined && (!Number.isInteger(q.matches) || q.matches <= 0)) throw new Error(`${where}: matches must be a positive integer`);
    if (q.http !== undefined && q.http !== 'search' && q.http !== 'stream') throw new Error(`${where}: http must be "search" or "stream"`);
    if (names.has(q.name)) throw new Error(`${where}: duplicate name ${q.name}`);
    names.add(q.name);
    let derived: PeerPattern | null;
    try {
      derived = derivePeer(q.query, q.regex, q.caseSensitive);
    } catch (err) {
      throw new Error(`${where} (${q.name}): the query does not parse: ${(err as Error).message}`);
    }
    let peer: PeerPattern | null;
    if (q.peer === null) {
      peer = null;
    } else if (q.peer === undefined) {
      if (!derived)
        throw new Error(
          `${where} (${q.name}): the query is not one content term, so the peers' pattern cannot be derived: give "peer": {"pattern", ...} or "peer": null`,
        );
      peer = derived;
    } else {
      if (typeof q.peer.pattern !== 'string' || q.peer.pattern === '') throw new Error(`${where}: peer.pattern must be a non-empty string`);
      if (
        q.peer.path !== undefined &&
        (typeof q.peer.path !== 'string' || q.peer.path === '' || q.peer.path.startsWith('/') || q.peer.path.split('/').includes('..'))
      ) {
        throw new Error(`${where}: peer.path must be a directory relative to the corpus`);
      }
      peer = {
        pattern: q.peer.pattern,
        regex: q.peer.regex ?? q.regex,
        caseSensitive: q.peer.caseSensitive ?? q.caseSensitive,
        ...(q.peer.path !== undefined ? { path: q.peer.path.replace(/\/+$/, '') } : {}),
      };
    }
    return {
      name: q.name,
      query: q.query,
      regex: q.regex,
      caseSensitive: q.caseSensitive,
      kind: q.kind as QueryKind,
      set: q.set,
      ...(q.matches !== undefined ? { matches: q.matches } : {}),
      peer,
      ...(q.pairOf !== undefined ? { pairOf: q.pairOf } : {}),
      ...(q.http !== undefined ? { http: q.http } : {}),
    };
  });
  for (const q of queries) {
    if (q.pairOf === undefined) continue;
    const base = queries.find((b) => b.name === q.pairOf);
    if (!base) throw new Error(`${file}: ${q.name}: pairOf names no query (${q.pairOf})`);
    if ((base.matches ?? null) !== (q.matches ?? null)) throw new Error(`${file}: ${q.name}: a filter pair must use the same matches as ${base.name}`);
  }
  for (const mark of ['search', 'stream'] as const) {
    if (queries.filter((q) => q.http === mark).length > 1) throw new Error(`${file}: at most one query may be marked "http": "${mark}"`);
  }
  if (queries.length === 0) throw new Error(`${file}: the query mix is empty`);
  return queries;
}
