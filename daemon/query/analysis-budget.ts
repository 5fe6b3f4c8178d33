// A budget for the prefilter analyses of a query's regular expressions (regex-ngrams,
// regex-required, regex-sequence, regex-line-local). Their work grows faster than the
// pattern for some shapes (thousands of alternatives, long runs of classes), and a query
// is planned on a thread that other callers' queries wait for. An analysis that runs out
// of budget gives the answer that claims nothing, which is always sound (no n-gram filter,
// no required literal): the search is then slower, never wrong.
//
// The budget counts steps: spend() is called as the analyses go (by their walk at each
// node, regex-fold.ts, and by the analyses in their loops over sets), so that a query gets
// the same plan however busy the machine is. A step
// costs microseconds, not always the same; a deadline on the clock, far above what the
// steps allow on an idle machine, bounds the shapes whose steps are dear.

/** Thrown by spend() once the budget is spent; caught by withinBudget. */
class BudgetSpent extends Error {}

/** What the analyses of one query may spend together. */
export interface AnalysisBudget {
  /** Steps left. */
  steps: number;
  /** performance.now() milliseconds past which the analyses stop whatever the steps left. */
  until: number;
}

const CLOCK_EVERY = 64;

let current: AnalysisBudget = { steps: Infinity, until: Infinity };
let calls = 0;

/** Counts a step of an analysis; once the budget around it is spent, ends the analysis. */
export function spend(): void {
  if (--current.steps < 0 || (++calls % CLOCK_EVERY === 0 && performance.now() > current.until)) throw new BudgetSpent();
}

/** A budget of `steps` steps and `ms` milliseconds from now. */
export function analysisBudget(steps: number, ms: number): AnalysisBudget {
  return { steps, until: performance.now() + ms };
}

/**
 * Runs `analysis` on `budget` (shared by every analysis given it): its result, or
 * `claimsNothing` when the budget runs out first (at once when it is spent).
 */
export function withinBudget<T>(budget: AnalysisBudget, analysis: () => T, claimsNothing: T): T {
  if (budget.steps <= 0 || performance.now() > budget.until) return claimsNothing;
  const outer = current;
  current = budget;
  try {
    return analysis();
  } catch (err) {
    if (err instanceof BudgetSpent) {
      budget.steps = 0;
      return claimsNothing;
    }
    throw err;
  } finally {
    current = outer;
  }
}
