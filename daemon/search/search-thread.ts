// A search worker thread's entry point: serves the pool's messages (search-worker.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { lowerThisThreadsPriority } from '../runtime/thread-priority.ts';
import { serveSearches } from './search-worker.ts';

lowerThisThreadsPriority();

const data = workerData as { workerId: number; attention: SharedArrayBuffer };
serveSearches(parentPort!, data.workerId, data.attention);
