// Diff hits (diff-search.ts) as the API's file results, within a search's `matches`.
//
// A result is a FileResult with `commit` and `diff` added; its chunks are the hunks holding
// a matching line, each chunk's content the hunk's lines signed `+` or `-` (types.ts Chunk
// `hunk`), its ranges counted in that content. `matches` bounds the matching lines given
// ranges: a hunk whose matching lines come past it is left out, and so is a result left
// without hunks; the answer is then not exhaustive.

import { detectLanguage } from '../index/language.ts';
import type { ManifestRepo } from '../index/manifest.ts';
import { encodePath, repoWebUrl } from '../repos/web-urls.ts';
import type { ShapedFile } from '../search/file-json.ts';
import type { Chunk, FileResult, Range, RepositoryInfo, SearchStats } from '../search/types.ts';
import type { DiffFound, DiffHit } from './diff-search.ts';
import { lineAsMatched, lineText } from './diff-store.ts';

export interface DiffAnswer {
  files: FileResult[];
  stats: SearchStats;
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

/** The first hits of `found` as results, up to `matches` matching lines. */
export function diffAnswer(found: DiffFound, o: { matches: number; select?: 'added' | 'removed'; baseUrl: string; startedNs: bigint }): DiffAnswer {
  let budget = o.matches;
  let given = 0;
  let cut = false;
  const files: FileResult[] = [];
  const repos = new Map<number, RepositoryInfo>();
  for (const hit of found.hits) {
    if (budget <= 0) {
      cut = true;
      break;
    }
    const chunks: Chunk[] = [];
    for (const h of hit.hunks) {
      const shaped = hunkChunk(hit, h, found, o.select, budget);
      if (shaped.given < shaped.matching) cut = true;
      if (shaped.given === 0) continue;
      budget -= shaped.given;
      given += shaped.given;
      chunks.push(shaped.chunk);
    }
    if (chunks.length === 0) continue;
    files.push(fileResult(hit, chunks, o.baseUrl));
    repos.set(hit.repo.repoId, repositoryInfo(hit.repo.repoId, hit.repo.repo, o.baseUrl));
  }
  const stats = {
    ...found.stats,
    actualMatchCount: given,
    totalMatchCount: found.lines,
    fileCount: files.length,
    duration: Number(process.hrtime.bigint() - o.startedNs),
    flushReason: 'FLUSH_REASON_FINAL_FLUSH' as const,
  };
  return { files, stats, repositoryInfo: [...repos.values()], isSearchExhaustive: !cut && !found.stopped };
}

function repositoryInfo(id: number, repo: ManifestRepo, baseUrl: string): RepositoryInfo {
  return { id, codeHostType: repo.codeHostType, name: repo.name, displayName: repo.displayName, webUrl: repoWebUrl(baseUrl, repo.name) };
}

/** The daemon's page of a commit (the web UI's /<repo>/-/commit/<id>). */
export function commitWebUrl(baseUrl: string, repoName: string, id: string): string {
  return `${baseUrl}/${encodePath(repoName)}/-/commit/${id}`;
}

function fileResult(hit: DiffHit, chunks: Chunk[], baseUrl: string): FileResult {
  const r = hit.repo.records;
  // A hit's commit has its record (diff-search.ts gives no hits of commits without one).
  const c = hit.repo.commits[hit.commit]!;
  const path = r.paths[r.files[hit.file * 4 + 1]!]!;
  const oldAt = r.files[hit.file * 4 + 2]!;
  const out: FileResult = {
    fileName: { text: path, matchRanges: [] },
    webUrl: commitWebUrl(baseUrl, hit.repo.repo.name, c.id),
    repository: hit.repo.repo.name,
    repositoryId: hit.repo.repoId,
    language: detectLanguage(path),
    chunks,
    branches: [],
    commit: { id: c.id, parents: c.parents, author: c.author, committer: c.committer, message: c.message },
    diff: oldAt >= 0 ? { parent: c.parents[0] ?? null, path, oldPath: r.paths[oldAt]! } : { parent: c.parents[0] ?? null, path },
  };
  if (hit.repo.repo.externalWebUrl !== undefined) out.externalWebUrl = hit.repo.repo.externalWebUrl;
  return out;
}

/** Hunk `h` as a chunk: its matching lines get ranges while `budget` lasts. */
function hunkChunk(
  hit: DiffHit,
  h: number,
  found: DiffFound,
  select: 'added' | 'removed' | undefined,
  budget: number,
): { chunk: Chunk; given: number; matching: number } {
  const r = hit.repo.records;
  const first = h === 0 ? 0 : r.hunks[h * 5 - 1]!;
  const end = r.hunks[h * 5 + 4]!;
  const parts: Buffer[] = [];
  const matchRanges: Range[] = [];
  let offset = 0;
  let given = 0;
  let matching = 0;
  for (let e = first; e < end; e++) {
    const entry = r.entries[e]!;
    const id = entry >>> 1;
    const added = (entry & 1) === 1;
    const text = lineText(r, id);
    const lineNumber = e - first + 1;
    if (e > first) {
      parts.push(NEWLINE);
      offset += 1;
    }
    if (hit.matched[id] === 1 && (select === undefined || added === (select === 'added'))) {
      const ranges = found.matcher.ranges(lineAsMatched(r, id), text.length);
      matching++;
      if (given < budget) {
        given++;
        for (const [s, t] of ranges) {
          matchRanges.push({
            start: { byteOffset: offset + 1 + s, lineNumber, column: 2 + codePoints(text, s) },
            end: { byteOffset: offset + 1 + t, lineNumber, column: 2 + codePoints(text, t) },
          });
        }
      }
    }
    parts.push(added ? PLUS : MINUS, text);
    offset += 1 + text.length;
  }
  const chunk: Chunk = {
    content: Buffer.concat(parts).toString('utf8'),
    matchRanges,
    contentStart: { byteOffset: 0, lineNumber: 1, column: 1 },
    symbols: [],
    hunk: { oldStart: r.hunks[h * 5]!, oldLines: r.hunks[h * 5 + 1]!, newStart: r.hunks[h * 5 + 2]!, newLines: r.hunks[h * 5 + 3]! },
  };
  return { chunk, given, matching };
}

const NEWLINE = Buffer.from('\n');
const PLUS = Buffer.from('+');
const MINUS = Buffer.from('-');

/** Code points in the first `bytes` bytes of a UTF-8 line. */
function codePoints(line: Buffer, bytes: number): number {
  let n = 0;
  for (let i = 0; i < bytes; i++) if ((line[i]! & 0xc0) !== 0x80) n++;
  return n;
}

/** Results in their wire form, each with a score that keeps them in this order when a client sorts a stream by it. */
export function shapedDiffFiles(files: FileResult[]): ShapedFile[] {
  return files.map((f, i) => {
    const ranges = f.chunks.reduce((n, c) => n + c.matchRanges.length, 0);
    const score = files.length - i;
    return {
      json: Buffer.from(JSON.stringify(f), 'utf8'),
      count: Math.max(1, ranges),
      total: Math.max(1, ranges),
      score,
      repositoryId: f.repositoryId,
      repository: f.repository,
      path: f.fileName.text,
      hit: { doc: 0, member: 0, ranges: [], nameRanges: [], branches: [], termFreqs: [], score, definition: false },
      shard: 0,
    };
  });
}
