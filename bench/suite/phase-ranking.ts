// The ranking line of `trawl bench run`: the hand-judged queries of the corpus
// (judged.ts; bench/queries/linux-judged.json for --corpus linux) run on the built index,
// and the share whose expected file is in the top 3: with matches 100 (what a user gets by
// default) and with every match ranked (what the score alone does). Recorded as a note.

import { Searcher } from '../../daemon/search/searcher.ts';
import { judge, describeMisses, loadJudged } from './judged.ts';
import { MATCH_LIMIT } from './latency.ts';

/** Every match ranked: far above any judged query's match count on Linux. */
const ALL_MATCHES = 1_000_000;

export interface RankingLine {
  queries: number;
  /** Hits in the top 3 with matches MATCH_LIMIT, and with every match ranked. */
  hits: number;
  hitsAllRanked: number;
  line: string;
}

export async function rankingPhase(dataDir: string, judgedFile: string, log: (s: string) => void): Promise<RankingLine> {
  const queries = loadJudged(judgedFile);
  const searcher = new Searcher({ dataDir });
  try {
    const search = (req: Parameters<Searcher['search']>[0]) => searcher.search(req);
    const limited = await judge(queries, search, { matches: MATCH_LIMIT, top: 3 });
    const all = await judge(queries, search, { matches: ALL_MATCHES, top: 3 });
    const pct = (n: number) => `${((100 * n) / Math.max(1, queries.length)).toFixed(0)}%`;
    const line = `ranking: judged queries with the expected file in the top 3: ${limited.hits}/${queries.length} (${pct(limited.hits)}) with matches ${MATCH_LIMIT}, ${all.hits}/${queries.length} (${pct(all.hits)}) with every match ranked`;
    log(line);
    for (const m of describeMisses(all)) log(`ranking miss (every match ranked): ${m}`);
    return { queries: queries.length, hits: limited.hits, hitsAllRanked: all.hits, line };
  } finally {
    await searcher.close();
  }
}
