// One hit of a shard shaped into the API's file result (FileResult), in the wire form the
// HTTP layer writes: the file's JSON as UTF-8 bytes. The workers shape the hits of the
// shards they search while the documents are at hand (read, checked and in the CPU's
// caches): a stream's all, a blocking search's best (search-worker.ts); the main thread
// merges them by score and writes them as they are (wire.ts). It shapes a file itself
// only when a search's budget of match ranges ends inside it (the file then gets fewer
// ranges, and its chunks differ) or when its worker left it unshaped. Both places shape
// through shapeFile(), so the two can never disagree.

import type { RepoFacts, Shard } from '../index/shard-reader.ts';
import type { CodeHostType } from '../repos/hosts/types.ts';
import { DEFAULT_BASE_URL, displayName, externalFileUrl, fileWebUrl, repoWebUrl } from '../repos/web-urls.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { buildChunks, locateRanges, nameRanges, wholeContent } from './shape.ts';
import { rangeCount, type ShardHit } from './shard-search.ts';
import type { Chunk, FileResult, RepositoryInfo } from './types.ts';

/** What shaping takes from the request and the daemon's settings. */
export interface ShapeOptions {
  contextLines: number;
  whole: boolean;
  /** `whole: true` gives at most this much of a file (settings.http.maxSourceBytes); Infinity: all. */
  maxWholeBytes: number;
  /** The daemon's public URL, for webUrl fields. */
  baseUrl: string;
}

/** The repository as the manifest lists it now (it may have changed since the shard was built). */
export interface ListedRepo extends RepoFacts {
  displayName: string;
  codeHostType: CodeHostType;
  externalWebUrl?: string;
}

/** The repository as results show it. */
export interface ResultRepo {
  id: number;
  name: string;
  codeHostType: CodeHostType;
  externalWebUrl?: string;
  defaultBranch: string;
  /** The response's repositoryInfo entry for it. */
  info: RepositoryInfo;
}

/** The repository as results show it: the manifest's record, else what the shard stored. */
export function resultRepo(repoId: number, listed: ListedRepo | undefined, shard: Shard, baseUrl: string = DEFAULT_BASE_URL): ResultRepo {
  const m = shard.meta.repo;
  const base = listed
    ? { id: repoId, name: listed.name, displayName: listed.displayName, codeHostType: listed.codeHostType, defaultBranch: shard.branches.names[0] ?? m.branch }
    : { id: m.id, name: m.name, displayName: displayName(m.name), codeHostType: m.codeHostType as CodeHostType, defaultBranch: m.branch };
  const out: ResultRepo = {
    id: base.id,
    name: base.name,
    codeHostType: base.codeHostType,
    defaultBranch: base.defaultBranch,
    info: { id: base.id, codeHostType: base.codeHostType, name: base.name, displayName: base.displayName, webUrl: repoWebUrl(baseUrl, base.name) },
  };
  if (listed?.externalWebUrl) out.externalWebUrl = listed.externalWebUrl;
  else if (!listed && m.codeHostType !== 'genericGitHost' && m.name.includes('/')) out.externalWebUrl = `https://${m.name}`;
  return out;
}

/**
 * A file of a search's answer: what merging needs to know of it, and its wire form once it
 * is shaped. A blocking search's workers shape only the files that can make its answer
 * (search-worker.ts); the others travel unshaped (`json` empty) and are shaped by the
 * searcher if it needs them after all.
 */
export interface ShapedFile {
  /** The FileResult's JSON, UTF-8; empty while the file is not shaped. */
  json: Uint8Array;
  /**
   * Match ranges it holds as shaped (a match without ranges counts one); `total` is the
   * hit's. Fewer when a budget ended inside it: then it is shaped again for any other
   * budget (`json` holds `count` ranges).
   */
  count: number;
  total: number;
  score: number;
  repositoryId: number;
  repository: string;
  path: string;
  /** The hit it was shaped from: shaped again with fewer ranges when a budget ends inside it. */
  hit: ShardHit;
  /** The index of its shard in the search's shards. */
  shard: number;
}

const UNSHAPED = new Uint8Array(0);

/** A hit as a file of the answer, not shaped yet. */
export function unshapedFile(hit: ShardHit, repo: ResultRepo, path: string, shard: number): ShapedFile {
  const total = rangeCount(hit.ranges, hit.nameRanges);
  return { json: UNSHAPED, count: total, total, score: hit.score, repositoryId: repo.id, repository: repo.name, path, hit, shard };
}

/** Shapes `f` (its wire form) with at most `budget` match ranges. Reads the document: a ShardError when it is corrupt. */
export function shapeInto(f: ShapedFile, shard: Shard, repo: ResultRepo, o: ShapeOptions, budget = Infinity): void {
  const { file, count } = shapeFile(shard, repo, f.hit, o, budget);
  f.json = Buffer.from(JSON.stringify(file));
  f.count = count;
}

/**
 * Shapes one hit with at most `budget` of its match ranges (the name's first, then the
 * content's). Reads the document (Shard.contentOf: a ShardError when it is corrupt).
 */
export function shapeFile(shard: Shard, repo: ResultRepo, hit: ShardHit, o: ShapeOptions, budget = Infinity): { file: FileResult; count: number } {
  const path = shard.name(hit.doc);
  const names = hit.nameRanges.slice(0, 2 * Math.min(budget, hit.nameRanges.length / 2));
  const ranges = hit.ranges.slice(0, 2 * Math.min(budget - names.length / 2, hit.ranges.length / 2));
  const content = shard.contentOf(hit.doc);
  const located = locateRanges(content, ranges);
  const symbols = shard.symbolsOverlapping(hit.doc, located.map((r) => [r.start.lineNumber, r.end.lineNumber] as [number, number]));
  // Links point at the first branch the file matched on (the default branch when it did).
  const branch = hit.branches[0] ?? repo.defaultBranch;
  const file: FileResult = {
    fileName: { text: path, matchRanges: nameRanges(path, names) },
    webUrl: fileWebUrl(o.baseUrl, repo.name, branch, path),
    repository: repo.name,
    repositoryId: repo.id,
    language: shard.language(hit.doc),
    chunks: withSymbols(buildChunks(content, located, o.contextLines), symbols),
    branches: hit.branches,
  };
  const external = externalFileUrl(repo.codeHostType, repo.externalWebUrl, branch, path);
  if (external) file.externalWebUrl = external;
  if (o.whole) {
    const whole = wholeContent(content, o.maxWholeBytes);
    file.content = whole.content;
    if (whole.truncated) file.contentTruncated = true;
  }
  return { file, count: rangeCount(ranges, names) };
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
