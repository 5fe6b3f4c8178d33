// The warm-up of a timed phase: untimed runs until both its run count and its time are reached.

import type { Warmup } from './result.ts';

/** Runs `once` untimed until both bounds of `w` are met; the time it took, in ms. */
export async function warmUp(w: Warmup, once: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let runs = 0; runs < w.runs || performance.now() - t0 < w.ms; runs++) await once();
  return performance.now() - t0;
}
