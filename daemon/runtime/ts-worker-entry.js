// Worker-thread entry: worker threads do not inherit the parent's tsx loader, so each
// worker registers it before importing its TypeScript module (workerData.module).
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.module);
