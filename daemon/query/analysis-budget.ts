// A time budget for the prefilter analyses of a query's regular expressions (regex-ngrams,
// regex-required, regex-sequence, regex-line-local). Their work grows faster than the
// pattern for some shapes (thousands of alternatives, long runs of classes), and a query
// is planned on a thread that other callers' queries wait for. An analysis that runs out
// of budget gives the answer that claims nothing, which is always sound (no n-gram filter,
// no required literal): the search is then slower, never wrong.
//
// The analyses call spend() as they go (at each node and in their loops over sets); it
// reads the clock every SPEND_CHECK_EVERY calls and throws once the deadline is past.

/** Thrown by spend() past the deadline; caught by withinBudget. */
class BudgetSpent extends Error {}

const SPEND_CHECK_EVERY = 64;

let deadline = Infinity;
let calls = 0;

/** Counts a step of an analysis; past the deadline of the withinBudget around it, ends it. */
export function spend(): void {
  if (++calls % SPEND_CHECK_EVERY === 0 && performance.now() > deadline) throw new BudgetSpent();
}

/**
 * Runs `analysis` until the shared deadline `until` (performance.now() milliseconds): its
 * result, or `claimsNothing` when the deadline passes first (at once when it has passed).
 */
export function withinBudget<T>(until: number, analysis: () => T, claimsNothing: T): T {
  if (performance.now() > until) return claimsNothing;
  const outer = deadline;
  deadline = Math.min(outer, until);
  try {
    return analysis();
  } catch (err) {
    if (err instanceof BudgetSpent) return claimsNothing;
    throw err;
  } finally {
    deadline = outer;
  }
}
