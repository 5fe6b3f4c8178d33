// The cache of whole-repository answers: one build per question however many ask at once,
// bounded by bytes (least recently used out first), a repository's answers dropped when
// a newer index generation of it is asked about, failures never kept, and at most two
// builds running at a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerCache, type BuiltAnswer } from '../../daemon/http/answer-cache.ts';

const KB = 1024;

function answer(text: string, size = text.length): BuiltAnswer {
  return { bytes: Buffer.from(text.padEnd(size, ' ')) };
}

/** A build that counts its runs and answers `text`. */
function counted(text: string, size?: number): { build: () => Promise<BuiltAnswer>; runs: () => number } {
  let runs = 0;
  return {
    build: async () => {
      runs++;
      return answer(text, size);
    },
    runs: () => runs,
  };
}

const repo1 = { repoId: 1, generation: 1 };
const repo2 = { repoId: 2, generation: 1 };

test('a question asked again, or by many at once, is built once', async () => {
  const cache = new AnswerCache(1024 * KB);
  let release!: () => void;
  let runs = 0;
  const build = async () => {
    runs++;
    await new Promise<void>((r) => (release = r));
    return { bytes: Buffer.from('"x"'), value: 'x' };
  };
  const asked = Array.from({ length: 10 }, () => cache.answer(repo1, 'files abc', build));
  await new Promise((r) => setImmediate(r));
  release();
  const got = await Promise.all(asked);
  assert.equal(runs, 1);
  for (const g of got) assert.equal(Buffer.from(g.bytes).toString(), '"x"');
  assert.equal(got[0]!.value(), 'x', 'the value the answer was made from, not the bytes parsed again');
  const again = await cache.answer(repo1, 'files abc', build);
  assert.equal(runs, 1);
  assert.equal(Buffer.from(again.bytes).toString(), '"x"');
});

test('bounded by bytes: the least recently used answers go first; one larger than the bound is sent but not kept', async () => {
  const cache = new AnswerCache(100 * KB);
  const a = counted('a', 40 * KB);
  const b = counted('b', 40 * KB);
  const c = counted('c', 40 * KB);
  await cache.answer(repo1, 'a', a.build);
  await cache.answer(repo1, 'b', b.build);
  await cache.answer(repo1, 'a', a.build); // a is now the most recently used
  await cache.answer(repo1, 'c', c.build); // over the bound: b goes
  assert.ok(cache.heldBytes <= 100 * KB, `${cache.heldBytes} bytes held`);
  await cache.answer(repo1, 'a', a.build);
  await cache.answer(repo1, 'c', c.build);
  assert.deepEqual([a.runs(), c.runs()], [1, 1], 'a and c were kept');
  await cache.answer(repo1, 'b', b.build);
  assert.equal(b.runs(), 2, 'b was let go');

  const huge = counted('huge', 200 * KB);
  const got = await cache.answer(repo1, 'huge', huge.build);
  assert.equal(got.bytes.byteLength, 200 * KB);
  await cache.answer(repo1, 'huge', huge.build);
  assert.equal(huge.runs(), 2, 'larger than the bound: never kept');
  assert.ok(cache.heldBytes <= 100 * KB);
});

test('a value kept beside the bytes counts against the bound too', async () => {
  const cache = new AnswerCache(100 * KB);
  let runs = 0;
  const build = async () => {
    runs++;
    return { bytes: Buffer.alloc(40 * KB, 0x20), value: ['x'] };
  };
  await cache.answer(repo1, 'with value', build);
  await cache.answer(repo1, 'with value', build);
  assert.equal(runs, 2, '40 KB of JSON and its value count for more than 100 KB: not kept');
});

test('a newer index generation drops the older answers of that repository only; an older one is answered but not kept', async () => {
  const cache = new AnswerCache(1024 * KB);
  const old1 = counted('old');
  const other = counted('other');
  await cache.answer(repo1, 'files', old1.build);
  await cache.answer(repo2, 'files', other.build);
  const new1 = counted('new');
  assert.equal(Buffer.from((await cache.answer({ repoId: 1, generation: 2 }, 'files', new1.build)).bytes).toString(), 'new');
  assert.equal(new1.runs(), 1);
  await cache.answer(repo2, 'files', other.build);
  assert.equal(other.runs(), 1, 'another repository keeps its answers');
  // A request that read the catalog before the re-index: answered, not kept.
  await cache.answer(repo1, 'files', old1.build);
  await cache.answer(repo1, 'files', old1.build);
  assert.equal(old1.runs(), 3);
  await cache.answer({ repoId: 1, generation: 2 }, 'files', new1.build);
  assert.equal(new1.runs(), 1);
  // Built while a newer generation was asked about: stale before it is done, not kept.
  let release!: () => void;
  let slowRuns = 0;
  const slow = async () => {
    slowRuns++;
    await new Promise<void>((r) => (release = r));
    return answer('slow');
  };
  const pending = cache.answer({ repoId: 1, generation: 2 }, 'tree', slow);
  await new Promise((r) => setImmediate(r));
  await cache.answer({ repoId: 1, generation: 3 }, 'files', counted('newest').build);
  release();
  await pending;
  const again = cache.answer({ repoId: 1, generation: 2 }, 'tree', slow);
  await new Promise((r) => setImmediate(r));
  release();
  await again;
  assert.equal(slowRuns, 2);
});

test('a failed build is not kept: its waiters get the error, the next request builds again', async () => {
  const cache = new AnswerCache(1024 * KB);
  let runs = 0;
  const failing = async (): Promise<BuiltAnswer> => {
    runs++;
    throw new Error('damaged');
  };
  await assert.rejects(Promise.all([cache.answer(repo1, 'q', failing), cache.answer(repo1, 'q', failing)]), /damaged/);
  await assert.rejects(cache.answer(repo1, 'q', failing), /damaged/);
  assert.equal(runs, 2);
  assert.equal(cache.heldBytes, 0);
});

test('at most two builds run at once; a waiter that gives up stops waiting, and a build nobody waits for is not run', async () => {
  const cache = new AnswerCache(1024 * KB);
  let running = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  const started: string[] = [];
  const build = (name: string) => async () => {
    started.push(name);
    running++;
    most = Math.max(most, running);
    await new Promise<void>((r) => releases.push(r));
    running--;
    return answer(name);
  };
  const a = cache.answer(repo1, 'a', build('a'));
  const b = cache.answer(repo1, 'b', build('b'));
  const gone = new AbortController();
  const c = cache.answer(repo1, 'c', build('c'), gone.signal);
  const d = cache.answer(repo1, 'd', build('d'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['a', 'b']);
  gone.abort(new Error('client went away'));
  await assert.rejects(c, /client went away/);
  while (releases.length > 0) {
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(await Promise.all([a, b, d].map(async (p) => Buffer.from((await p).bytes).toString())), ['a', 'b', 'd']);
  assert.deepEqual(started, ['a', 'b', 'd'], 'c had no waiter left when its turn came');
  assert.equal(most, 2);
});
