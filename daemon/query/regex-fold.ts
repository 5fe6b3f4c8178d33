// One walk over a parsed pattern (re2-syntax.ts) for the prefilter analyses
// (regex-ngrams, regex-required, regex-sequence, regex-line-local): each summarises the
// pattern bottom up, node by node, and differs from the others only in what it computes
// at each kind of node. The walk is written once here; an analysis is the table of what
// it computes (a RegexFold), as in codesearch's regexp analysis.
//
// A group is its sub-pattern to every analysis (captures and names change no match), so the
// walk passes through it. The children of a concatenation, an alternation and a repetition
// are folded when the analysis asks (`sub`), not before: an analysis may stop at a child
// whose answer settles the node's, or read a child's syntax instead of folding it. Every
// node folded is a step of the query's analysis budget (analysis-budget.ts), a group
// included, so a pattern costs the same steps whichever analysis walks it.

import type { Re2Node } from './re2-syntax.ts';
import { spend } from './analysis-budget.ts';

/** The node of a kind. */
export type Re2NodeOf<K extends Re2Node['type']> = Extract<Re2Node, { type: K }>;

/** What an analysis computes at each kind of node, its children folded on demand by `sub`. */
export interface RegexFold<T> {
  empty(): T;
  literal(node: Re2NodeOf<'literal'>): T;
  class(node: Re2NodeOf<'class'>): T;
  dot(node: Re2NodeOf<'dot'>): T;
  /** `\C`: any single byte. */
  anyByte(): T;
  /** A construct the parser does not model. */
  opaque(): T;
  assert(node: Re2NodeOf<'assert'>): T;
  concat(items: readonly Re2Node[], sub: (item: Re2Node) => T): T;
  alternate(items: readonly Re2Node[], sub: (item: Re2Node) => T): T;
  repeat(node: Re2NodeOf<'repeat'>, sub: () => T): T;
}

/** The analysis `fold` of the pattern `root`. */
export function foldRegex<T>(root: Re2Node, fold: RegexFold<T>): T {
  const walk = (node: Re2Node): T => {
    spend();
    switch (node.type) {
      case 'empty':
        return fold.empty();
      case 'literal':
        return fold.literal(node);
      case 'class':
        return fold.class(node);
      case 'dot':
        return fold.dot(node);
      case 'anyByte':
        return fold.anyByte();
      case 'opaque':
        return fold.opaque();
      case 'assert':
        return fold.assert(node);
      case 'group':
        return walk(node.sub);
      case 'concat':
        return fold.concat(node.items, walk);
      case 'alternate':
        return fold.alternate(node.items, walk);
      case 'repeat':
        return fold.repeat(node, () => walk(node.sub));
    }
  };
  return walk(root);
}
