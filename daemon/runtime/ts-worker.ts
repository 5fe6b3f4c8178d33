// Starts a worker thread that runs a TypeScript module (see ts-worker-entry.js).

import { Worker, type ResourceLimits } from 'node:worker_threads';

const ENTRY = new URL('./ts-worker-entry.js', import.meta.url);

/**
 * `resourceLimits` bounds the worker's V8 heap: past it the worker ends with
 * ERR_WORKER_OUT_OF_MEMORY (an 'error' event) instead of growing the process's memory.
 */
export function startTsWorker(module: URL, data: Record<string, unknown> = {}, resourceLimits?: ResourceLimits): Worker {
  return new Worker(ENTRY, { workerData: { ...data, module: module.href }, ...(resourceLimits ? { resourceLimits } : {}) });
}
