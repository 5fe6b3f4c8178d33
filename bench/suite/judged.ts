// Hand-judged ranking queries: each names the one file a person looking for it wants (a
// function's or type's defining file for its name, the file a file-name query names), and
// the hit rate is the share of queries whose expected file is among the first `top`
// files of the answer. bench/queries/linux-judged.json holds a set for Linux 6.1;
// test/search/ranking-judged.test.ts holds one for trawl's own sources.

import { readFileSync } from 'node:fs';
import type { SearchRequest, SearchResponse } from '../../daemon/search/types.ts';

export interface JudgedQuery {
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  /** The expected file's path in its repository. */
  expect: string;
  /** Why this file is the right answer (for the reader who updates the table). */
  why?: string;
}

export interface JudgedOutcome {
  query: JudgedQuery;
  /** 1-based place of the expected file in the answer; 0 when it is not in it. */
  rank: number;
  /** The first files of the answer, for a report. */
  top: string[];
}

export interface JudgedReport {
  outcomes: JudgedOutcome[];
  hits: number;
  /** hits / queries. */
  hitRate: number;
}

/** Reads a judged-query file (a JSON array of JudgedQuery); a clear error when malformed. */
export function loadJudged(file: string): JudgedQuery[] {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${file}: expected a JSON array of judged queries`);
  return raw.map((q: Partial<JudgedQuery>, i) => {
    const where = `${file}[${i}]`;
    if (typeof q.query !== 'string' || q.query === '' || typeof q.expect !== 'string' || q.expect === '')
      throw new Error(`${where}: query and expect must be non-empty strings`);
    if (typeof q.regex !== 'boolean' || typeof q.caseSensitive !== 'boolean') throw new Error(`${where}: regex and caseSensitive must be booleans`);
    return { query: q.query, regex: q.regex, caseSensitive: q.caseSensitive, expect: q.expect, ...(q.why !== undefined ? { why: q.why } : {}) };
  });
}

/** Runs each query through `search` and scores the answers: hit when the expected file is in the first `top`. */
export async function judge(
  queries: JudgedQuery[],
  search: (req: Required<SearchRequest>) => Promise<SearchResponse>,
  options: { top?: number; matches?: number } = {},
): Promise<JudgedReport> {
  const top = options.top ?? 3;
  const outcomes: JudgedOutcome[] = [];
  for (const q of queries) {
    const res = await search({
      query: q.query,
      matches: options.matches ?? 100,
      contextLines: 0,
      whole: false,
      isRegexEnabled: q.regex,
      isCaseSensitivityEnabled: q.caseSensitive,
    });
    const paths = res.files.map((f) => f.fileName.text);
    outcomes.push({ query: q, rank: paths.indexOf(q.expect) + 1, top: paths.slice(0, top) });
  }
  const hits = outcomes.filter((o) => o.rank >= 1 && o.rank <= top).length;
  return { outcomes, hits, hitRate: queries.length === 0 ? 0 : hits / queries.length };
}

/** One line per miss, for a diagnostic. */
export function describeMisses(report: JudgedReport, top = 3): string[] {
  return report.outcomes
    .filter((o) => o.rank < 1 || o.rank > top)
    .map((o) => `${JSON.stringify(o.query.query)}: expected ${o.query.expect} at ${o.rank === 0 ? 'no place' : `#${o.rank}`}; top ${o.top.join(', ')}`);
}
