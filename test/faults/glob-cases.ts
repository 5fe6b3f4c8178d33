// The glob cases of glob-redos.test.ts and the runner that gives each a deadline: the
// cases run in a worker thread (glob-cases-worker.ts) that is terminated when a case
// overruns, so a matcher that backtracks fails the test instead of hanging it.

import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../../daemon/runtime/ts-worker.ts';

export interface GlobCase {
  name: string;
  /** tool: the MCP glob tool; ref: branch:/revisions; path: repository-name globs; name: a local path's directory name; exclude: filterRepos with the glob as an exclude. */
  dialect: 'tool' | 'ref' | 'path' | 'name' | 'exclude';
  pattern: string;
  input: string;
  expected: boolean;
}

export interface CaseTiming {
  case: GlobCase;
  matched: boolean;
  ms: number;
}

/**
 * Runs `cases` in order in one worker; rejects with the name of the first case that does
 * not finish within `deadlineMs` (the worker is terminated) or that throws.
 */
export function runCases(cases: GlobCase[], deadlineMs: number): Promise<CaseTiming[]> {
  const worker: Worker = startTsWorker('test/faults/glob-cases-worker.ts', { cases });
  const timings: CaseTiming[] = [];
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let started = false;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        void worker.terminate();
        reject(new Error(`"${cases[timings.length]!.name}" did not finish within ${deadlineMs} ms`));
      }, deadlineMs);
    };
    const finish = (err?: Error) => {
      clearTimeout(timer);
      void worker.terminate();
      if (err) reject(err);
      else resolve(timings);
    };
    worker.on('message', (m: { ready: true } | { index: number; matched: boolean; ms: number }) => {
      if ('ready' in m) {
        started = true;
        arm();
        return;
      }
      timings.push({ case: cases[m.index]!, matched: m.matched, ms: m.ms });
      if (timings.length === cases.length) finish();
      else arm();
    });
    worker.on('error', (err) => finish(err));
    worker.on('exit', () =>
      finish(timings.length === cases.length ? undefined : new Error(`the worker exited after ${timings.length} of ${cases.length} cases`)),
    );
    // The deadline starts once the worker has loaded its modules (tsx compiles them first).
    setTimeout(() => {
      if (!started) finish(new Error('the case worker did not start within 60 s'));
    }, 60_000).unref();
  });
}
