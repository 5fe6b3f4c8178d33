// The heap bound of a search worker (pool.ts). A shard task holds one shard's candidates
// and results; the shard files are mapped (RssFile, outside the heap) and the matcher's
// wasm memory is not part of the V8 heap either. Without a bound a worker's old space may
// grow to V8's default (a quarter of the machine's memory, up to 4 GB) before it collects
// hard; with it, a task that would take more fails alone (the pool replaces the worker and
// the search reports that shard as failed) and the daemon's anonymous memory stays within
// about workers × (old + young space) + the main thread's heap. The young space is kept
// small: a shard task's garbage dies young, and a young space grown by a burst of searches
// stays committed afterwards, counted in the daemon's memory while it idles; at 4 MB a
// worker collects it more often, at a cost within the noise of paired throughput runs.

import type { ResourceLimits } from 'node:worker_threads';

export const SEARCH_WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 4 };
