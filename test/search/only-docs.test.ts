// A search told which documents to examine (SearchOptions.docs: what a history's word
// counts know) answers exactly what the whole search answers for those documents: the
// files of the named documents that match, with the same lines; a named document that does
// not match gives nothing, one past a shard's end is ignored, and a shard not named is not
// searched. A few documents are searched in the calling thread (here-run.ts), more through
// the worker threads: both are asked. A damaged document named fails its shard there as
// in a worker: the answer says it is not exhaustive, and the repository is left out after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { loadManifest, readAllManifests } from '../../daemon/index/manifest.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { HERE_MAX_DOCS } from '../../daemon/search/here-run.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchResponse } from '../../daemon/search/types.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

const dir = tempDir('only-docs');
const data = join(dir.path, 'data');
let searcher: Searcher;
/** Per repository: its id, its one shard's file, and each path's document number. */
const repos: Array<{ repoId: number; file: string; docs: Map<string, number> }> = [];

before(async () => {
  for (const name of ['alpha', 'beta']) {
    const tree = join(dir.path, name);
    mkdirSync(tree, { recursive: true });
    for (let i = 0; i < 60; i++) {
      const body = i % 3 === 0 ? `line one\nneedle_word ${i} here\nneedle_word again\n` : `line one\nnothing ${i}\n`;
      writeFileSync(join(tree, `f${String(i).padStart(2, '0')}.txt`), body);
    }
    const s = await indexLocal(tree, { dataDir: data, name, workers: 1 });
    const m = loadManifest(data, s.repoId);
    assert.ok(m !== undefined && !('unreadable' in m) && m.shards.length === 1);
    const file = m.shards[0]!.file;
    const shard = Shard.open(join(shardsDir(data, s.repoId), file));
    const docs = new Map<string, number>();
    for (let d = 0; d < shard.docCount; d++) docs.set(shard.name(d), d);
    shard.releasePages();
    repos.push({ repoId: s.repoId, file, docs });
  }
  searcher = new Searcher({ dataDir: data, workers: 1 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

const request = { query: 'needle_word', matches: 10_000, contextLines: 1, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true };
const files = (r: SearchResponse) =>
  r.files.map((f) => ({ repo: f.repository, name: f.fileName.text, chunks: f.chunks })).sort((a, b) => (a.repo + a.name < b.repo + b.name ? -1 : 1));

test('only the named documents are examined, with the answer the whole search gives for them', async () => {
  const whole = files(await searcher.search(request));
  assert.equal(whole.length, 40);
  const [alpha, beta] = repos;
  // alpha: two that match, one that does not; beta: one that matches and one past its end.
  const named = new Map<string, number[]>([
    [`${alpha!.repoId}/${alpha!.file}`, [alpha!.docs.get('f00.txt')!, alpha!.docs.get('f01.txt')!, alpha!.docs.get('f09.txt')!].sort((a, b) => a - b)],
    [`${beta!.repoId}/${beta!.file}`, [beta!.docs.get('f27.txt')!, 1000]],
  ]);
  const only = await searcher.search(request, { docs: named });
  const expected = whole.filter((f) => (f.repo === 'alpha' && (f.name === 'f00.txt' || f.name === 'f09.txt')) || (f.repo === 'beta' && f.name === 'f27.txt'));
  assert.equal(expected.length, 3);
  assert.deepEqual(files(only), expected);
  assert.ok(only.isSearchExhaustive);
  assert.equal(only.stats.filesConsidered, 4, 'the named documents of the shards, no other candidate');
});

test('more documents than a search here takes: through the workers, the same answer', async () => {
  const whole = files(await searcher.search(request));
  // Every document of both shards but the last ten of each, and one past the end.
  const named = new Map(repos.map((r) => [`${r.repoId}/${r.file}`, [...[...r.docs.values()].sort((a, b) => a - b).slice(0, r.docs.size - 10), 5000]]));
  assert.ok([...named.values()].reduce((n, d) => n + d.length, 0) > HERE_MAX_DOCS);
  const kept = new Set(
    repos.flatMap((r) =>
      [...r.docs].filter(([, d]) => named.get(`${r.repoId}/${r.file}`)!.includes(d)).map(([name]) => `${r === repos[0] ? 'alpha' : 'beta'}/${name}`),
    ),
  );
  const only = await searcher.search(request, { docs: named });
  assert.deepEqual(
    files(only),
    whole.filter((f) => kept.has(`${f.repo}/${f.name}`)),
  );
  assert.equal(only.stats.filesConsidered, 2 * 50);
});

test('a shard not named is not searched', async () => {
  const [alpha] = repos;
  const only = await searcher.search(request, { docs: new Map([[`${alpha!.repoId}/${alpha!.file}`, [alpha!.docs.get('f03.txt')!]]]) });
  assert.deepEqual(
    files(only).map((f) => `${f.repo}/${f.name}`),
    ['alpha/f03.txt'],
  );
  assert.equal(only.stats.shardsScanned, 1);
  const none = await searcher.search(request, { docs: new Map() });
  assert.equal(none.files.length, 0);
  assert.equal(none.stats.shardsScanned, 0);
});

test('candidates found in the asking thread: the same answers as the search without', async () => {
  const queries = ['needle_word', 'needle_word again', 'nothing 1', 'line one', 'f0', 'nothing_at_all', 'needle_word -nothing', 'needle_word file:f1'];
  for (const query of queries) {
    for (const matches of [1, 3, 10_000]) {
      const req = { ...request, query, matches };
      const plain = await searcher.search(req);
      const here = await searcher.search(req, { candidatesHere: true });
      assert.deepEqual(files(here), files(plain), `${query} (${matches})`);
      assert.equal(here.isSearchExhaustive, plain.isSearchExhaustive, `${query} (${matches})`);
      assert.equal(here.stats.actualMatchCount, plain.stats.actualMatchCount, `${query} (${matches})`);
    }
  }
});

test('a stream with candidates found, or documents named, in the asking thread: the same files as a stream without', async () => {
  /** A stream's files, their JSON as sent (read before the batch returns: its bytes are reused). */
  const streamed = async (req: typeof request, options: Parameters<Searcher['search']>[1] = {}): Promise<string[]> => {
    const out: string[] = [];
    await searcher.search(req, {
      ...options,
      onChunk: (c) => {
        for (const f of c.files) out.push(Buffer.from(f.json).toString('utf8'));
        return true;
      },
    });
    return out.sort();
  };
  for (const query of ['needle_word', 'needle_word again', 'line one', 'nothing_at_all']) {
    const req = { ...request, query };
    const plain = await streamed(req);
    assert.deepEqual(await streamed(req, { candidatesHere: true }), plain, query);
  }
  const [alpha] = repos;
  const named = new Map([[`${alpha!.repoId}/${alpha!.file}`, [alpha!.docs.get('f03.txt')!, alpha!.docs.get('f04.txt')!].sort((a, b) => a - b)]]);
  const only = await streamed(request, { docs: named });
  assert.equal(only.length, 1);
  assert.deepEqual(
    only,
    (await streamed(request)).filter((json) => JSON.parse(json).fileName.text === 'f03.txt' && JSON.parse(json).repository === 'alpha'),
  );
});

test('a damaged document searched in the asking thread fails its shard as a worker would', async () => {
  const tree = join(dir.path, 'gamma');
  mkdirSync(tree, { recursive: true });
  for (let i = 0; i < 6; i++) writeFileSync(join(tree, `g${i}.txt`), `needle_word gamma_${i}_unique\n`);
  // Indexed by another process: a shard this process wrote is known to it as checked.
  const own = join(dir.path, 'gamma-data');
  const indexed = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'trawl.js'), 'index', tree, '--data-dir', own, '--no-symbols'], {
    encoding: 'utf8',
  });
  assert.equal(indexed.status, 0, indexed.stderr);
  const s = { repoId: readAllManifests(own)[0]!.repoId };
  const m = loadManifest(own, s.repoId);
  assert.ok(m !== undefined && !('unreadable' in m));
  const path = join(shardsDir(own, s.repoId), m.shards[0]!.file);
  const shard = Shard.open(path);
  const doc = [...Array(shard.docCount).keys()].find((d) => shard.name(d) === 'g2.txt')!;
  shard.releasePages();
  // One byte of that document's content changed on disk, before anything has read it (the
  // whole line occurs in the content section only: the words section holds its words apart).
  const file = readFileSync(path);
  const at = file.indexOf('needle_word gamma_2_unique\n');
  assert.ok(at > 0 && file.indexOf('needle_word gamma_2_unique\n', at + 1) === -1);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from('X'), 0, 1, at + 'needle_word '.length);
  closeSync(fd);
  const gammaSearcher = new Searcher({ dataDir: own, workers: 1 });
  try {
    const named = new Map([[`${s.repoId}/${m.shards[0]!.file}`, [doc]]]);
    const r = await gammaSearcher.search(request, { docs: named });
    assert.equal(r.files.length, 0);
    assert.equal(r.isSearchExhaustive, false, 'a shard failed');
    const next = await gammaSearcher.search(request);
    assert.equal(gammaSearcher.brokenCount, 1, 'its repository is marked broken');
    assert.deepEqual(next.files, [], 'the broken repository is left out');
    assert.equal(next.isSearchExhaustive, false, 'and the answer says so');
  } finally {
    await gammaSearcher.close();
  }
});
