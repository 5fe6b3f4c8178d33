// How many matches a file version holds, as a search of versions reports it (Plan.versions:
// the history's spans compare these numbers between versions to find where they changed).
// A range may be several matches side by side (`aaa` for `a`): for a query that is one
// literal, a range counts its length over the literal's, as git's pickaxe counts the
// occurrences of a string; otherwise each range is one. A file matched by its name or
// language alone holds one.

import type { Plan } from '../query/terms.ts';

/** The byte length of the query's literal when the whole query is one non-empty literal, else 0. */
export function loneLiteralBytes(plan: Plan): number {
  const n = plan.root;
  return n.op === 'content' && n.term.kind === 'literal' && n.term.pattern !== '' ? Buffer.byteLength(n.term.pattern) : 0;
}

/** The matches of a version whose content ranges are `ranges` (flat [start, end, ...]); `literalBytes` from loneLiteralBytes. */
export function versionMatches(ranges: readonly number[], literalBytes: number): number {
  let n = 0;
  for (let i = 0; i < ranges.length; i += 2) n += literalBytes === 0 ? 1 : Math.max(1, Math.floor((ranges[i + 1]! - ranges[i]!) / literalBytes));
  return n === 0 ? 1 : n;
}
