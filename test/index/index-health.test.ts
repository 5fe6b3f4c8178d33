// What the health check (index-health.ts) makes of files of the data dir that are not what
// the manifest committed: another file of another size in a shard's place, something that
// is not a regular file, a mark that is not one trawl wrote. Each takes out its repository
// only, with a reason that says what is wrong, before anything maps or reads the file.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { ManifestReads, markBroken, readIndexState } from '../../daemon/index/index-health.ts';
import { BROKEN_MARK, named, readManifest, type Manifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

let root: { path: string; cleanup(): void };
let template: string;
const ids: Record<'small' | 'large', number> = { small: 0, large: 0 };

before(async () => {
  root = tempDir('health');
  template = join(root.path, 'template');
  for (const [name, files] of [
    ['small', 1],
    ['large', 5],
  ] as const) {
    const src = join(root.path, name);
    mkdirSync(src);
    for (let i = 0; i < files; i++) writeFileSync(join(src, `f${i}.txt`), `needle ${name} ${i}\n`);
    ids[name] = (await indexLocal(src, { dataDir: template, symbols: false, workers: 1 })).repoId;
  }
});

after(() => root.cleanup());

function shardOf(data: string, name: 'small' | 'large'): string {
  return join(shardsDir(data, ids[name]), readManifest(data, ids[name])!.shards[0]!.file);
}

test('a commit records the size of every file its manifest names', () => {
  for (const id of Object.values(ids)) {
    const m = readManifest(template, id) as Manifest;
    const files = named(m);
    assert.ok(files.length > 0);
    assert.deepEqual(m.fileBytes, Object.fromEntries(files.map((f) => [f, statSync(join(shardsDir(template, id), f)).size])));
  }
});

const CASES: Array<{ name: string; damage(data: string): void; reason: RegExp }> = [
  {
    // A valid shard, so its own header passes: only the recorded size tells it is not this index's.
    name: "another repository's shard in a shard's place",
    damage: (data) => copyFileSync(shardOf(data, 'large'), shardOf(data, 'small')),
    reason: /^manifest\.json names g\d+-0\.trawl of \d+ bytes, which has \d+$/,
  },
  {
    name: "a FIFO in a shard's place",
    damage: (data) => (rmSync(shardOf(data, 'small')), assert.equal(spawnSync('mkfifo', [shardOf(data, 'small')]).status, 0)),
    reason: /^manifest\.json names g\d+-0\.trawl, which is not a regular file$/,
  },
  {
    name: 'a mark of 2 GiB (sparse)',
    damage: (data) => assert.equal(spawnSync('truncate', ['-s', String(2 ** 31), join(shardsDir(data, ids.small), BROKEN_MARK)]).status, 0),
    reason: /^marked broken \(the mark is 2,147,483,648 bytes, over the 65,536 bytes a file of its kind may hold\)$/,
  },
];

for (const c of CASES) {
  test(`health: ${c.name} takes out that repository only, saying why`, () => {
    const data = join(root.path, `case-${CASES.indexOf(c)}`);
    cpSync(template, data, { recursive: true });
    try {
      c.damage(data);
      const started = performance.now();
      const state = readIndexState(data);
      assert.ok(performance.now() - started < 1000, 'found without reading the file');
      assert.deepEqual(
        state.manifests.map((m) => m.repoId),
        [ids.large],
      );
      assert.equal(state.broken.length, 1);
      assert.equal(state.broken[0]!.repoId, ids.small);
      assert.match(state.broken[0]!.reason, c.reason);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
}

test("a view's next read takes what changed and keeps the verdicts of manifests and marks that did not", async () => {
  const data = join(root.path, 'incremental');
  cpSync(template, data, { recursive: true });
  try {
    const reads = new ManifestReads();
    const first = readIndexState(data, reads);
    const byId = (s: ReturnType<typeof readIndexState>, id: number) => s.manifests.find((m) => m.repoId === id);
    assert.deepEqual(first.manifests.map((m) => m.repoId).sort(), [ids.small, ids.large].sort());

    // The small repository re-indexed: its new manifest is read, the large one's is kept as it was.
    const src = join(root.path, 'small');
    writeFileSync(join(src, 'f9.txt'), 'needle small changed\n');
    await indexLocal(src, { dataDir: data, symbols: false, workers: 1 });
    const second = readIndexState(data, reads);
    assert.ok(byId(second, ids.small)!.generation > byId(first, ids.small)!.generation, 'the new generation is read');
    assert.equal(byId(second, ids.large), byId(first, ids.large), 'an unchanged manifest is not read again');
    assert.deepEqual(
      readIndexState(data).manifests.map((m) => [m.repoId, m.generation]),
      second.manifests.map((m) => [m.repoId, m.generation]),
      'the same state as a full read',
    );

    // A mark written for the large one: broken at the next read.
    assert.ok(markBroken(data, ids.large, byId(second, ids.large)!.generation, 'checksum mismatch'));
    const third = readIndexState(data, reads);
    assert.deepEqual(
      third.manifests.map((m) => m.repoId),
      [ids.small],
    );
    assert.deepEqual(
      third.broken.map((b) => [b.repoId, b.reason]),
      [[ids.large, 'checksum mismatch']],
    );

    // Its mark removed, then its directory: served again, then gone.
    rmSync(join(shardsDir(data, ids.large), BROKEN_MARK));
    assert.deepEqual(
      readIndexState(data, reads)
        .manifests.map((m) => m.repoId)
        .sort(),
      [ids.small, ids.large].sort(),
    );
    rmSync(shardsDir(data, ids.large), { recursive: true });
    const last = readIndexState(data, reads);
    assert.deepEqual(
      last.manifests.map((m) => m.repoId),
      [ids.small],
    );
    assert.equal(last.broken.length, 0);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});
