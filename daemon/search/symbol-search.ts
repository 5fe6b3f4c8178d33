// sym: through the shard's symbol index (index/symbol-index.ts): the names a term matches
// are found once per shard, then their definitions give the candidate documents and the
// match ranges; no document is read and no per-document symbol list is scanned.
//
// Finding the names, cheapest way first:
// - `^prefix…` with an ASCII prefix: the names whose folded form starts with the prefix
//   are one run of the sorted table (two binary searches);
// - otherwise the term's trigrams select blocks of names (symbol-ngrams index the names in
//   blocks), and each name of those blocks is checked once, however many definitions it has;
// - a plain literal too short for trigrams: one scan of all the names (one buffer);
// - anything else without trigrams: every distinct name is checked.
// A name is checked by a byte comparison when the pattern is a plain ASCII literal
// (anchored or not), else by the term's matcher (RE2); either way the answer is RE2's.

import type { Shard } from '../index/shard-reader.ts';
import { foldKey, type SymbolIndex } from '../index/symbol-index.ts';
import { SectionDamage } from '../index/section-checks.ts';
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
export interface Shape {
  /** Folded ASCII text every match starts a name with; '' when none is known. */
  prefix: string;
  /** The pattern is a sequence of literal characters, none a "\n": no match spans two names. */
  literal: boolean;
  /**
   * Set when the pattern is `^`? ASCII literal `$`? in one case mode: a name matches when
   * its bytes (case-sensitive) or foldKey (case-insensitive) hold `text` where the anchors say.
   */
  exact?: { text: string; caseSensitive: boolean; start: boolean; end: boolean };
}

const shapes = new WeakMap<Term, Shape>();

/** The last shard's answers, by matcher: a tree asks for its candidates, then per document. */
let cache: { shard: Shard; hits: Map<Matcher, SymbolHits> } | undefined;

/**
 * The definitions the term matches in the shard. `blocksByTrigram` evaluates an n-gram
 * query on the shard's symbol-ngrams (a set of name blocks, null for all).
 */
export function symbolHits(shard: Shard, index: SymbolIndex, term: Term, matcher: Matcher, blocksByTrigram: (q: NgramQuery) => Uint32Array | null): SymbolHits {
  if (cache?.shard !== shard) cache = { shard, hits: new Map() };
  let hits = cache.hits.get(matcher);
  if (!hits) {
    hits = definitions(shard, index, matchingNames(index, term, matcher, blocksByTrigram));
    cache.hits.set(matcher, hits);
  }
  return hits;
}

/** The names the term matches, ascending. */
export function matchingNames(index: SymbolIndex, term: Term, matcher: Matcher, blocksByTrigram: (q: NgramQuery) => Uint32Array | null): number[] {
  const shape = shapeOf(term);
  const out: number[] = [];
  // With a "\n" inside some name, `^` and `$` also match inside names: RE2 decides.
  const accepts = acceptor(index.newlineInName && shape.exact && (shape.exact.start || shape.exact.end) ? { ...shape, exact: undefined } : shape, matcher);
  const check = (n: number) => {
    if (accepts(index.name(n))) out.push(n);
  };
  if (shape.prefix !== '' && !index.newlineInName) {
    const [from, to] = index.prefixRange(shape.prefix);
    for (let n = from; n < to; n++) check(n);
    return out;
  }
  const blocks = blocksByTrigram(term.ngrams);
  if (blocks !== null) {
    for (const b of blocks) {
      const [from, to] = index.blockNames(b);
      for (let n = from; n < to; n++) check(n);
    }
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

/** Whether a name matches: by bytes when the shape allows it, else by the matcher. */
function acceptor(shape: Shape, matcher: Matcher): (name: Buffer) => boolean {
  const e = shape.exact;
  if (!e) return (name) => matcher.find(name, 1).length > 0;
  return (name) => {
    const s = e.caseSensitive ? name.toString('latin1') : foldKey(name);
    if (e.start && e.end) return s === e.text;
    if (e.start) return s.startsWith(e.text);
    if (e.end) return s.endsWith(e.text);
    return s.includes(e.text);
  };
}

/** The located definitions of `names`, grouped by document in record order. */
function definitions(shard: Shard, index: SymbolIndex, names: number[]): SymbolHits {
  const records: number[] = [];
  const lengths = new Map<number, number>();
  for (const n of names) {
    const len = index.name(n).length;
    for (const record of index.defsOf(n)) {
      records.push(record);
      lengths.set(record, len);
    }
  }
  records.sort((a, b) => a - b);
  const ranges = new Map<number, number[]>();
  let docEnd = -1; // the first record past the current document's
  let list: number[] = [];
  let docLength = 0;
  for (const record of records) {
    const start = index.start(record);
    if (start === NO_NAME_START) continue; // the line does not spell the name: no range, as in a scan
    if (record >= docEnd) {
      const doc = shard.symbolDoc(record);
      docEnd = shard.symbolsEnd(doc);
      docLength = shard.contentLength(doc);
      list = [];
      ranges.set(doc, list);
    }
    const end = start + lengths.get(record)!;
    // (The symbol index may be read before its checksum is verified: index/section-checks.ts.)
    if (end > docLength) throw new SectionDamage(`symbol index: definition ${record} lies past the end of its document`);
    list.push(start, end);
  }
  return { docs: Uint32Array.from(ranges.keys()), ranges };
}

function shapeOf(term: Term): Shape {
  let shape = shapes.get(term);
  if (!shape) {
    shape = analyzeSymbolPattern(term);
    shapes.set(term, shape);
  }
  return shape;
}

type LiteralNode = { type: 'literal'; cp: number; foldCase: boolean };

export function analyzeSymbolPattern(term: Term): Shape {
  let ast: Re2Node;
  try {
    ast = parseNodeRe2Pattern(term.pattern, { foldCase: !term.caseSensitive, multiLine: true });
  } catch {
    return { prefix: '', literal: false }; // RE2 decides; the general way is always right
  }
  const items = ast.type === 'concat' ? ast.items : [ast];
  const plain = (n: Re2Node | undefined): n is LiteralNode => n?.type === 'literal' && n.cp !== 10;
  const isStart = (n: Re2Node | undefined) => n?.type === 'assert' && (n.kind === 'beginLine' || n.kind === 'beginText');
  const isEnd = (n: Re2Node | undefined) => n?.type === 'assert' && (n.kind === 'endLine' || n.kind === 'endText');
  const literal = items.length > 0 && items.every(plain);
  let prefix = '';
  if (isStart(items[0])) {
    for (let i = 1; i < items.length; i++) {
      const item = items[i];
      if (!plain(item) || item.cp >= 0x80) break;
      prefix += String.fromCharCode(item.cp);
    }
  }
  const shape: Shape = { prefix: foldKey(Buffer.from(prefix, 'latin1')), literal };
  // A plain ASCII literal, maybe anchored, all of it in the term's case mode: bytes decide.
  const start = isStart(items[0]);
  const end = items.length > (start ? 1 : 0) && isEnd(items[items.length - 1]);
  const middle = items.slice(start ? 1 : 0, end ? -1 : undefined);
  if (middle.length > 0 && middle.every((n) => plain(n) && n.cp < 0x80 && n.foldCase === !term.caseSensitive)) {
    const text = String.fromCharCode(...middle.map((n) => (n as LiteralNode).cp));
    shape.exact = { text: term.caseSensitive ? text : foldKey(Buffer.from(text, 'latin1')), caseSensitive: term.caseSensitive, start, end };
  }
  return shape;
}
