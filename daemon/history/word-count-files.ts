// The word counts files (word-counts.ts) as the search service holds them: each read once
// while it is unchanged (a stat per query tells), and answered only while current, i.e.
// covering exactly the shards the history's manifest names now. A file missing, damaged, of
// another version or behind its history is no answer: `history:yes` then searches.

import { statSync } from 'node:fs';
import { wordBudget, type WordBudget } from './word-count-query.ts';
import { readWordCounts, wordCountsPath, type WordCounts } from './word-counts.ts';

export class WordCountFiles {
  private readonly held = new Map<number, { stamp: string; counts: WordCounts | undefined }>();
  /** Queries answered from the files (history-spans.ts counts them): what tells that the search was spared. */
  answered = 0;
  /** What one query may read of them (word-count-query.ts wordBudget; tests lower it). */
  limits: Readonly<WordBudget> = wordBudget();

  constructor(private readonly dataDir: string) {}

  /** Repository `repoId`'s word counts when they cover exactly `shards` (its history's with documents, in manifest order: word-counts.ts countedShards); else undefined. */
  current(repoId: number, shards: ReadonlyArray<{ file: string }>): WordCounts | undefined {
    const path = wordCountsPath(this.dataDir, repoId);
    let stamp: string;
    try {
      const st = statSync(path, { bigint: true });
      stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch {
      this.held.delete(repoId);
      return undefined;
    }
    let kept = this.held.get(repoId);
    if (kept?.stamp !== stamp) {
      let counts: WordCounts | undefined;
      try {
        counts = readWordCounts(path);
      } catch {
        counts = undefined; // read as absent: the next history update makes it again
      }
      kept = { stamp, counts };
      this.held.set(repoId, kept);
    }
    const c = kept.counts;
    if (c === undefined || c.shards.length !== shards.length || !c.shards.every((s, i) => s === shards[i]!.file)) return undefined;
    return c;
  }
}
