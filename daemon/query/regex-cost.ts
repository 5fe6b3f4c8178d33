// What compiling a regular expression would cost, estimated from its syntax tree before RE2
// sees it. RE2 runs in linear time once compiled, but compiling is not bounded by the
// pattern's length: a counted repetition is copied out (`x{0,1000}` is a thousand nested
// optional x), a `.` or a Unicode class becomes a UTF-8 automaton of many instructions,
// and the program is only refused once it has outgrown RE2's memory budget, after far
// more work than any search for a query of some kilobytes. RE2 cannot be interrupted, so
// the bound is checked first, on this estimate.
//
// The estimate counts roughly what RE2's compiler emits: one unit per literal (two when
// case-folded), per ASCII range and per node, more for the constructs that expand into
// UTF-8 byte ranges (`.`, non-ASCII and negated classes, Unicode groups), and a repeated
// node's cost times its largest count. The weights were calibrated against RE2's compile
// time (docs/query-language.md, "Limits"): what matters is that compile time grows with
// the estimate, not its units.

import { parseNodeRe2Pattern, Re2SyntaxError, type ClassItem, type Re2Node } from './re2-syntax.ts';

/** The largest estimate a single pattern may have. */
export const MAX_REGEX_COST = 50_000;

/** The largest estimate of all the patterns of one query together. */
export const MAX_QUERY_REGEX_COST = 100_000;

const DOT = 20;
const NON_ASCII_RANGE = 4;
const NEGATED = 20;
const UNICODE_GROUP = 400;

/** The estimated cost of compiling the parsed pattern (see the header). */
export function regexCost(node: Re2Node): number {
  switch (node.type) {
    case 'empty':
    case 'assert':
    case 'anyByte':
    case 'opaque':
      return 1;
    case 'literal':
      return node.foldCase ? 2 : 1;
    case 'dot':
      return DOT;
    case 'class': {
      // Case folding adds the other case of explicit ranges; groups are closed under it.
      let cost = 1 + (node.negated ? NEGATED : 0);
      for (const item of node.items) cost += itemCost(item) * (node.foldCase && item.kind === 'range' ? 2 : 1);
      return cost;
    }
    case 'group':
      return regexCost(node.sub) + 1;
    case 'concat':
    case 'alternate': {
      let cost = node.items.length;
      for (const item of node.items) cost += regexCost(item);
      return cost;
    }
    case 'repeat': {
      const copies = node.max === -1 ? node.min + 1 : Math.max(node.min, node.max);
      return regexCost(node.sub) * Math.max(1, copies) + 1;
    }
  }
}

function itemCost(item: ClassItem): number {
  switch (item.kind) {
    case 'range':
      return item.hi < 0x80 ? 1 : NON_ASCII_RANGE;
    case 'group':
      return item.ranges.length + (item.negated ? NEGATED : 0);
    case 'unicode':
      return UNICODE_GROUP;
  }
}

/**
 * The estimated cost of compiling `pattern` as the daemon does (case-folded, the most
 * costly way); 0 when this parser does not take the pattern (RE2 then refuses it while
 * parsing, which is cheap).
 */
export function patternCost(pattern: string): number {
  try {
    return regexCost(parseNodeRe2Pattern(pattern, { foldCase: true, multiLine: true }));
  } catch (err) {
    if (err instanceof Re2SyntaxError) return 0;
    throw err;
  }
}
