// The scheduler's statistics the cluster phase reads around its one client (sched-stat.ts):
// the line's parsing, a live process's threads, and the shares of a window.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseSchedStat, processSchedTimes, schedShares } from '../../daemon/bench/sched-stat.ts';

describe('schedstat', () => {
  const table: Array<{ text: string; want: ReturnType<typeof parseSchedStat> }> = [
    { text: '255966118 148146662 701\n', want: { runNs: 255966118, waitNs: 148146662 } },
    { text: '0 0 0', want: { runNs: 0, waitNs: 0 } },
    { text: '1 2', want: null },
    { text: '1 2 3 4', want: null },
    { text: '1 -2 3', want: null },
    { text: 'a b c', want: null },
    { text: '', want: null },
  ];
  for (const t of table) test(`parses ${JSON.stringify(t.text)}`, () => assert.deepEqual(parseSchedStat(t.text), t.want));

  test('a live process: its threads ran, and run time grows with work', { skip: process.platform !== 'linux' }, () => {
    const a = processSchedTimes(process.pid);
    assert.ok(a && a.runNs > 0 && a.waitNs >= 0);
    const until = performance.now() + 30;
    while (performance.now() < until);
    const b = processSchedTimes(process.pid)!;
    assert.ok(b.runNs - a.runNs >= 10e6, `ran ${(b.runNs - a.runNs) / 1e6} ms of a 30 ms busy loop`);
    assert.equal(processSchedTimes(2 ** 22 + 7), null, 'no such process');
  });

  test('the shares of a window: summed over processes, per wall nanosecond', () => {
    const before = [{ runNs: 100, waitNs: 10 }, { runNs: 0, waitNs: 0 }];
    const after = [{ runNs: 1100, waitNs: 210 }, { runNs: 500, waitNs: 300 }];
    assert.deepEqual(schedShares(before, after, 1000), { coresBusy: 1.5, threadsWaiting: 0.5 });
    assert.equal(schedShares([null], after.slice(0, 1), 1000), null);
    assert.equal(schedShares(before, after.slice(0, 1), 1000), null);
    assert.equal(schedShares(before, after, 0), null);
    assert.equal(schedShares([], [], 1000), null);
  });
});
