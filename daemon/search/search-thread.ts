// A search worker thread's entry point: serves the pool's messages (search-worker.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { serveSearches } from './search-worker.ts';

serveSearches(parentPort!, (workerData as { workerId: number }).workerId);
