// Starts a worker thread that runs a TypeScript module (see ts-worker-entry.js).

import { Worker } from 'node:worker_threads';

const ENTRY = new URL('./ts-worker-entry.js', import.meta.url);

export function startTsWorker(module: URL, data: Record<string, unknown> = {}): Worker {
  return new Worker(ENTRY, { workerData: { ...data, module: module.href } });
}
