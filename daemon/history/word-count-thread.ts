// The thread that builds or updates one repository's word counts (word-count-build.ts
// updateWordCountsInThread starts it): counting every version's words takes about a second
// of a processor for a history like hono's, which the daemon's event loop, serving requests
// while a sync runs, must not spend.

import { parentPort, workerData } from 'node:worker_threads';
import { lowerThisThreadsPriority } from '../runtime/thread-priority.ts';
import { updateWordCounts, type WordCountsJob } from './word-count-build.ts';

lowerThisThreadsPriority();

const job = workerData as WordCountsJob;
try {
  parentPort!.postMessage({ summary: updateWordCounts(job.historyRoot, job.repoId, job.path) });
} catch (err) {
  parentPort!.postMessage({ error: (err as Error).message });
}
