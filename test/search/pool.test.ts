// The search pool (pool.ts): the workers claim a search's shards from a shared control
// block. Every shard is answered exactly once, in whatever order the workers finish; a
// worker that dies fails only the shard it was running, and its replacement finishes the
// search; the worker id recorded in a claim names the live worker that took the shard. A
// run whose caller releases its files gives its big message buffers back to the workers.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { releaseFile, unpackMessage } from '../../daemon/search/file-codec.ts';
import { SearchPool } from '../../daemon/search/pool.ts';
import { memberRef, NO_SPECULATION, packr, shardRef, type ShardReply } from '../../daemon/search/protocol.ts';
import { startOn, type TestTask } from '../helpers/pool-task.ts';
import type { ShapeOptions } from '../../daemon/search/file-json.ts';
import { tempDir } from '../helpers/corpus.ts';
import { haystackIndex as haystack } from '../helpers/haystack.ts';

/** How the workers shape the hits (the request's defaults). */
const SHAPE: ShapeOptions = { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://localhost:3000' };

const dir = tempDir('search-pool');
after(() => dir.cleanup());

/** 600 files in shards of ~0.5 MB: a dozen shards. */
const haystackIndex = haystack(dir.path, 600, 100, 1 << 19);

async function task(query: string, regex: boolean, planId: number, batch = false, stopAfter = 1_000_000_000): Promise<TestTask> {
  const dataDir = await haystackIndex();
  const m = readAllManifests(dataDir)[0]!;
  const plan = packr.pack(planQuery({ query, isRegexEnabled: regex, isCaseSensitivityEnabled: true }));
  return {
    planId,
    plan,
    limit: 1_000_000,
    brute: false,
    shards: m.shards.map((s) => shardRef(join(shardsDir(dataDir, m.repoId), s.file), [memberRef(0, m.repoId)])),
    cut: { ranges: stopAfter, rankedRanges: stopAfter, loadedKiB: Infinity },
    batch,
    definitionsPastCut: false,
    shape: SHAPE,
    speculateFrom: NO_SPECULATION,
    caller: '',
  };
}

const workers = (pool: SearchPool) => (pool as unknown as { slots: Array<{ worker: Worker }> }).slots.map((s) => s.worker);
const found = (r: ShardReply) => (r.status === 'done' ? r.result.found : 0);

test('two workers answer every shard of a search once, with the same results as one worker', async () => {
  const t = await task('needle_1[0-9]_7 ', true, 1);
  assert.ok(t.shards.length >= 8, `a dozen shards (${t.shards.length})`);
  const one = new SearchPool(1);
  const two = new SearchPool(2);
  try {
    const a = await Promise.all(startOn(one, t, new SharedArrayBuffer(4)).replies);
    const b = await Promise.all(startOn(two, t, new SharedArrayBuffer(4)).replies);
    assert.deepEqual(
      a.map((r) => r.status),
      t.shards.map(() => 'done'),
    );
    assert.deepEqual(b.map(found), a.map(found));
    assert.ok(a.filter((r) => found(r) > 0).length >= 2, 'matches in several shards');
    // Each worker's replies in one message (a blocking search): the same answers.
    const batched = await Promise.all(startOn(two, { ...t, batch: true }, new SharedArrayBuffer(4)).replies);
    assert.deepEqual(batched.map(found), a.map(found));
    // Several searches at once: each gets its own answers.
    const many = await Promise.all([1, 2, 3, 4].map(async () => (await Promise.all(startOn(two, t, new SharedArrayBuffer(4)).replies)).map(found)));
    for (const m of many) assert.deepEqual(m, a.map(found));
    assert.deepEqual(two.load(), { busy: 0, queued: 0 });
  } finally {
    await Promise.all([one.close(), two.close()]);
  }
});

test('a worker that dies fails the shard it was running; its replacement finishes the search', async () => {
  // A regex that reads every line of every file: each shard takes a while.
  const t = await task('x', true, 2);
  const pool = new SearchPool(1);
  try {
    // Warm (the worker started, the shards mapped): then the worker is killed as soon as
    // the shared control block shows it has claimed a shard past the first, which it runs
    // from then on. (Waiting for the first reply instead missed under load: that reply can
    // be read on this thread only after the worker has answered every shard.) Should the
    // worker still finish before the kill lands, the kill fails nothing and the attempt is
    // made again. Each attempt must keep the rules: at most the running shard fails, the
    // rest are done, the dead worker is replaced.
    await Promise.all(startOn(pool, t, new SharedArrayBuffer(4)).replies);
    let caught = 0;
    for (let attempt = 1; attempt <= 3 && caught === 0; attempt++) {
      const run = startOn(pool, t, new SharedArrayBuffer(4));
      const state = run as unknown as { size: number; queued: number; done: boolean };
      while (state.size - state.queued < 2 && !state.done) await new Promise((r) => setImmediate(r));
      const [first] = workers(pool);
      await first!.terminate();
      const replies = await Promise.all(run.replies);
      const failed = replies.filter((r) => r.status === 'failed');
      assert.ok(failed.length <= 1, `attempt ${attempt}: only the shard it was running fails (${failed.length} failed)`);
      for (const f of failed) assert.match((f as { error: string }).error, /search worker failed/);
      assert.equal(replies.filter((r) => r.status === 'done').length, replies.length - failed.length);
      assert.equal(replies.at(-1)!.status, 'done', 'the replacement took the shards left');
      assert.ok(!workers(pool).includes(first!), 'the dead worker was replaced');
      caught = failed.length;
    }
    assert.equal(caught, 1, 'in 3 attempts the worker was never killed while it ran a shard');
    // The pool goes on: a new search is answered in full.
    const again = await Promise.all(startOn(pool, t, new SharedArrayBuffer(4)).replies);
    assert.deepEqual(
      again.map((r) => r.status),
      t.shards.map(() => 'done'),
    );
  } finally {
    await pool.close();
  }
});

test('stopping a search skips the shards no worker has claimed, at once', async () => {
  const t = await task('needle_[0-9]+_[0-9]+ x+$', true, 3);
  const pool = new SearchPool(1);
  try {
    const cancel = new SharedArrayBuffer(4);
    const run = startOn(pool, t, cancel);
    await run.replies[0];
    Atomics.store(new Int32Array(cancel), 0, 1);
    run.stop();
    const replies = await Promise.all(run.replies);
    const skipped = replies.filter((r) => r.status === 'skipped').length;
    // Shard 0 answered, shard 1 perhaps running (it stops at its next check): the rest never ran.
    assert.ok(skipped >= t.shards.length - 2, `${skipped} of ${t.shards.length} skipped`);
    assert.deepEqual(pool.load(), { busy: 0, queued: 0 });
  } finally {
    await pool.close();
  }
});

test("no shard is claimed once the shards answered are past the task's cut", async () => {
  const t = await task('x', true, 4, true, 0);
  const pool = new SearchPool(1);
  try {
    const run = startOn(pool, t, new SharedArrayBuffer(4));
    // One worker claims in order: shard 0 finds matches, which passes a cut at 0 ranges.
    assert.equal((await run.replies[0]).status, 'done');
    await new Promise((r) => setTimeout(r, 200));
    run.stop(); // what the searcher does once its cut is passed
    const replies = await Promise.all(run.replies);
    assert.deepEqual(
      replies.map((r) => r.status),
      ['done', ...t.shards.slice(1).map(() => 'skipped')],
    );
  } finally {
    await pool.close();
  }
});

test('the cut counts content read too: past its ranges, a search stops at its reading budget', async () => {
  const base = await task('x', true, 5, true);
  const pool = new SearchPool(1);
  try {
    // Every shard holds matches and reads a few hundred KiB: with 1 range and 1 KiB as the
    // cut (and a ranked depth never reached) the first shard is the last one claimed.
    const run = startOn(pool, { ...base, cut: { ranges: 1, rankedRanges: 1e9, loadedKiB: 1 } }, new SharedArrayBuffer(4));
    assert.equal((await run.replies[0]).status, 'done');
    await new Promise((r) => setTimeout(r, 200));
    run.stop();
    assert.deepEqual(
      (await Promise.all(run.replies)).map((r) => r.status),
      ['done', ...base.shards.slice(1).map(() => 'skipped')],
    );
    // Under its ranges the budget does not stop it.
    const all = startOn(pool, { ...base, cut: { ranges: 1e9, rankedRanges: 1e9, loadedKiB: 1 } }, new SharedArrayBuffer(4));
    assert.deepEqual(
      (await Promise.all(all.replies)).map((r) => r.status),
      base.shards.map(() => 'done'),
    );
  } finally {
    await pool.close();
  }
});

test('a run whose caller releases its files gives message buffers of 64 KB or more back to the workers, and only such a run', async () => {
  const big = await task('needle_1', false, 41, true); // every line of 111 files: big messages
  const small = await task('needle_1[0-9]_7 ', true, 42, true); // a line of 10 files
  const pool = new SearchPool(1);
  try {
    // Each message buffer's size, and its size once every file of the run is released (0: transferred back).
    const run = async (t: TestTask, releasesFiles: boolean) => {
      const replies = await Promise.all(startOn(pool, t, new SharedArrayBuffer(4), t.shards.length, releasesFiles).replies);
      const files = replies.flatMap((r) => (r.status === 'done' ? r.files : []));
      assert.ok(files.length > 0, 'files found');
      const buffers = [...new Set(files.map((f) => (f as unknown as { buffer: ArrayBuffer }).buffer))];
      const sizes = buffers.map((b) => b.byteLength);
      for (const f of files) releaseFile(f);
      await new Promise((r) => setImmediate(r));
      return { sizes, after: buffers.map((b) => b.byteLength) };
    };
    const kept = await run(big, false);
    assert.deepEqual(kept.after, kept.sizes, 'a blocking run whose caller keeps its files gives nothing back');
    const given = [await run(big, true), await run(small, true)];
    const sizes = given.flatMap((g) => g.sizes);
    assert.ok(sizes.some((b) => b >= 64 << 10) && sizes.some((b) => b < 64 << 10), `big and small messages (${sizes.join(', ')} bytes)`);
    for (const g of given) g.sizes.forEach((size, i) => assert.equal(g.after[i], size >= 64 << 10 ? 0 : size, `a buffer of ${size} bytes`));
  } finally {
    await pool.close();
  }
});

test('a run with onMessage gets each message of replies packed, before its shards resolve without their files', async () => {
  const t = await task('needle_1', false, 43, true);
  const pool = new SearchPool(2);
  try {
    const whole = await Promise.all(startOn(pool, t, new SharedArrayBuffer(4)).replies);
    const run = startOn(pool, t, new SharedArrayBuffer(4), t.shards.length, true);
    const messages: Array<{ shards: number[]; files: string[][]; found: number[] }> = [];
    const settledBefore: boolean[] = [];
    const resolved = new Set<number>();
    run.replies.forEach((r, i) => void r.then(() => resolved.add(i)));
    run.onMessage = (shards, message) => {
      for (const s of shards) settledBefore.push(resolved.has(s));
      // Copied now, as the hook promises: the buffer goes back to the worker after it.
      const { value, groups } = unpackMessage(Uint8Array.from(message));
      messages.push({ shards: [...shards], files: groups.map((g) => g.map((f) => f.path)), found: (value as ShardReply[]).map(found) });
    };
    const replies = await Promise.all(run.replies);
    assert.ok(messages.length > 0);
    assert.ok(
      settledBefore.every((s) => !s),
      'the hook hears of a reply before it resolves',
    );
    const byShard = new Map<number, { files: string[]; found: number }>();
    for (const m of messages) m.shards.forEach((s, k) => byShard.set(s, { files: m.files[k]!, found: m.found[k]! }));
    assert.deepEqual(
      [...byShard.keys()].sort((a, b) => a - b),
      t.shards.map((_, i) => i),
      'every shard in one message',
    );
    replies.forEach((r, i) => {
      assert.equal(r.status, 'done');
      if (r.status === 'done') assert.equal(r.files.length, 0, 'a reply resolves without its files');
      const w = whole[i]!;
      assert.equal(found(r), found(w), 'the reply resolves with its counts');
      assert.equal(byShard.get(i)!.found, found(w));
      assert.deepEqual(byShard.get(i)!.files, w.status === 'done' ? w.files.map((f) => f.path) : []);
    });
    assert.ok(
      whole.some((w) => found(w) > 0),
      'files found',
    );
  } finally {
    await pool.close();
  }
});

test('a catalog is sent as changes to the last one; it is searched as the whole one is, by a replacement worker too', async () => {
  // Found in some shards' files and not others': a shard searched in another's place shows.
  const t = await task('needle_1[0-9]*_7 ', true, 1, true);
  const all = t.shards;
  assert.ok(all.length >= 8, `enough shards (${all.length})`);
  const copy = (r: (typeof all)[number]) =>
    shardRef(
      r.shardPath,
      r.members.map((m) => memberRef(m.member, m.repoId)),
    );
  const pool = new SearchPool(2);
  const reference = new SearchPool(1);
  const sent: Array<{ id: number; base?: number; bytes: number }> = [];
  const spy = () => {
    for (const w of workers(pool)) {
      const post = w.postMessage.bind(w);
      if ((w as { spied?: boolean }).spied) continue;
      (w as { spied?: boolean }).spied = true;
      w.postMessage = (msg: { kind: string; id: number; base?: number; body: Uint8Array }, transfer?: never) => {
        if (msg.kind === 'catalog') sent.push({ id: msg.id, base: msg.base, bytes: msg.body.byteLength });
        post(msg, transfer);
      };
    }
  };
  /** Each place's hits, searched through `on` with catalog `refs`. */
  const search = async (on: SearchPool, refs: typeof all) => {
    const catalog = on.catalog(refs);
    const replies = await Promise.all(on.start({ ...t, catalog, shards: refs.map((_, i) => i) }, new SharedArrayBuffer(4)).replies);
    return { catalog, found: replies.map((r) => (r.status === 'done' ? found(r) : r.status)) };
  };
  try {
    spy();
    const a = all.slice(0, 6);
    await search(pool, a);
    // Shards of the last catalog (the same objects), in another order, and others (new objects for known files too).
    const b = [all[5]!, copy(all[7]!), all[0]!, all[6]!, copy(all[1]!), all[2]!];
    const searchedB = await search(pool, b);
    assert.deepEqual(searchedB.found, (await search(reference, b)).found);
    assert.ok(new Set(searchedB.found).size > 1, `the shards' counts differ: ${searchedB.found.join(' ')}`);
    const ofB = sent.filter((m) => m.id === searchedB.catalog);
    assert.equal(ofB.length, 2, 'both workers were sent the catalog');
    for (const m of ofB) assert.equal(m.base, searchedB.catalog - 1, 'as changes to the last one');
    const whole = sent.find((m) => m.base === undefined && m.id < searchedB.catalog)!;
    assert.ok(ofB[0]!.bytes < whole.bytes, `the changes (${ofB[0]!.bytes} bytes) are smaller than a whole catalog (${whole.bytes})`);

    // A worker replaced after the last catalog was dropped holds the earlier ones only: the next comes to it whole.
    pool.dropCatalog(searchedB.catalog);
    const [first] = workers(pool);
    await first!.terminate();
    while (workers(pool).includes(first!)) await new Promise((r) => setTimeout(r, 5));
    spy();
    const c = [all[0]!, copy(all[3]!), all[6]!, all[7]!, copy(all[8]!), all[5]!];
    const searchedC = await search(pool, c);
    assert.deepEqual(searchedC.found, (await search(reference, c)).found);
    const ofC = sent.filter((m) => m.id === searchedC.catalog);
    assert.deepEqual(ofC.map((m) => m.base).sort(), [searchedB.catalog, undefined].sort(), 'the replacement was sent it whole, the other worker as changes');
  } finally {
    await pool.close();
    await reference.close();
  }
});
