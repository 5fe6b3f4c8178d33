// The Searcher: runs a search over every shard of the data dir on the worker pool,
// collects the shards' answers in shard order (repository name, then shard number, so
// results are deterministic however the threads interleave), stops the remaining shards
// once `matches` ranges are in hand, and shapes the response.

import { join } from 'node:path';
import { readAllManifests, shardsDir } from '../index/data-dir.ts';
import { Shard } from '../index/shard-reader.ts';
import type { ShardRepoMeta } from '../index/shard-format.ts';
import { planQuery } from '../query/plan.ts';
import { DEFAULT_BASE_URL, displayName, externalFileUrl, fileWebUrl, repoWebUrl } from '../repos/web-urls.ts';
import { SearchPool } from './pool.ts';
import { packr, type ShardReply } from './protocol.ts';
import { buildChunks, locateRanges, nameRanges } from './shape.ts';
import type { ShardHit } from './shard-search.ts';
import { compareRanked, score } from './rank.ts';
import type { SymbolDef } from '../index/symbols.ts';
import { emptyStats, type Chunk, type FileResult, type RepositoryInfo, type SearchRequest, type SearchResponse, type SearchStats } from './types.ts';

export interface SearcherOptions {
  dataDir: string;
  /** Worker threads; default: the machine's available parallelism. */
  workers?: number;
  /** The daemon's public URL, for webUrl fields. */
  baseUrl?: string;
}

export interface SearchOptions {
  /** Bypass the index: verify every document with the reference matcher (the oracle). */
  brute?: boolean;
}

interface ShardEntry {
  path: string;
  repoId: number;
}

let nextPlanId = 1;

export class Searcher {
  private readonly options: SearcherOptions;
  private pool: SearchPool | undefined;
  private shards: ShardEntry[] = [];
  private readonly mapped = new Map<string, Shard>();

  constructor(options: SearcherOptions) {
    this.options = options;
    this.refresh();
  }

  /** Re-reads the manifests: picks up repositories indexed since the last call. */
  refresh(): void {
    const entries: ShardEntry[] = [];
    for (const m of readAllManifests(this.options.dataDir)) {
      for (const name of m.shards) entries.push({ path: join(shardsDir(this.options.dataDir, m.repoId), name), repoId: m.repoId });
    }
    const live = new Set(entries.map((e) => e.path));
    const gone = [...this.mapped.keys()].filter((p) => !live.has(p));
    for (const p of gone) this.mapped.delete(p);
    if (gone.length > 0) this.pool?.forget(gone);
    this.shards = entries;
  }

  get shardCount(): number {
    return this.shards.length;
  }

