// The deliverer of watches' POSTs (watches/delivery.ts) over a store in memory and a
// receiver on loopback, its clock moved by hand: back-off doubling up to its bound, a dead
// letter after the last attempt, a change withheld (never sent, never retried) when its
// owner may not see its repository or cannot act, and a URL inside the network refused
// unless allowed.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { WatchDeliverer } from '../../daemon/watches/delivery.ts';

const SETTINGS = { maxPerUser: 10, maxMatches: 10, deliveryAttempts: 4, retryBaseMs: 1000, retryMaxMs: 3000, allowPrivateUrls: true, eventRetentionDays: 1 };
const payload = (repoId: number) =>
  JSON.stringify({ type: 'watch.matches', at: 'x', watch: { id: 1, name: 'n', query: 'q' }, repository: { id: repoId, name: 'r' }, added: [], removed: [] });

async function receiver(statuses: number[]): Promise<{ url: string; got: number; close(): Promise<void> }> {
  const r = { url: '', got: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      r.got++;
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  r.close = () => new Promise((done) => server.close(() => done()));
  return r;
}

async function setUp(t: { after(fn: () => unknown): void }, url: string, visible = (_repoId: number) => true, settings = SETTINGS) {
  const store: Store = openSqliteStore(':memory:');
  t.after(() => store.close());
  const user = await store.createUser({ email: 'o@example.com', name: 'O', role: 'member' }, new Date(0).toISOString());
  const watch = await store.watches.create(
    { userId: user.id, name: 'n', query: 'q', isRegexEnabled: false, isCaseSensitivityEnabled: false, salt: 's', url },
    [],
    new Date(0).toISOString(),
  );
  let now = 1_000_000;
  let acting = true;
  const outcomes: string[] = [];
  const deliverer = new WatchDeliverer({
    store,
    secret: () => Buffer.from('installation'),
    owner: async () => (acting ? (r) => visible(r.repoId) : undefined),
    visibility: async () => 'private',
    settings: () => settings,
    userAgent: 'trawl/test',
    observe: (o) => void outcomes.push(o),
    now: () => new Date(now),
  });
  return {
    store,
    watch,
    deliverer,
    outcomes,
    at: (ms: number) => void (now = ms),
    now: () => now,
    suspend: () => void (acting = false),
    event: (repoId = 1) => store.watches.addEvent(watch.id, payload(repoId), new Date(now).toISOString()),
  };
}

test('a failing URL is tried again after 1, 2 and 3 s (the bound), then counted a dead letter', async (t) => {
  const r = await receiver([500, 502, 503, 500, 500]);
  t.after(() => r.close());
  const s = await setUp(t, r.url);
  const id = await s.event();
  const waits: number[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    await s.deliverer.round();
    const e = (await s.store.watches.eventsAfter(s.watch.id, 0, 1))[0]!;
    assert.equal(e.id, id);
    if (e.state === 'pending') {
      const due = Date.parse(e.nextAttemptAt!);
      waits.push(due - s.now());
      await s.deliverer.round();
      assert.equal((await s.store.watches.eventsAfter(s.watch.id, 0, 1))[0]!.attempts, attempt + 1, 'not due yet: not tried');
      s.at(due);
    }
  }
  assert.deepEqual(waits, [1000, 2000, 3000]);
  const e = (await s.store.watches.eventsAfter(s.watch.id, 0, 1))[0]!;
  assert.deepEqual([e.state, e.attempts, e.lastError], ['dead', 4, 'answered 500']);
  assert.equal((await s.store.watches.get(s.watch.id))!.deadLetters, 1);
  assert.deepEqual(s.outcomes, ['retry', 'retry', 'retry', 'dead']);
  assert.equal(r.got, 4);
});

test('a change is withheld, not sent, when its owner may not see its repository now or cannot act', async (t) => {
  const r = await receiver([]);
  t.after(() => r.close());
  const s = await setUp(t, r.url, (repoId) => repoId !== 2);
  await s.event(1);
  await s.event(2);
  await s.deliverer.round();
  assert.equal(r.got, 1);
  const states = (await s.store.watches.eventsAfter(s.watch.id, 0, 10)).map((e) => e.state);
  assert.deepEqual(states, ['delivered', 'none']);
  s.suspend();
  await s.event(1);
  await s.deliverer.round();
  assert.equal(r.got, 1, 'nothing for a suspended owner');
  assert.deepEqual(s.outcomes.sort(), ['delivered', 'withheld', 'withheld'], 'attempts run side by side: in any order');
  const w = (await s.store.watches.get(s.watch.id))!;
  assert.deepEqual([w.delivered, w.deadLetters], [1, 0]);
});

test('an address inside the network is refused at delivery unless settings allow it', async (t) => {
  const r = await receiver([]);
  t.after(() => r.close());
  const s = await setUp(t, r.url, () => true, { ...SETTINGS, allowPrivateUrls: false, deliveryAttempts: 1 });
  await s.event();
  await s.deliverer.round();
  assert.equal(r.got, 0);
  const e = (await s.store.watches.eventsAfter(s.watch.id, 0, 1))[0]!;
  assert.equal(e.state, 'dead');
  assert.match(e.lastError!, /inside the network/);
});
