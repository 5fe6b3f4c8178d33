// The scheduler's statistics the cluster phase reads around its one client (sched-stat.ts):
// the line's parsing, a live process's threads, and the figures per request.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseSchedStat, processSchedTimes, schedPerRequest } from '../../bench/suite/sched-stat.ts';

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
    // Busy until the process has used 20 ms more CPU (getrusage), however long the machine
    // makes that take: a wall-clock loop would measure the machine's load, not this.
    const cpu0 = process.cpuUsage();
    for (;;) {
      const d = process.cpuUsage(cpu0);
      if (d.user + d.system >= 20_000) break;
    }
    const b = processSchedTimes(process.pid)!;
    assert.ok(b.runNs - a.runNs >= 15e6, `schedstat counted ${(b.runNs - a.runNs) / 1e6} ms of 20 ms of CPU`);
    assert.equal(processSchedTimes(2 ** 22 + 7), null, 'no such process');
  });

  test('per request: summed over processes, in ms', () => {
    const before = [
      { runNs: 1e6, waitNs: 0 },
      { runNs: 0, waitNs: 0 },
    ];
    const after = [
      { runNs: 11e6, waitNs: 2e6 },
      { runNs: 5e6, waitNs: 3e6 },
    ];
    assert.deepEqual(schedPerRequest(before, after, 10), { cpuMsPerRequest: 1.5, waitMsPerRequest: 0.5 });
    assert.equal(schedPerRequest([null], after.slice(0, 1), 10), null);
    assert.equal(schedPerRequest(before, after.slice(0, 1), 10), null);
    assert.equal(schedPerRequest(before, after, 0), null);
    assert.equal(schedPerRequest([], [], 10), null);
  });
});
