// A shaped file cut to fewer match ranges from its JSON alone, where shaping it again
// needs its shard (Searcher's reshape): the last file a search's budget takes, shaped
// whole by another node of a cluster, was a round trip to that node (cluster/fan-out.ts;
// ~0.5 ms of a common word's answer over four nodes, half of it waiting for two threads
// to wake).
//
// A file's JSON is what JSON.stringify writes of its FileResult (shape-file.ts; held to it
// by test/search/file-json.test.ts), and the first `budget` ranges of a hit make the same
// name ranges and chunks as the whole hit up to the chunk where they end (chunkSpans
// builds each chunk from its ranges in order; later ranges only grow the last chunk). So
// the object cut and written again is the JSON the shard's writer gives for the budget
// (test/search/cut-file.test.ts holds the two to the same bytes), except where the budget
// ends inside a chunk that names definitions: which of them the shorter chunk keeps
// depends on their lines, which the JSON does not hold. Then nothing is cut here.

import { lastLineOf } from './shape.ts';
import type { ShapedFile } from './shape-file.ts';
import type { Chunk, FileResult, Range } from './types.ts';

const decoder = new TextDecoder();

/**
 * `f` with its first `budget` match ranges (name ranges first, as the writer takes them),
 * shaped with `contextLines`; undefined when its JSON cannot say (see above), or holds
 * fewer ranges than that.
 */
export function cutFile(f: ShapedFile, budget: number, contextLines: number): ShapedFile | undefined {
  if (f.json.length === 0 || budget >= f.count || budget < 1) return undefined;
  const file = JSON.parse(decoder.decode(f.json)) as FileResult;
  const names = file.fileName.matchRanges;
  let chunks: Chunk[] | undefined = [];
  if (budget < names.length) file.fileName.matchRanges = names.slice(0, budget);
  else chunks = cutChunks(file.chunks, budget - names.length, contextLines);
  if (chunks === undefined) return undefined;
  file.chunks = chunks;
  // Field by field: a message's file reads its path and hit on demand, getters a spread would not copy.
  return { json: Buffer.from(JSON.stringify(file), 'utf8'), count: budget, total: f.total, score: f.score, repositoryId: f.repositoryId, repository: f.repository, path: f.path, hit: f.hit, shard: f.shard };
}

/** The chunks of the first `left` content ranges; undefined when they end inside a chunk with symbols. */
function cutChunks(all: Chunk[], left: number, contextLines: number): Chunk[] | undefined {
  const kept: Chunk[] = [];
  for (const c of all) {
    if (left === 0) break;
    const n = c.matchRanges.length;
    if (n <= left) {
      kept.push(c);
      left -= n;
      continue;
    }
    if (c.symbols.length > 0) return undefined;
    const ranges = c.matchRanges.slice(0, left);
    // The chunk's lines up to its last kept match's last line and its lines of context
    // (fewer at the file's end: the chunk's own end is then the file's).
    const lines = c.content.split('\n');
    const first = c.contentStart.lineNumber;
    const last = Math.min(Math.max(...ranges.map(lastLine)) + contextLines, first + lines.length - 1);
    kept.push({ content: lines.slice(0, last - first + 1).join('\n'), matchRanges: ranges, contentStart: c.contentStart, symbols: c.symbols });
    left = 0;
  }
  return kept;
}

function lastLine(r: Range): number {
  return lastLineOf(r.start.byteOffset, r.end.byteOffset, r.end.lineNumber, r.end.column);
}