  async search(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<SearchResponse> {
    const started = process.hrtime.bigint();
    const tCompile = process.hrtime.bigint();
    const plan = planQuery(req);
    const compileNs = Number(process.hrtime.bigint() - tCompile);
    const pool = (this.pool ??= new SearchPool(this.options.workers));
    const limit = req.matches;
    const cancel = new SharedArrayBuffer(4);
    const flag = new Int32Array(cancel);
    const shards = this.shards;
    const planId = nextPlanId++;
    const planBytes = packr.pack(plan);
    const replies = shards.map((s) => pool.run({ shardPath: s.path, planId, plan: planBytes, limit, brute: options.brute === true }, cancel));

    const stats = emptyStats();
    stats.matchTreeConstruction = compileNs;
    let found = 0;
    let more = false;
    const kept: Array<{ shard: ShardEntry; hits: ShardHit[] }> = [];
    for (let i = 0; i < shards.length; i++) {
      const reply: ShardReply = await replies[i]!;
      if (reply.status === 'skipped') {
        stats.shardsSkipped++;
        continue;
      }
      stats.wait += reply.queuedNs;
      if (reply.status === 'failed') {
        stats.crashes++;
        continue;
      }
      const r = reply.result;
      for (const [k, v] of Object.entries(r.counters)) (stats as unknown as Record<string, number>)[k]! += v;
      if (r.filtered) stats.shardsSkippedFilter++;
      else stats.shardsScanned++;
      stats.totalMatchCount += r.found;
      if (r.more) more = true;
      // Hits of a shard after the limit was reached are dropped (their work is counted):
      // the answer is the first `matches` ranges in shard order.
      if (found <= limit && r.hits.length > 0) kept.push({ shard: shards[i]!, hits: r.hits });
      found += r.found;
      if (found > limit) Atomics.store(flag, 0, 1);
    }

    const response = this.shape(req, kept, stats);
    stats.flushReason = 'FLUSH_REASON_FINAL_FLUSH';
    stats.duration = Number(process.hrtime.bigint() - started);
    response.isSearchExhaustive =
      !more && stats.filesSkipped === 0 && stats.shardsSkipped === 0 && stats.crashes === 0 && stats.totalMatchCount === stats.actualMatchCount;
    return response;
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
    this.mapped.clear();
  }

  private shard(path: string): Shard {
    let s = this.mapped.get(path);
    if (!s) {
      s = Shard.open(path);
      this.mapped.set(path, s);
    }
    return s;
  }

  private shape(req: Required<SearchRequest>, kept: Array<{ shard: ShardEntry; hits: ShardHit[] }>, stats: SearchStats): SearchResponse {
    const baseUrl = this.options.baseUrl ?? DEFAULT_BASE_URL;
    const ranked: Array<{ file: FileResult; score: number; repository: string; path: string }> = [];
    const repos = new Map<number, RepositoryInfo>();
    let budget = req.matches;
    outer: for (const { shard: entry, hits } of kept) {
      const shard = this.shard(entry.path);
      const repo: ShardRepoMeta = shard.meta.repo;
      for (const hit of hits) {
        if (budget <= 0) break outer;
        const path = shard.name(hit.doc);
        const names = hit.nameRanges.slice(0, 2 * Math.min(budget, hit.nameRanges.length / 2));
        budget -= names.length / 2;
        const ranges = hit.ranges.slice(0, 2 * Math.min(budget, hit.ranges.length / 2));
        budget -= ranges.length / 2;
        if (names.length === 0 && ranges.length === 0) budget--; // a match without ranges (e.g. lang:go) counts one
        const content = shard.contentOf(hit.doc);
        const located = locateRanges(content, ranges);
        const symbols = shard.symbolsOverlapping(hit.doc, located.map((r) => [r.start.lineNumber, r.end.lineNumber] as [number, number]));
        const file: FileResult = {
          fileName: { text: path, matchRanges: nameRanges(path, names) },
          webUrl: fileWebUrl(baseUrl, repo.name, repo.branch, path),
          repository: repo.name,
          repositoryId: repo.id,
          language: shard.language(hit.doc),
          chunks: withSymbols(buildChunks(content, located, req.contextLines), symbols),
          branches: [repo.branch],
        };
        const external = externalFileUrl(repo.codeHostType, repo.name, repo.branch, path);
        if (external) file.externalWebUrl = external;
        if (req.whole) file.content = content.toString('utf8');
        stats.actualMatchCount += (names.length + ranges.length) / 2;
        const lines = located.map((r) => r.start.lineNumber);
        ranked.push({ file, repository: repo.name, path, score: score({ repository: repo.name, path, content, ranges, nameRanges: names, lines, symbols }) });
        if (!repos.has(repo.id)) {
          repos.set(repo.id, { id: repo.id, codeHostType: repo.codeHostType, name: repo.name, displayName: displayName(repo.name), webUrl: repoWebUrl(baseUrl, repo.name) });
        }
      }
    }
    ranked.sort(compareRanked);
    stats.fileCount = ranked.length;
    return { stats, files: ranked.map((r) => r.file), repositoryInfo: [...repos.values()], isSearchExhaustive: false };
  }
}

/** Each chunk's symbols: the definitions whose line span contains one of its matches. */
function withSymbols(chunks: Chunk[], symbols: SymbolDef[]): Chunk[] {
  if (symbols.length === 0) return chunks;
  for (const chunk of chunks) {
    const hit = symbols.filter((s) => chunk.matchRanges.some((r) => s.line <= r.end.lineNumber && r.start.lineNumber <= s.endLine));
    chunk.symbols = hit.map((s) => (s.parent ? { symbol: s.name, kind: s.kind, parent: { symbol: s.parent.name, kind: s.parent.kind } } : { symbol: s.name, kind: s.kind }));
  }
  return chunks;
}
