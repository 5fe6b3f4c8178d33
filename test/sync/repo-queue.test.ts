// The queue of single-repository syncs (sync/repo-queue.ts), with a recording `run` in
// place of the sync: requests coalesce per repository within the window, a request that
// arrives while its repository's batch runs is answered by the next batch, what waits is
// bounded by the repositories, and a failing batch or a shutdown answers every waiter.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventLagSeconds, RepoSyncQueue } from '../../daemon/sync/repo-queue.ts';
import type { RepoSyncResult } from '../../daemon/sync/repo-work.ts';

/** A `run` that records its batches and ends each when `release` is called (or at once). */
function recorder(hold = false) {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  let batchNo = 0;
  const run = async (ids: number[]): Promise<RepoSyncResult[]> => {
    batches.push([...ids].sort((a, b) => a - b));
    const no = ++batchNo;
    if (hold) await new Promise<void>((resolve) => pending.push(resolve));
    return ids.map((repoId) => ({ repoId, outcome: 'indexed', seconds: no }));
  };
  return { batches, run, release: () => pending.shift()?.() };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('requests for the same repositories within the window are one batch, each repository once', async () => {
  const r = recorder();
  let idle = 0;
  const q = new RepoSyncQueue({ run: r.run, coalesceMs: 30, onIdle: async () => void idle++ });
  const answers = [q.request(1), q.request(2), q.request(1), q.request(1), q.request(3)];
  assert.equal(q.waiting, 3, 'one entry per repository, whatever the requests');
  const results = await Promise.all(answers);
  assert.deepEqual(r.batches, [[1, 2, 3]]);
  assert.deepEqual(
    results.map((x) => [x.repoId, x.outcome, x.seconds]),
    [
      [1, 'indexed', 1],
      [2, 'indexed', 1],
      [1, 'indexed', 1],
      [1, 'indexed', 1],
      [3, 'indexed', 1],
    ],
  );
  assert.deepEqual(q.counts, { requests: 5, batches: 1, synced: 3 });
  assert.equal(idle, 1, 'tidied once nothing waits');
  await q.stop();
});

test('a request made while its repository is being synced is answered by the next batch, which starts when that one ends', async () => {
  const r = recorder(true);
  const q = new RepoSyncQueue({ run: r.run, coalesceMs: 10 });
  const first = q.request(7);
  await tick(40);
  assert.deepEqual(r.batches, [[7]], 'the first batch runs');
  // Pushed while it fetches: its fetch may have come too early for this change.
  const again = q.request(7);
  const other = q.request(8);
  await tick(40);
  assert.deepEqual(r.batches, [[7]], 'no second batch while the first runs');
  r.release();
  assert.equal((await first).seconds, 1);
  await tick(40);
  assert.deepEqual(r.batches, [[7], [7, 8]], 'then one more, with what came meanwhile');
  r.release();
  assert.equal((await again).seconds, 2, 'answered by the batch that started after it');
  assert.equal((await other).seconds, 2);
  await q.stop();
});

test('a flood: 10,000 requests over 200 repositories leave at most 200 waiting, make a few batches, and each is answered', async () => {
  const r = recorder(true);
  const q = new RepoSyncQueue({ run: r.run, coalesceMs: 5 });
  const last = new Map<number, Promise<RepoSyncResult>>();
  let most = 0;
  for (let i = 0; i < 10_000; i++) {
    const repoId = 1 + ((i * 7919) % 200);
    last.set(repoId, q.request(repoId));
    most = Math.max(most, q.waiting);
    // Some batches start and end during the flood.
    if (i % 2_500 === 0) {
      await tick(15);
      r.release();
    }
  }
  assert.ok(most <= 200, `at most one entry per repository waited (${most})`);
  // Let the rest run.
  const all = Promise.all(last.values());
  for (let i = 0; i < 10 && q.waiting + r.batches.length > 0; i++) {
    await tick(15);
    r.release();
  }
  const results = await all;
  assert.equal(results.length, 200);
  assert.ok(
    results.every((x) => x.outcome === 'indexed'),
    'each answered',
  );
  assert.ok(r.batches.length < 10, `the flood made a few batches, not one per request (${r.batches.length})`);
  assert.equal(q.counts.requests, 10_000);
  await q.stop();
});

test('a batch that throws answers its repositories as failed; the queue goes on', async () => {
  let calls = 0;
  const q = new RepoSyncQueue({
    coalesceMs: 5,
    run: async (ids) => {
      if (++calls === 1) throw new Error('the store is unreachable');
      return ids.map((repoId) => ({ repoId, outcome: 'unchanged' as const, seconds: 0 }));
    },
  });
  assert.deepEqual(await q.request(1), { repoId: 1, outcome: 'failed', error: 'the store is unreachable', seconds: 0 });
  assert.equal((await q.request(1)).outcome, 'unchanged');
  await q.stop();
});

test('a repository the run gives no result for is answered as failed, not left waiting', async () => {
  const q = new RepoSyncQueue({ coalesceMs: 5, run: async () => [] });
  assert.equal((await q.request(4)).outcome, 'failed');
  await q.stop();
});

test('stop() waits for the running batch, answers what still waits, and refuses what comes after', async () => {
  const r = recorder(true);
  const q = new RepoSyncQueue({ run: r.run, coalesceMs: 5 });
  const running = q.request(1);
  await tick(30);
  const waiting = q.request(2);
  const stopped = q.stop();
  r.release();
  await stopped;
  assert.equal((await running).outcome, 'indexed');
  assert.deepEqual(await waiting, { repoId: 2, outcome: 'failed', error: 'the server is shutting down', seconds: 0 });
  assert.equal((await q.request(3)).outcome, 'failed');
  assert.deepEqual(r.batches, [[1]]);
});

test('the record: a repository starts waiting (its first request), then its batch answers it, in that order, with the times', async () => {
  let clock = 1_000;
  const written: string[] = [];
  const r = recorder(true);
  const q = new RepoSyncQueue({
    run: r.run,
    coalesceMs: 5,
    now: () => clock,
    record: {
      asked: async (repoId, at) => void written.push(`asked ${repoId} at ${at}`),
      answered: async (result, askedAt, at) => void written.push(`answered ${result.repoId} ${result.outcome} asked ${askedAt} at ${at}`),
    },
  });
  const first = q.request(5);
  clock = 1_050;
  q.request(5); // joins: not asked again
  await tick(30);
  clock = 2_000;
  r.release();
  await first;
  await tick(5);
  assert.deepEqual(written, ['asked 5 at 1000', 'answered 5 indexed asked 1000 at 2000']);
  await q.stop();
});

test('eventLagSeconds: to the sync that answered, or to now while waiting; unreadable times give nothing', () => {
  assert.equal(eventLagSeconds('2026-11-30T10:00:00.000Z', '2026-11-30T10:00:01.250Z', 0), 1.25);
  assert.equal(eventLagSeconds('2026-11-30T10:00:00.000Z', undefined, Date.parse('2026-11-30T10:00:03.000Z')), 3);
  assert.equal(eventLagSeconds('2026-11-30T10:00:05.000Z', '2026-11-30T10:00:01.000Z', 0), 0, 'never negative');
  assert.equal(eventLagSeconds('not a time', undefined, 0), undefined);
});
