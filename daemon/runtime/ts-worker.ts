// Starts a worker thread (or gives the arguments of a child process) on one of trawl's
// modules, named by its source path from the root (install-root.ts, runnableModule). Under
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
export function startTsWorker(module: string, data: Record<string, unknown> = {}, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits ? { resourceLimits } : {};
  if (COMPILED) return new Worker(runnableModule(module), { workerData: data, ...limits });
  return new Worker(ENTRY, { workerData: { ...data, module: runnableModule(module).href }, ...limits });
}

/**
 * The arguments that make a `node` child process run one of trawl's modules (see
 * startTsWorker). tsx's loader is named by its place in this install: a bare `--import tsx`
 * is resolved from the child's working directory, which need not be inside it.
 */
export function nodeArgsFor(module: string): string[] {
  const file = fileURLToPath(runnableModule(module));
  return COMPILED ? [file] : ['--import', import.meta.resolve('tsx'), file];
}
