// Whether every match of an RE2 pattern lies within one line. Then the matches in a
// document are exactly the matches in its lines taken one by one, so the matcher may run
// RE2 only on the lines that hold the pattern's required literal (regex-required.ts)
// instead of the whole document: for `[A-Z][a-z]+Exception` a few lines instead of
// megabytes.
//
// SOUNDNESS RULE: "line-local" is claimed only when no part of the pattern can match "\n"
// and the pattern has no text anchor. Under the daemon's flags ("m": terms.ts regexFlags)
// `^`, `$` and `\b` see the same neighbours in a line cut at its "\n" bytes as in the
// whole document (the byte before a line is "\n" or nothing, the byte after it "\n" or
// nothing); `\A` and `\z` do not, so they rule the claim out. Unicode classes (\pL) and
// unmodelled constructs may match "\n" as far as this analysis knows.

import type { ClassItem, Re2Node } from './re2-syntax.ts';
import { foldRegex, type RegexFold } from './regex-fold.ts';

const NL = 0x0a;

/** Whether the class item holds "\n" (null: not known). */
function itemHolds(item: ClassItem, cp: number): boolean | null {
  switch (item.kind) {
    case 'range':
      return item.lo <= cp && cp <= item.hi;
    case 'group':
      return item.ranges.some(([lo, hi]) => lo <= cp && cp <= hi) !== item.negated;
    case 'unicode':
      return null;
  }
}

/** Whether a node may match a string holding "\n", or holds a text anchor. */
const CROSSES_LINES: RegexFold<boolean> = {
  empty: () => false,
  literal: (node) => node.cp === NL, // "\n" has no case variant
  class(node) {
    let holds = false;
    for (const item of node.items) {
      const h = itemHolds(item, NL);
      if (h === null) return true;
      holds ||= h;
    }
    return holds !== node.negated;
  },
  dot: (node) => node.dotNL,
  anyByte: () => true,
  opaque: () => true,
  assert: (node) => node.kind === 'beginText' || node.kind === 'endText',
  concat: (items, sub) => items.some(sub),
  alternate: (items, sub) => items.some(sub),
  repeat: (node, sub) => node.max !== 0 && sub(),
};

/** Whether every match of the parsed pattern (parseForAnalysis; null: not parsed) lies within one line. */
export function lineLocalOf(ast: Re2Node | null): boolean {
  return ast !== null && !foldRegex(ast, CROSSES_LINES);
}
