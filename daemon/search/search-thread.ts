// A search worker thread's entry point: serves the pool's messages (search-worker.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { serveSearches } from './search-worker.ts';

const data = workerData as { workerId: number; attention: SharedArrayBuffer };
serveSearches(parentPort!, data.workerId, data.attention);
