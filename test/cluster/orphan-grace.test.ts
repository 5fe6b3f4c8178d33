// A published shard with no live holder is built again only when it stays so (replicator.ts):
// for the orphan grace (the cluster's nodeTimeoutMs) of this node's rounds, and never in a
// node's first three graces, when the nodes of a cluster restarted together are still
// rejoining. A holder seen meanwhile resets the wait. Before, a publication read before
// its builder's holdings queued another build, whose publication queued the next (seen on
// Linux: 37 generations in half an hour of a four-node cluster). And a build's holdings
// are written before its publication (publishBuild).
//
// The replicator runs against a view of a cluster made of plain objects: the shard's
// holders are what the test says.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Replicator } from '../../daemon/cluster/replicator.ts';
import type { ClusterView } from '../../daemon/cluster/cluster-view.ts';
import type { PeerClient } from '../../daemon/cluster/peer-client.ts';
import type { PublishedIndex } from '../../daemon/cluster/published.ts';
import type { Manifest } from '../../daemon/index/manifest.ts';
import { tempDir } from '../helpers/corpus.ts';

const count = () => ({ inc() {} });
const counters = {
  remoteRequests: count(),
  remoteShards: count(),
  shardFailures: count(),
  shardRetries: count(),
  speculativeShards: count(),
  shardsAskedAgain: count(),
  filesCut: count(),
  filesShapedRemotely: count(),
  unavailableShards: count(),
  copiedShards: count(),
  copiedBytes: count(),
  copyFailures: count(),
};
const silent = { info() {}, warn() {}, error() {}, debug() {} };

function manifest(generation: number): Manifest {
  const repo = {
    name: 'r',
    displayName: 'r',
    codeHostType: 'genericGitHost' as const,
    archived: false,
    fork: false,
    visibility: 'public' as const,
    kind: 'git' as const,
    source: '/r',
  };
  const shard = { file: `g${generation}-0.trawl`, docs: 1, liveDocs: 1, contentBytes: 1, liveContentBytes: 1, delta: false };
  return {
    version: 2,
    repoId: 7,
    repo,
    generation,
    refs: [],
    shards: [shard],
    indexedAt: new Date(0).toISOString(),
    files: 1,
    contentBytes: 1,
    skipped: 0,
    baseGeneration: generation,
    retired: [],
  } as unknown as Manifest;
}

/** A view of one published shard, owned first by this node, held by `holders()`; `events` records writes in order. */
function fakeView(holders: () => string[], events: string[]): ClusterView {
  const { retired: _r, ...m } = manifest(5);
  const published: PublishedIndex = { repoId: 7, generation: 5, builtBy: 'gone', manifest: m, publishedAt: new Date(0).toISOString() };
  let seq = 0;
  return {
    self: 'me',
    get version() {
      return `v${seq++}`;
    },
    async refresh() {},
    live: () => [{ id: 'me' }, { id: 'other' }],
    urlOf: () => undefined,
    invalidate() {},
    placement: { replicas: 2, owners: () => ['me', 'other'] },
    published: { all: () => [published], get: () => published, publish: async () => (events.push('publish'), true) },
    holdings: { holders: () => holders(), write: async () => (events.push('holdings'), true) },
    membership: { holdingsChanged: async () => void events.push('holdsVersion') },
  } as unknown as ClusterView;
}

test('an orphaned shard is built again only after the grace, and not while the node is young', async () => {
  const dir = tempDir('orphan-grace');
  try {
    const dataDir = join(dir.path, 'data');
    mkdirSync(dataDir, { recursive: true });
    let held: string[] = [];
    const rebuilds: number[] = [];
    let rebuiltAt = 0;
    const GRACE = 1000;
    const started = Date.now();
    const r = new Replicator({
      dataDir,
      view: fakeView(() => held, []),
      peers: {} as PeerClient,
      log: silent as never,
      rebuild: (id) => (rebuilds.push(id), (rebuiltAt = Date.now() - started)),
      counters,
      orphanGraceMs: GRACE,
    });
    const until = async (ms: number) => {
      while (Date.now() - started < ms) {
        await r.schedule();
        await new Promise((res) => setTimeout(res, 10));
      }
    };
    // Young: no rebuild for three graces, however long the shard has been orphaned.
    await until(3 * GRACE - 300);
    assert.deepEqual(rebuilds, [], 'nothing built again while the node is young');
    // A holder seen resets the wait: orphaned again, the grace starts over.
    held = ['other'];
    await r.schedule();
    held = [];
    const reset = Date.now() - started;
    await until(Math.max(reset + GRACE - 300, 3 * GRACE + 100));
    assert.deepEqual(rebuilds, [], 'a holder seen meanwhile restarted the grace');
    // Rounds go on until it is built again (a round on a loaded machine may come late).
    const deadline = Date.now() + 10_000;
    while (rebuilds.length === 0 && Date.now() < deadline) {
      await r.schedule();
      await new Promise((res) => setTimeout(res, 10));
    }
    assert.ok(rebuiltAt >= reset + GRACE, `not before the grace (at ${rebuiltAt} ms, orphaned again at ${reset} ms)`);
    assert.deepEqual(rebuilds, [7], 'built again once, after the grace');
    await r.stop();
  } finally {
    dir.cleanup();
  }
});

test("a build's holdings are written before its publication", async () => {
  const dir = tempDir('publish-order');
  try {
    const events: string[] = [];
    const r = new Replicator({
      dataDir: join(dir.path, 'data'),
      view: fakeView(() => ['me'], events),
      peers: {} as PeerClient,
      log: silent as never,
      rebuild: () => {},
      counters,
      orphanGraceMs: 1000,
    });
    mkdirSync(join(dir.path, 'data'), { recursive: true });
    assert.equal(await r.publishBuild(manifest(6)), true);
    assert.deepEqual(events, ['holdings', 'holdsVersion', 'publish']);
    await r.stop();
  } finally {
    dir.cleanup();
  }
});
