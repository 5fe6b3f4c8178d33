// The search service's side of `type:diff` (diff-search.ts finds, diff-result.ts shapes):
// a blocking search's answer, its wire form, and a stream's one batch.

import type { SearchOptions, WireResponse } from '../search/search-options.ts';
import type { Plan } from '../query/terms.ts';
import type { ManifestRepo } from '../index/manifest.ts';
import type { SearchRequest, SearchResponse } from '../search/types.ts';
import { CommitCatalog } from './commit-catalog.ts';
import { diffAnswer, shapedDiffFiles } from './diff-result.ts';
import { DiffCatalog, diffQuery, findDiffs } from './diff-search.ts';

/** The repositories with a history index, as their tip indexes list them now. */
export type DiffSources = ReadonlyArray<{ repoId: number; repo: ManifestRepo }>;

export class DiffSearch {
  private readonly catalog: DiffCatalog;

  /** `commits` holds the commit records read (the history service shares it with type:commit). */
  constructor(
    dataDir: string,
    private readonly baseUrl: string,
    commits: CommitCatalog = new CommitCatalog(),
  ) {
    this.catalog = new DiffCatalog(dataDir, commits);
  }

  /** Answers a type:diff plan over `repos`; with options.onChunk, its files go in one batch and the answer has none. */
  async search(req: Required<SearchRequest>, plan: Plan, options: SearchOptions, repos: DiffSources): Promise<SearchResponse> {
    const answer = this.answer(req, plan, options, repos);
    if (options.onChunk === undefined) return answer;
    if (answer.files.length > 0) {
      await options.onChunk({ stats: answer.stats, files: shapedDiffFiles(answer.files), repositoryInfo: answer.repositoryInfo });
    }
    return { ...answer, files: [] };
  }

  async searchWire(req: Required<SearchRequest>, plan: Plan, options: SearchOptions, repos: DiffSources): Promise<WireResponse> {
    const answer = this.answer(req, plan, options, repos);
    return { ...answer, files: shapedDiffFiles(answer.files) };
  }

  private answer(req: Required<SearchRequest>, plan: Plan, options: SearchOptions, repos: DiffSources) {
    const startedNs = process.hrtime.bigint();
    const q = diffQuery(plan);
    const found = findDiffs(this.catalog.repos(repos), q, options);
    return diffAnswer(found, { matches: req.matches, ...(q.select === undefined ? {} : { select: q.select }), baseUrl: this.baseUrl, startedNs });
  }
}
