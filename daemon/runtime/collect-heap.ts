// A full garbage collection of this thread's heap, on request. V8 collects when a thread
// allocates; a daemon that has just served a burst and then sits idle allocates nothing,
// so the garbage of the burst (and the native memory its objects hold: reply buffers,
// stream chunks) stays resident until the next request, for minutes or hours. The daemon
// asks for one collection in each thread once its searches have gone quiet
// (idle-collector.ts).
//
// Node gives a program `gc` only when it starts with --expose-gc, which a command cannot
// choose for itself; the flag also applies to contexts made after it is set, so one is
// made here to take `gc` from, and the flag is set back so that no other context (a
// worker's, a test's) sees a `gc` it did not ask for.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

function obtain(): () => void {
  const own = (globalThis as { gc?: () => void }).gc;
  if (typeof own === 'function') return own;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

let gc: (() => void) | undefined;

/** Collects this thread's heap in full (a few ms for the daemon's heaps): for idle moments only. */
export function collectHeap(): void {
  gc ??= obtain();
  gc();
}
