// Runs glob cases (glob-redos.test.ts) in a worker thread, so that the test can stop a
// case that never ends: a backtracking matcher blocks its thread, and only terminating
// the worker gets the test its answer ("did not finish") instead of a hung run.
// workerData.cases: GlobCase[]; posts { ready } once loaded, then { index, matched, ms }
// after each case.

import { parentPort, workerData } from 'node:worker_threads';
import { compileGlob } from '../../daemon/mcp/glob.ts';
import { compileNameGlob, compilePathGlob, compileRefGlob } from '../../daemon/repos/glob.ts';
import { filterRepos } from '../../daemon/repos/hosts/index.ts';
import type { HostRepo } from '../../daemon/repos/hosts/types.ts';
import type { GlobCase } from './glob-cases.ts';

function run(c: GlobCase): boolean {
  switch (c.dialect) {
    case 'tool':
      return compileGlob(c.pattern).test(c.input);
    case 'ref':
      return compileRefGlob(c.pattern).test(c.input);
    case 'path':
      return compilePathGlob(c.pattern).test(c.input);
    case 'name':
      return compileNameGlob(c.pattern).test(c.input);
    case 'exclude': {
      // The configuration's repository excludes, through the function the hosts use.
      const repo = { repoName: c.input, displayName: c.input, isFork: false, isArchived: false } as HostRepo;
      return filterRepos([repo], { forks: false, archived: false, repos: [c.pattern] }).length === 0;
    }
  }
}

const cases = (workerData as { cases: GlobCase[] }).cases;
parentPort!.postMessage({ ready: true });
cases.forEach((c, index) => {
  const t0 = performance.now();
  const matched = run(c);
  parentPort!.postMessage({ index, matched, ms: performance.now() - t0 });
});
