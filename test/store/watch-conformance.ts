// The watches' part of the Store conformance suite (conformance.ts calls it inside its
// describe): watches with their baselines, matches per repository, the events and their
// deliveries, and what the watches last saw of each repository.
//
// Rules pinned here beyond the interface's comments: ids ascend; list orders by id; an
// event of a watch without a url is 'none' and never due; settling moves the watch's
// counters in the same step; deleting a watch takes its matches and events.

import assert from 'node:assert/strict';
import type { Store } from '../../daemon/store/store.ts';

type StoreTest = (title: string, fn: (store: Store) => Promise<void>) => void;

const T1 = '2024-03-01T00:00:00.000Z';
const T2 = '2024-03-02T00:00:00.000Z';
const T3 = '2024-03-03T00:00:00.000Z';
const fields = { name: 'todos', query: 'TODO', isRegexEnabled: false, isCaseSensitivityEnabled: true, salt: 's1' };

export function watchConformance(storeTest: StoreTest): void {
  storeTest('watches: create with a baseline, get, list by id and by user; optional fields omitted', async (store) => {
    const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
    const b = await store.createUser({ email: 'b@example.com', name: 'B', role: 'member' }, T1);
    const w1 = await store.watches.create(
      { ...fields, userId: a.id, url: 'https://h.example/x' },
      [
        { repoId: 7, matches: [{ path: 'p', line: 2, text: 'TODO' }] },
        { repoId: 8, matches: [] },
      ],
      T1,
    );
    const w2 = await store.watches.create({ ...fields, userId: b.id, name: 'other' }, [], T2);
    assert.deepEqual(w1, {
      id: w1.id,
      userId: a.id,
      name: 'todos',
      query: 'TODO',
      isRegexEnabled: false,
      isCaseSensitivityEnabled: true,
      url: 'https://h.example/x',
      salt: 's1',
      createdAt: T1,
      delivered: 0,
      deadLetters: 0,
    });
    assert.equal('url' in w2, false);
    assert.ok(w2.id > w1.id);
    assert.deepEqual(await store.watches.get(w1.id), w1);
    assert.equal(await store.watches.get(w2.id + 100), undefined);
    assert.deepEqual(
      (await store.watches.list()).map((w) => w.id),
      [w1.id, w2.id],
    );
    assert.deepEqual(
      (await store.watches.list(b.id)).map((w) => w.id),
      [w2.id],
    );
    assert.deepEqual(await store.watches.matchesOf(w1.id, 7), [{ path: 'p', line: 2, text: 'TODO' }]);
    assert.deepEqual(await store.watches.matchesOf(w1.id, 8), [], 'an empty baseline keeps no row');
    assert.deepEqual(await store.watches.watchesIn(7), [w1.id]);
  });

  storeTest('watches: the revision moves when a watch is made or deleted, and not when its matches, events or deliveries do', async (store) => {
    const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
    const b = await store.createUser({ email: 'b@example.com', name: 'B', role: 'member' }, T1);
    let last = await store.watches.revision();
    const moved = async (what: string) => {
      const r = await store.watches.revision();
      assert.notEqual(r, last, what);
      last = r;
    };
    const w1 = await store.watches.create({ ...fields, userId: a.id, url: 'https://h.example/x' }, [], T1);
    await moved('one made');
    const onlyW1 = last;
    const w2 = await store.watches.create({ ...fields, userId: b.id }, [], T1);
    await moved('a second made');
    await store.watches.setMatches(w1.id, 3, [{ path: 'x', line: 1, text: 'TODO' }]);
    const event = await store.watches.addEvent(w1.id, '{}', T2);
    await store.watches.settleEvent(event, { state: 'delivered', attempts: 1 }, T2);
    await store.watches.setRepoStates([{ repoId: 3, generation: 1, refs: [] }]);
    assert.equal(await store.watches.revision(), last, 'matches, events, deliveries and states leave it');
    // The newest deleted: the watches are those of before it was made, and so is the revision.
    assert.equal(await store.watches.delete(w2.id), true);
    await moved('the newest deleted');
    assert.equal(last, onlyW1);
    // The oldest deleted and another made: as many as before, and a greater id.
    const w3 = await store.watches.create({ ...fields, userId: b.id }, [], T3);
    await moved('another made');
    const two = last;
    assert.equal(await store.watches.delete(w1.id), true);
    await moved('the oldest deleted');
    await store.watches.create({ ...fields, userId: a.id }, [], T3);
    await moved('one more made');
    assert.notEqual(last, two, `as many watches as with ${w1.id} and ${w3.id}, not the same ones`);
  });

  storeTest('watches: matches replaced and cleared; repository states kept and removed', async (store) => {
    const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
    const w = await store.watches.create({ ...fields, userId: a.id }, [], T1);
    await store.watches.setMatches(w.id, 3, [{ path: 'x', line: 1, text: 'TODO a' }]);
    await store.watches.setMatches(w.id, 3, [{ path: 'x', line: 4, text: 'TODO b' }]);
    assert.deepEqual(await store.watches.matchesOf(w.id, 3), [{ path: 'x', line: 4, text: 'TODO b' }]);
    await store.watches.setMatches(w.id, 3, []);
    assert.deepEqual(await store.watches.watchesIn(3), []);
    await store.watches.setRepoStates([
      { repoId: 5, generation: 2, refs: [{ name: 'main', kind: 'branch', commit: 'c1' }] },
      { repoId: 4, generation: 1, refs: [] },
    ]);
    await store.watches.setRepoStates([{ repoId: 5, generation: 3, refs: [{ name: 'main', kind: 'branch', commit: 'c2' }] }]);
    await store.watches.setRepoStates([]);
    assert.deepEqual(await store.watches.repoStates(), [
      { repoId: 4, generation: 1, refs: [] },
      { repoId: 5, generation: 3, refs: [{ name: 'main', kind: 'branch', commit: 'c2' }] },
    ]);
    await store.watches.deleteRepoState(4);
    assert.deepEqual(
      (await store.watches.repoStates()).map((s) => s.repoId),
      [5],
    );
  });

  storeTest('watches: events in order; due only with a url; settled as delivered, pending again, dead, withheld; counters; pruning', async (store) => {
    const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
    const posted = await store.watches.create({ ...fields, userId: a.id, url: 'https://h.example/x' }, [], T1);
    const quiet = await store.watches.create({ ...fields, userId: a.id }, [], T1);
    const e1 = await store.watches.addEvent(posted.id, '{"n":1}', T1);
    const e2 = await store.watches.addEvent(posted.id, '{"n":2}', T2);
    const e3 = await store.watches.addEvent(quiet.id, '{"n":3}', T2);
    assert.ok(e1 < e2 && e2 < e3);
    assert.equal((await store.watches.get(posted.id))!.lastChangedAt, T2);
    assert.deepEqual(
      (await store.watches.eventsAfter(posted.id, 0, 10)).map((e) => [e.id, e.payload, e.state, e.attempts, e.nextAttemptAt]),
      [
        [e1, '{"n":1}', 'pending', 0, T1],
        [e2, '{"n":2}', 'pending', 0, T2],
      ],
    );
    assert.deepEqual(
      (await store.watches.eventsAfter(posted.id, e1, 10)).map((e) => e.id),
      [e2],
    );
    assert.deepEqual(
      (await store.watches.recentEvents(posted.id, 1)).map((e) => e.id),
      [e2],
    );
    assert.equal((await store.watches.eventsAfter(quiet.id, 0, 10))[0]!.state, 'none');
    assert.deepEqual(
      (await store.watches.dueEvents(T1, 10)).map((e) => e.id),
      [e1],
    );
    assert.deepEqual(
      (await store.watches.dueEvents(T3, 10)).map((e) => e.id),
      [e1, e2],
    );
    await store.watches.settleEvent(e1, { state: 'pending', attempts: 1, nextAttemptAt: T3, lastError: 'answered 500' }, T1);
    assert.deepEqual(
      (await store.watches.dueEvents(T2, 10)).map((e) => e.id),
      [e2],
    );
    const retried = (await store.watches.eventsAfter(posted.id, 0, 1))[0]!;
    assert.deepEqual([retried.attempts, retried.nextAttemptAt, retried.lastError], [1, T3, 'answered 500']);
    await store.watches.settleEvent(e1, { state: 'delivered', attempts: 2 }, T3);
    await store.watches.settleEvent(e2, { state: 'dead', attempts: 3, lastError: 'refused' }, T3);
    assert.deepEqual(await store.watches.dueEvents(T3, 10), []);
    const w = (await store.watches.get(posted.id))!;
    assert.deepEqual([w.delivered, w.deadLetters], [1, 1]);
    const e4 = await store.watches.addEvent(posted.id, '{"n":4}', T3);
    await store.watches.settleEvent(e4, { state: 'none', attempts: 0, lastError: 'withheld' }, T3);
    assert.deepEqual(
      [(await store.watches.get(posted.id))!.delivered, (await store.watches.get(posted.id))!.deadLetters],
      [1, 1],
      'withheld counts as neither',
    );
    const e5 = await store.watches.addEvent(posted.id, '{"n":5}', T1);
    assert.equal(await store.watches.pruneEvents(T3), 3, 'e1 (delivered), e2 (dead) and e3 (none) are older than T3; the pending e5 stays');
    assert.deepEqual(
      (await store.watches.eventsAfter(posted.id, 0, 10)).map((e) => e.id),
      [e4, e5],
    );
  });

  storeTest("watches: the last event id; the events of several watches in (after, through], oldest first; a deleted watch's gone", async (store) => {
    const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
    const b = await store.createUser({ email: 'b@example.com', name: 'B', role: 'member' }, T1);
    assert.equal(await store.watches.lastEventId(), 0, 'none yet');
    const w1 = await store.watches.create({ ...fields, userId: a.id, url: 'https://h.example/x' }, [], T1);
    const w2 = await store.watches.create({ ...fields, userId: b.id }, [], T1);
    const e1 = await store.watches.addEvent(w1.id, '{"n":1}', T1);
    const e2 = await store.watches.addEvent(w2.id, '{"n":2}', T1);
    const e3 = await store.watches.addEvent(w1.id, '{"n":3}', T2);
    const e4 = await store.watches.addEvent(w2.id, '{"n":4}', T2);
    const e5 = await store.watches.addEvent(w1.id, '{"n":5}', T3);
    await store.watches.settleEvent(e3, { state: 'pending', attempts: 1, nextAttemptAt: T3, lastError: 'answered 500' }, T2);
    const last = await store.watches.lastEventId();
    assert.equal(last, Math.max(e1, e2, e3, e4, e5));
    assert.deepEqual(await store.watches.eventsIn([w1.id], 0, last), await store.watches.eventsAfter(w1.id, 0, 10), 'the same records as eventsAfter');
    assert.deepEqual(
      (await store.watches.eventsIn([w1.id], 0, last)).map((e) => e.id),
      [e1, e3, e5],
    );
    assert.deepEqual(
      (await store.watches.eventsIn([w2.id, w1.id], 0, last)).map((e) => e.id),
      [e1, e2, e3, e4, e5],
    );
    assert.deepEqual(
      (await store.watches.eventsIn([w1.id, w2.id], e1, e4)).map((e) => e.id),
      [e2, e3, e4],
      'after is exclusive, through inclusive',
    );
    assert.deepEqual(await store.watches.eventsIn([w1.id, w2.id], last, last), []);
    assert.deepEqual(await store.watches.eventsIn([], 0, last), []);
    assert.deepEqual(await store.watches.eventsIn([w2.id + 100], 0, last), [], 'an unknown watch has none');
    assert.equal(await store.watches.delete(w2.id), true);
    assert.deepEqual(
      (await store.watches.eventsIn([w1.id, w2.id], 0, last)).map((e) => e.id),
      [e1, e3, e5],
    );
    assert.equal(await store.watches.lastEventId(), Math.max(e1, e3, e5));
  });

  storeTest('watches: deleting one takes its matches and events; ids are not reused', async (store) => {
    const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
    const w = await store.watches.create({ ...fields, userId: a.id }, [{ repoId: 1, matches: [{ path: 'p', line: 1, text: 't' }] }], T1);
    await store.watches.addEvent(w.id, '{}', T1);
    assert.equal(await store.watches.delete(w.id), true);
    assert.equal(await store.watches.delete(w.id), false);
    assert.deepEqual(await store.watches.watchesIn(1), []);
    assert.deepEqual(await store.watches.eventsAfter(w.id, 0, 10), []);
    const again = await store.watches.create({ ...fields, userId: a.id }, [], T1);
    assert.ok(again.id > w.id, 'ids are not reused');
  });
}
