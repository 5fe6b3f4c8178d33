// A shaped file cut to fewer match ranges from its JSON alone, where shaping it again
// needs its shard (Searcher's reshape): the last file a search's budget takes, shaped
// whole by another node of a cluster, was a round trip to that node (cluster/fan-out.ts):
// a sizeable share of a common word's answer, most of it waiting for threads to wake.
//
// A file's JSON is what JSON.stringify writes of its FileResult (file-json.ts; held to it
// by test/search/file-json.test.ts), and the first `budget` ranges of a hit make the same
// name ranges and chunks as the whole hit up to the chunk where they end (chunkSpans
// builds each chunk from its ranges in order; later ranges only grow the last chunk). So
// the chunks kept whole stay the bytes they are, the one the budget ends inside is
// parsed, cut and written again, and the result is the JSON the shard's writer gives for
// the budget (test/search/file-json-cut.test.ts holds the two to the same bytes), except
// where the budget ends inside a chunk that names definitions: which of them the shorter
// chunk keeps depends on their lines, which the JSON does not hold. Then nothing is cut
// here.

import { lastLineOf } from './range-locations.ts';
import type { ShapedFile } from './file-json.ts';
import type { Chunk, FileResult, Range } from './types.ts';

const decoder = new TextDecoder();

/**
 * `f` with its first `budget` match ranges (name ranges first, as the writer takes them),
 * shaped with `contextLines`; undefined when its JSON cannot say (see above), or holds
 * fewer ranges than that.
 */
export function cutFile(f: ShapedFile, budget: number, contextLines: number): ShapedFile | undefined {
  if (f.json.length === 0 || budget >= f.count || budget < 1) return undefined;
  const json = cutJson(Buffer.from(f.json.buffer, f.json.byteOffset, f.json.length), budget, contextLines);
  if (json === undefined) return undefined;
  // Field by field: a message's file reads its path and hit on demand, getters a spread would not copy.
  return {
    json,
    count: budget,
    total: f.total,
    score: f.score,
    repositoryId: f.repositoryId,
    repository: f.repository,
    path: f.path,
    hit: f.hit,
    shard: f.shard,
  };
}

/**
 * The JSON cut. The chunks kept whole stay the bytes they are, found by reading the JSON
 * as the writer spells it; only a chunk the budget ends inside is parsed. (Parsing a file
 * of many ranges and writing it again whole, on the path of the search's answer, took
 * several times as long.)
 */
function cutJson(b: Buffer, budget: number, contextLines: number): Buffer | undefined {
  const file = layout(b);
  if (file === undefined) return undefined;
  if (budget < file.names) {
    // (Rare: a budget that ends among the path's own matches.)
    const o = JSON.parse(decoder.decode(b)) as FileResult;
    o.fileName.matchRanges = o.fileName.matchRanges.slice(0, budget);
    o.chunks = [];
    return Buffer.from(JSON.stringify(o), 'utf8');
  }
  let left = budget - file.names;
  let end = file.chunksOpen;
  for (const c of file.chunks) {
    if (left === 0) break;
    if (c.ranges <= left) {
      left -= c.ranges;
      end = c.end;
      continue;
    }
    if (c.symbols > 0) return undefined;
    const cut = Buffer.from(JSON.stringify(cutChunk(JSON.parse(b.toString('utf8', c.start, c.end)) as Chunk, left, contextLines)), 'utf8');
    return Buffer.concat([b.subarray(0, c.start), cut, b.subarray(file.chunksClose)]);
  }
  return Buffer.concat([b.subarray(0, end), b.subarray(file.chunksClose)]);
}

/** Chunk `c` with its first `left` ranges (fewer than it has; it names no definitions). */
function cutChunk(c: Chunk, left: number, contextLines: number): Chunk {
  const ranges = c.matchRanges.slice(0, left);
  // The chunk's lines up to its last kept match's last line and its lines of context
  // (fewer at the file's end: the chunk's own end is then the file's).
  const lines = c.content.split('\n');
  const first = c.contentStart.lineNumber;
  const last = Math.min(Math.max(...ranges.map(lastLine)) + contextLines, first + lines.length - 1);
  return { content: lines.slice(0, last - first + 1).join('\n'), matchRanges: ranges, contentStart: c.contentStart, symbols: c.symbols };
}

