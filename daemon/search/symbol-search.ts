// sym: through the shard's symbol index (index/symbol-index.ts): the names a term matches
// are found once per shard, then their definitions give the candidate documents and the
// match ranges; no document is read and no per-document symbol list is scanned.
//
// Finding the names, cheapest way first:
// - `^prefix…` with an ASCII prefix: the names whose folded form starts with the prefix
//   are one run of the sorted table (two binary searches); each is checked by the matcher.
// - otherwise the term's trigrams select names (symbol-ngrams index the names), and the
//   matcher runs once per selected name, not once per definition of it;
// - a plain literal too short for trigrams: one scan of all the names (one buffer);
// - anything else without trigrams: the matcher on every distinct name.
// The matcher decides every name, so the answer is the matcher's, whichever way was taken.

import type { Shard } from '../index/shard-reader.ts';
import { foldKey, type SymbolIndex } from '../index/symbol-index.ts';
import type { NgramQuery } from '../query/ngram-query.ts';
import { parseNodeRe2Pattern, type Re2Node } from '../query/re2-syntax.ts';
import type { Term } from '../query/terms.ts';
import { NO_NAME_START } from '../symbols/name-range.ts';
import type { Matcher } from './matcher.ts';

export interface SymbolHits {
  /** Documents with a matching definition whose line spells its name, ascending. */
  docs: Uint32Array;
  /** Per document: flat [start, end, ...] ranges of the matching names, in record order (by line). */
  ranges: Map<number, number[]>;
}

/** What the pattern's shape allows (search order above). */
interface Shape {
  /** Folded ASCII text every match starts a name with; '' when none is known. */
  prefix: string;
  /** The pattern is a sequence of literal characters, none a "\n": no match spans two names. */
  literal: boolean;
}

const shapes = new WeakMap<Term, Shape>();

/** The last shard's answers, by matcher: a tree asks for its candidates, then per document. */
let cache: { shard: Shard; hits: Map<Matcher, SymbolHits> } | undefined;

/**
 * The definitions the term matches in the shard. `namesByTrigram` evaluates an n-gram
 * query on the shard's symbol-ngrams (a set of name numbers, null for all).
 */
export function symbolHits(shard: Shard, index: SymbolIndex, term: Term, matcher: Matcher, namesByTrigram: (q: NgramQuery) => Uint32Array | null): SymbolHits {
  if (cache?.shard !== shard) cache = { shard, hits: new Map() };
  let hits = cache.hits.get(matcher);
  if (!hits) {
    hits = definitions(shard, index, matchingNames(index, term, matcher, namesByTrigram));
    cache.hits.set(matcher, hits);
  }
  return hits;
}

/** The names the matcher accepts, ascending. */
export function matchingNames(index: SymbolIndex, term: Term, matcher: Matcher, namesByTrigram: (q: NgramQuery) => Uint32Array | null): number[] {
  const shape = shapeOf(term);
  const out: number[] = [];
  const check = (n: number) => {
    if (matcher.find(index.name(n), 1).length > 0) out.push(n);
  };
  if (shape.prefix !== '' && !index.newlineInName) {
    const [from, to] = index.prefixRange(shape.prefix);
    for (let n = from; n < to; n++) check(n);
    return out;
  }
  const candidates = namesByTrigram(term.ngrams);
  if (candidates !== null) {
    for (const n of candidates) check(n);
    return out;
  }
  if (shape.literal) {
    const found = matcher.find(index.strings, Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < found.length; i += 2) {
      const n = index.nameAt(found[i]!);
      if (out[out.length - 1] !== n) out.push(n);
    }
    return out;
  }
  for (let n = 0; n < index.nameCount; n++) check(n);
  return out;
}

/** The located definitions of `names`, grouped by document in record order. */
function definitions(shard: Shard, index: SymbolIndex, names: number[]): SymbolHits {
  const records: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let sorted = true;
  for (const n of names) {
    const len = index.name(n).length;
    const [first, end] = index.defsOf(n);
    for (let k = first; k < end; k++) {
      const start = index.start(k);
      if (start === NO_NAME_START) continue; // the oracle finds no range there either
      const record = index.record(k);
      if (records.length > 0 && record < records[records.length - 1]!) sorted = false;
      records.push(record);
      starts.push(start);
      ends.push(start + len);
    }
  }
  let order = records.map((_, i) => i);
  if (!sorted) order = order.sort((a, b) => records[a]! - records[b]!);
  const ranges = new Map<number, number[]>();
  let doc = -1;
  let docEnd = -1; // the first record past `doc`'s
  let list: number[] = [];
  for (const i of order) {
    const record = records[i]!;
    if (record >= docEnd) {
      doc = shard.symbolDoc(record);
      docEnd = shard.symbolsEnd(doc);
      list = [];
      ranges.set(doc, list);
    }
    list.push(starts[i]!, ends[i]!);
  }
  return { docs: Uint32Array.from(ranges.keys()), ranges };
}

function shapeOf(term: Term): Shape {
  let shape = shapes.get(term);
  if (!shape) {
    shape = analyze(term);
    shapes.set(term, shape);
  }
  return shape;
}

function analyze(term: Term): Shape {
  let ast: Re2Node;
  try {
    ast = parseNodeRe2Pattern(term.pattern, { foldCase: !term.caseSensitive, multiLine: true });
  } catch {
    return { prefix: '', literal: false }; // RE2 decides; the general way is always right
  }
  const items = ast.type === 'concat' ? ast.items : [ast];
  const plain = (n: Re2Node | undefined): n is { type: 'literal'; cp: number; foldCase: boolean } => n?.type === 'literal' && n.cp !== 10;
  const literal = items.length > 0 && items.every(plain);
  let prefix = '';
  const head = items[0];
  if (head?.type === 'assert' && (head.kind === 'beginLine' || head.kind === 'beginText')) {
    for (let i = 1; i < items.length; i++) {
      const item = items[i];
      if (!plain(item) || item.cp >= 0x80) break;
      prefix += String.fromCharCode(item.cp);
    }
  }
  return { prefix: foldKey(Buffer.from(prefix, 'latin1')), literal };
}
