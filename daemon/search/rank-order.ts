// The order of ranked files: best score first, ties by repository name, then path, in
// byte order (API-DETAILS section 2.3; rank.ts computes the scores). It is its own module,
// free of anything Node-only, because two places must compare alike: the searcher, which
// ranks a blocking search's files and each batch of a stream (collect-sink.ts,
// stream-sink.ts), and the web page (web/app/search-page.ts, bundled by esbuild), which
// merges a stream's batches, each file carrying its `score`, into the order /api/search
// gives.

/** What the order reads of a file: its score (rank.ts), repository name and path. */
export interface RankKey {
  score: number;
  repository: string;
  path: string;
}

/** Best first; ties by repository, then path, in byte order. */
export function compareRanked(a: RankKey, b: RankKey): number {
  return b.score - a.score || byteCompare(a.repository, b.repository) || byteCompare(a.path, b.path);
}

/**
 * UTF-8 byte order without encoding: it is code point order, which UTF-16 code unit order
 * (JavaScript's <) matches except between a surrogate (a code point above U+FFFF) and a
 * code unit from U+E000 up, where the code point is the larger. Ranking sorts compare many
 * pairs: this allocates nothing.
 */
export function byteCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? (y >= 0xe000 ? 1 : x - y) : x >= 0xe000 ? -1 : x - y;
    return x - y;
  }
  return a.length - b.length;
}
