// Repositories whose shard order is the opposite of their rank order, for the tests of a
// stream's order (test/http/stream-order.test.ts, test/web/web-results-order.test.ts).
// A stream sends files in shard order (repository name first) and ranks each message only
// in itself: "alpha" comes first and holds many weak matches (the query's name inside a
// longer identifier: no whole-word bonus), more than a message holds (stream-sink.ts,
// 100 files), so they fill several messages; "omega" comes last with a few strong ones
// (whole words, more of them per file: each a different score), which rank above all of
// alpha's.

import type { ExtraRepo } from './daemon.ts';

export const RANK_QUERY = 'zebra_tally';

/**
 * Weak matches in the first shard, and how many: enough that whatever batches the timing
 * of a stream makes (a message holds at most 100 files), at least 100 come before the
 * message that holds the first of omega's.
 */
export const ALPHA_FILES = 260;
/** Strong matches in the last shard, and how many. */
export const OMEGA_FILES = 6;

export const rankRepos: ExtraRepo[] = [
  {
    name: 'alpha',
    build(repo) {
      const files: Record<string, string> = {};
      for (let i = 0; i < ALPHA_FILES; i++) files[`src/f${String(i).padStart(3, '0')}.c`] = `int v${i} = zebra_tally_total + ${i};\n`;
      repo.commit(files, 'Weak matches');
    },
  },
  {
    name: 'omega',
    build(repo) {
      const files: Record<string, string> = {};
      // File g<i> says it i + 1 times: the later in path order, the higher its text score.
      for (let i = 0; i < OMEGA_FILES; i++) files[`lib/g${i}.c`] = Array.from({ length: i + 1 }, (_, k) => `  n += zebra_tally(${k});\n`).join('');
      repo.commit(files, 'Strong matches');
    },
  },
];

/** The request the web page sends for a query (web/app/search-page.ts), to ask /api/search the same. */
export function pageRequest(query: string, matches: number): Record<string, unknown> {
  return { query, matches, contextLines: 1, isRegexEnabled: false, isCaseSensitivityEnabled: false };
}

/** A file as the tests name it. */
export const fileId = (f: { repository: string; fileName: { text: string } }): string => `${f.repository}/${f.fileName.text}`;
