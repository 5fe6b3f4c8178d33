// Long work on the thread that serves every request (a whole repository's file list, its
// JSON, the writes of a large answer) runs in slices of a few milliseconds, with the event
// loop free in between. Every task shares one slice clock and one queue: each turn of the
// event loop grants one slice, to the task that has waited longest. Were each task to
// yield on its own (a setImmediate apiece), N tasks would all run in the same turn, and a
// request would wait for N slices instead of one.
//
// A task works while sliceUsed() is false, then awaits nextSlice(). A task that comes back
// from other I/O inside a slice another task was granted shares what is left of it.

import { performance } from 'node:perf_hooks';

/** Milliseconds of work a turn of the event loop grants. */
export const SLICE_MS = 5;

let sliceStart = -Infinity;
const waiting: Array<() => void> = [];
let scheduled = false;

/** Whether the current slice is spent: the caller awaits nextSlice() before more work. */
export function sliceUsed(): boolean {
  return performance.now() - sliceStart >= SLICE_MS;
}

/**
 * Resolves when the caller's next slice starts: in a later turn of the event loop (after
 * its I/O), one waiting task a turn, in the order they asked.
 */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(grant);
    }
  });
}

function grant(): void {
  scheduled = false;
  const next = waiting.shift();
  sliceStart = performance.now();
  // Scheduled from inside the check phase, the next grant runs in the next turn.
  if (waiting.length > 0) {
    scheduled = true;
    setImmediate(grant);
  }
  next?.();
}
