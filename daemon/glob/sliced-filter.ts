// Filtering many strings through a glob on the thread that serves every request: the
// matcher is linear, but a repository has ~10^5 paths and a worst-case pattern costs
// ~path length × pattern size per path. So the work runs in slices of a few milliseconds
// with the event loop free in between (setImmediate lets waiting I/O run first), and stops
// when its own time, the slices added up, passes a budget: the caller gets a clear "too
// costly" rather than a daemon that answers nothing until the filter is done.

import { performance } from 'node:perf_hooks';

export interface SliceBudget {
  /** Milliseconds of work before yielding to the event loop. */
  sliceMs: number;
  /** Milliseconds of work (slices added up, waits not counted) before giving up. */
  totalMs: number;
  /** Stops the work early (the caller went away). */
  signal?: AbortSignal;
}

export type SlicedResult<T> =
  | { done: true; kept: T[] }
  /** The budget ran out (or the signal fired) after `checked` of the items. */
  | { done: false; kept: T[]; checked: number; spentMs: number };

/** The items `keep` accepts, in order, worked through in slices under `budget`. */
export async function filterSliced<T>(items: readonly T[], keep: (item: T) => boolean, budget: SliceBudget): Promise<SlicedResult<T>> {
  const kept: T[] = [];
  let spent = 0;
  let i = 0;
  while (i < items.length) {
    if (budget.signal?.aborted) return { done: false, kept, checked: i, spentMs: spent };
    // The clock is read after every item (a small fraction of what matching one costs): one
    // costly item cannot stretch a slice past itself.
    const sliceStart = performance.now();
    let now = sliceStart;
    while (i < items.length && now - sliceStart < budget.sliceMs) {
      const item = items[i++]!;
      if (keep(item)) kept.push(item);
      now = performance.now();
    }
    spent += now - sliceStart;
    if (i < items.length) {
      if (spent >= budget.totalMs) return { done: false, kept, checked: i, spentMs: spent };
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return { done: true, kept };
}
