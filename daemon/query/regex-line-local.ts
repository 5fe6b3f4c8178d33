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
import { spend } from './analysis-budget.ts';

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

/** Whether the node may match a string holding "\n", or holds a text anchor. */
function crossesLines(node: Re2Node): boolean {
  spend();
  switch (node.type) {
    case 'empty':
      return false;
    case 'literal':
      return node.cp === NL; // "\n" has no case variant
    case 'class': {
      let holds = false;
      for (const item of node.items) {
        const h = itemHolds(item, NL);
        if (h === null) return true;
        holds ||= h;
      }
      return holds !== node.negated;
    }
    case 'dot':
      return node.dotNL;
    case 'anyByte':
    case 'opaque':
      return true;
    case 'assert':
      return node.kind === 'beginText' || node.kind === 'endText';
    case 'group':
      return crossesLines(node.sub);
    case 'concat':
    case 'alternate':
      return node.items.some(crossesLines);
    case 'repeat':
      return node.max !== 0 && crossesLines(node.sub);
  }
}

/** Whether every match of the parsed pattern (parseForAnalysis; null: not parsed) lies within one line. */
export function lineLocalOf(ast: Re2Node | null): boolean {
  return ast !== null && !crossesLines(ast);
}
