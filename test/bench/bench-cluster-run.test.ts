// `trawl bench run --only cluster --quick` end to end on a small generated tree, as an
// operator runs it: one daemon and clusters of 1 and 2 nodes on a private PostgreSQL and
// Redis, each syncing the tree as a git repository; the result file valid against the
// schema with every configuration measured, no request failed and every node answering
// what the one daemon answers. Durations are printed, not asserted.
//
// Skipped with a visible reason when PostgreSQL or redis-server is not installed, unless
// $TRAWL_REQUIRE_POSTGRES / $TRAWL_REQUIRE_REDIS say CI must run it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resultErrors } from '../../bench/suite/result-file.ts';
import type { AnyBenchResult } from '../../bench/suite/result.ts';
import { generateCorpus, tempDir } from '../helpers/corpus.ts';
import { runTrawl as trawl } from '../helpers/trawl-cli.ts';

/** Why the phase cannot run here, or undefined. */
function missing(): string | undefined {
  const pg = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((v) => existsSync(join('/usr/lib/postgresql', v, 'bin', 'initdb')));
  const redis = spawnSync('redis-server', ['--version']).status === 0;
  const why = [...(pg ? [] : ["Debian's postgresql"]), ...(redis ? [] : ['redis-server'])];
  if (why.length === 0) return undefined;
  const reason = `the cluster phase needs ${why.join(' and ')} (scripts/setup.sh installs them)`;
  if (process.env.TRAWL_REQUIRE_POSTGRES === '1' || process.env.TRAWL_REQUIRE_REDIS === '1') throw new Error(reason);
  return reason;
}

describe('trawl bench run --only cluster --quick', () => {
  const tmp = tempDir('bench-cluster-run');
  const corpus = join(tmp.path, 'tree');
  const out = join(tmp.path, 'result.json');
  const skip = missing();
  let run: Awaited<ReturnType<typeof trawl>>;
  let result: AnyBenchResult;

  before(
    async () => {
      if (skip) return;
      generateCorpus(corpus, 5, 60);
      run = await trawl(
        [
          'bench',
          'run',
          '--corpus',
          corpus,
          '--quick',
          '--only',
          'cluster',
          '--cluster-nodes',
          '1,2',
          '--http-seconds',
          '1',
          '--http-iterations',
          '3',
          '--out',
          out,
        ],
        tmp.path,
      );
      process.stderr.write(`# bench run --only cluster took ${(run.ms / 1000).toFixed(1)} s\n`);
    },
    { timeout: 300_000 },
  );
  after(() => tmp.cleanup());

  it('exits 0 and writes a result of the cluster phase alone, valid against the schema', (t) => {
    if (skip) return t.skip(skip);
    assert.equal(run.code, 0, run.stderr);
    result = JSON.parse(readFileSync(out, 'utf8')) as AnyBenchResult;
    assert.deepEqual(resultErrors(result), []);
    assert.equal(result.options.only, 'cluster');
    assert.deepEqual(result.options.clusters, [
      { nodes: 1, replicationFactor: 1 },
      { nodes: 2, replicationFactor: 2 },
    ]);
    assert.equal(result.search, undefined);
    assert.match(run.stdout, /^\| cluster of 2 nodes \| 2 \| 2 \|/m);
  });

  it('measured one daemon, then 1 and 2 nodes: no failed request, the same answers everywhere', (t) => {
    if (skip) return t.skip(skip);
    const c = result.cluster!;
    assert.deepEqual(
      c.configurations.map((x) => [x.kind, x.nodes, x.replicationFactor]),
      [
        ['plain', 1, null],
        ['cluster', 1, 1],
        ['cluster', 2, 2],
      ],
    );
    for (const x of c.configurations) {
      const name = `${x.kind} ${x.nodes}`;
      assert.ok(x.shards >= 1 && x.indexBytes > 0, name);
      assert.equal(x.perNode.length, x.nodes, name);
      assert.ok(
        x.queries.every((q) => q.error === null && q.samplesMs.length === 3),
        name,
      );
      assert.ok(x.load.requests > 0 && x.load.perSecondSamples.length >= 1, name);
      assert.equal(x.load.non2xx + x.load.errors + x.load.timeouts, 0, name);
      assert.deepEqual(x.mismatches, [], name);
      if (process.platform === 'linux') assert.ok(x.load.cpuMsPerRequest! > 0, name);
      // Both nodes of the two-node cluster hold every shard (replication 2) and both took requests.
      if (x.nodes === 2) for (const n of x.perNode) assert.ok(n.shards === x.shards && n.loadRequests > 0, `${name} ${n.id}`);
    }
    assert.equal(c.configurations[0]!.overheadMs, null);
    assert.equal(typeof c.configurations[2]!.overheadMs, 'number');
    // The clusters' requests were paired with the daemon's, kept running beside them; the daemon has no reference.
    assert.ok(c.configurations[0]!.queries.every((q) => q.referenceP50Ms === undefined));
    for (const x of c.configurations.slice(1)) {
      for (const q of x.queries) {
        assert.ok(typeof q.referenceP50Ms === 'number' && q.referenceP50Ms > 0, `${x.nodes} ${q.name}`);
        assert.equal(q.overheadMs, Math.round((q.latencyMs!.p50 - q.referenceP50Ms) * 1e4) / 1e4, `${x.nodes} ${q.name}`);
      }
    }
    // One node each holding every shard is no control of anything here.
    assert.ok(c.configurations.every((x) => x.sameNodesOverheadMs === null));
    if (process.platform === 'linux')
      for (const x of c.configurations) assert.ok(x.oneClient && x.oneClient.cpuMsPerRequest > 0 && x.oneClient.waitMsPerRequest >= 0, `${x.kind} ${x.nodes}`);
  });
});
