// Starts a worker thread on one of trawl's modules, named by its TypeScript source. Under
// tsx the worker first registers tsx's loader (ts-worker-entry.js: worker threads do not
// inherit it); from the compiled build it loads the module's .js twin directly.

import { Worker, type ResourceLimits } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { COMPILED, runnableModule } from '../install-root.ts';

const ENTRY = new URL('./ts-worker-entry.js', import.meta.url);

/**
 * `resourceLimits` bounds the worker's V8 heap: past it the worker ends with
 * ERR_WORKER_OUT_OF_MEMORY (an 'error' event) instead of growing the process's memory.
 */
export function startTsWorker(module: URL, data: Record<string, unknown> = {}, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits ? { resourceLimits } : {};
  if (COMPILED) return new Worker(runnableModule(module), { workerData: data, ...limits });
  return new Worker(ENTRY, { workerData: { ...data, module: module.href }, ...limits });
}

/** The arguments that make a `node` child process run one of trawl's modules (see startTsWorker). */
export function nodeArgsFor(module: URL): string[] {
  return COMPILED ? [fileURLToPath(runnableModule(module))] : ['--import', 'tsx', fileURLToPath(module)];
}