function lastLine(r: Range): number {
  return lastLineOf(r.start.byteOffset, r.end.byteOffset, r.end.lineNumber, r.end.column);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Where a file's JSON holds what a cut needs: its name ranges, and each chunk's bytes and counts. */
interface Layout {
  names: number;
  /** Just past the chunks array's "[" and at its "]". */
  chunksOpen: number;
  chunksClose: number;
  chunks: Array<{ start: number; end: number; ranges: number; symbols: number }>;
}

// The writer's own spelling of a name's and a chunk's fields, in its order (file-json.ts
// writeFile, writeChunks): read as such, not walked key by key (a file of many ranges took
// longer to walk than to parse). JSON in any other shape is not cut here.
const NAME = Buffer.from('{"text":');
const MATCH_RANGES = Buffer.from(',"matchRanges":[');
const CONTENT = Buffer.from('{"content":');
const CONTENT_START = Buffer.from('],"contentStart":{');
const SYMBOLS = Buffer.from('},"symbols":[');
/** A range's end: its end location's "}" and its own (locations hold numbers only). */
const RANGE_END = Buffer.from('}}');

/** Walks a FileResult's JSON (compact, as the writer writes it) for its layout; undefined when it is not spelled so. */
function layout(b: Buffer): Layout | undefined {
  const out: Layout = { names: 0, chunksOpen: 0, chunksClose: 0, chunks: [] };
  try {
    members(b, 0, (key, at) => {
      if (key === 'fileName') {
        const r = ranges(b, expect(b, stringEnd(b, expect(b, at, NAME)), MATCH_RANGES));
        out.names = r.count;
        if (b[r.end] !== CLOSE_OBJECT) throw new Error('a name not spelled as the writer spells it');
        return r.end + 1;
      }
      if (key !== 'chunks') return skip(b, at);
      out.chunksOpen = at + 1;
      let p = at + 1;
      if (b[p] !== CLOSE_ARRAY) {
        for (;;) {
          const start = p;
          const r = ranges(b, expect(b, stringEnd(b, expect(b, p, CONTENT)), MATCH_RANGES));
          p = b.indexOf(CLOSE_OBJECT, expect(b, r.end - 1, CONTENT_START));
          let symbols = 0;
          p = elements(b, expect(b, p, SYMBOLS) - 1, () => symbols++);
          if (b[p] !== CLOSE_OBJECT) throw new Error('a chunk not spelled as the writer spells it');
          p++;
          out.chunks.push({ start, end: p, ranges: r.count, symbols });
          if (b[p] === COMMA) p++;
          else break;
        }
      }
      if (b[p] !== CLOSE_ARRAY) throw new Error('chunks not spelled as the writer spells them');
      out.chunksClose = p;
      return p + 1;
    });
  } catch {
    return undefined;
  }
  // (A file's JSON always has its chunks; without them there is nothing to cut by.)
  return out.chunksClose > 0 ? out : undefined;
}

/** Just past `lit`, which must be at `p`. */
function expect(b: Buffer, p: number, lit: Buffer): number {
  if (p < 0 || b.compare(lit, 0, lit.length, p, p + lit.length) !== 0) throw new Error(`not ${lit.toString()} at ${p}`);
  return p + lit.length;
}

/** The ranges of the array whose first element is at `p` (just past its "["): their count, and the end (just past its "]"). */
function ranges(b: Buffer, p: number): { count: number; end: number } {
  let count = 0;
  if (b[p] !== CLOSE_ARRAY) {
    for (;;) {
      const e = b.indexOf(RANGE_END, p);
      if (e < 0) throw new Error('an unterminated range');
      count++;
      p = e + RANGE_END.length;
      if (b[p] === COMMA) p++;
      else break;
    }
  }
  if (b[p] !== CLOSE_ARRAY) throw new Error('ranges not spelled as the writer spells them');
  return { count, end: p + 1 };
}

/** Calls `each(key, valueStart)` (returning the value's end) for each member of the object at `p`; its end. */
function members(b: Buffer, p: number, each: (key: string, at: number) => number): number {
  p++;
  if (b[p] === CLOSE_OBJECT) return p + 1;
  for (;;) {
    const keyEnd = stringEnd(b, p);
    if (b[keyEnd] !== COLON) throw new Error("not a file's JSON");
    p = each(b.toString('latin1', p + 1, keyEnd - 1), keyEnd + 1);
    if (b[p] === COMMA) p++;
    else return p + 1;
  }
}

/** Calls `each(start, end)` for each element of the array at `p`; the array's end. */
function elements(b: Buffer, p: number, each: (start: number, end: number) => void): number {
  p++;
  if (b[p] === CLOSE_ARRAY) return p + 1;
  for (;;) {
    const e = skip(b, p);
    each(p, e);
    p = e;
    if (b[p] === COMMA) p++;
    else return p + 1;
  }
}

/** The end of the JSON value at `p`. */
function skip(b: Buffer, p: number): number {
  const c = b[p];
  if (c === QUOTE) return stringEnd(b, p);
  if (c === OPEN_OBJECT) return members(b, p, (_k, at) => skip(b, at));
  if (c === OPEN_ARRAY) return elements(b, p, () => {});
  while (p < b.length && b[p] !== COMMA && b[p] !== CLOSE_OBJECT && b[p] !== CLOSE_ARRAY) p++;
  return p;
}

/** Just past the closing quote of the string at `p` (a quote is escaped when an odd run of backslashes precedes it). */
function stringEnd(b: Buffer, p: number): number {
  let q = p + 1;
  for (;;) {
    q = b.indexOf(QUOTE, q);
    if (q < 0) throw new Error("an unterminated string in a file's JSON");
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    q++;
  }
}
