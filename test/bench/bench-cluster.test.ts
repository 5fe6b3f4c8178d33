// The cluster phase's pure parts (phase-cluster.ts runs processes; bench/METHOD.md says what
// it measures): /proc stat parsing and process trees, --cluster-nodes, the fan-out overhead
// and the answers checked against one daemon, CPU per request, how connections are dealt,
// when a cluster is ready; then a run of the phase alone as a result file: valid against the
// schema, its report, and `trawl bench compare` with and without the core phases.

import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { clusterGap, type ClusterStatusView, type ReadyView } from '../../bench/suite/cluster-ready.ts';
import {
  clusterKey,
  clusterName,
  clusterQueries,
  cpuPerRequest,
  DEFAULT_CLUSTERS,
  medianP50,
  mismatches,
  overheadBaseline,
  overheads,
  parseClusters,
  replicationFor,
  sameNodesOverheads,
} from '../../bench/suite/cluster-figures.ts';
import { compareResults } from '../../bench/suite/compare.ts';
import { answerSignature, type QueryLatency } from '../../bench/suite/mix-latency.ts';
import { dealConnections, rotate } from '../../bench/suite/mix-load.ts';
import { summarize } from '../../bench/suite/percentiles.ts';
import { parseProcStat, treeTicks, treeTicksOf, type ProcStat } from '../../bench/suite/proc-tree.ts';
import { readResult, readResultFile, resultErrors } from '../../bench/suite/result-file.ts';
import { hasCorePhases, RESULT_FORMAT, type AnyBenchResult, type ClusterConfiguration, type ClusterPhase } from '../../bench/suite/result.ts';
import { runText } from '../../bench/suite/run-text.ts';
import { syntheticResult } from '../helpers/bench-fixture.ts';
import { tempDir } from '../helpers/corpus.ts';

describe('/proc stat', () => {
  // proc(5): pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const line = (pid: number, comm: string, ppid: number, utime: number, stime: number, cutime = 0, cstime = 0) =>
    `${pid} (${comm}) S ${ppid} 1 1 0 -1 4194560 100 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 3 0 12345 1000 200\n`;
  const table: Array<{ text: string; want: ProcStat | null }> = [
    { text: line(42, 'node', 1, 150, 30), want: { pid: 42, ppid: 1, ticks: 180 } },
    { text: line(7, 'postgres: postgres trawl 127.0.0.1(35584) idle', 6, 3, 4), want: { pid: 7, ppid: 6, ticks: 7 } },
    { text: line(8, 'a) S 99 (b', 2, 10, 0), want: { pid: 8, ppid: 2, ticks: 10 } },
    // A postmaster whose backends exited: their time is in its cutime and cstime.
    { text: line(6, 'postgres', 1, 20, 5, 300, 40), want: { pid: 6, ppid: 1, ticks: 365 } },
    { text: '', want: null },
    { text: 'not a stat line', want: null },
    { text: '12 (truncated) S 1 1', want: null },
  ];
  for (const t of table) test(`parses ${JSON.stringify(t.text.slice(0, 40))}`, () => assert.deepEqual(parseProcStat(t.text), t.want));

  test('a process tree: the root and every descendant, nothing else', () => {
    const stats: ProcStat[] = [
      { pid: 1, ppid: 0, ticks: 1000 },
      { pid: 10, ppid: 1, ticks: 5 }, // the postmaster
      { pid: 11, ppid: 10, ticks: 7 }, // a backend
      { pid: 12, ppid: 10, ticks: 3 },
      { pid: 13, ppid: 12, ticks: 2 }, // a grandchild
      { pid: 20, ppid: 1, ticks: 99 }, // unrelated
    ];
    assert.equal(treeTicksOf(stats, 10), 17);
    assert.equal(treeTicksOf(stats, 13), 2);
    assert.equal(treeTicksOf(stats, 99), null);
  });

  test("a child's time stays in the tree once it exits and is waited for", { skip: process.platform !== 'linux' }, async (t) => {
    // The parent starts a child that keeps a core busy for 600 ms, waits for it, then idles.
    const script = `const { spawn } = require('node:child_process');
      spawn(process.execPath, ['-e', 'const e = Date.now() + 600; while (Date.now() < e);'], { stdio: 'ignore' })
        .on('exit', () => { process.stdout.write('done\\n'); setTimeout(() => {}, 10000); });`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    t.after(() => parent.kill());
    await new Promise((r) => setTimeout(r, 450));
    const during = treeTicks(parent.pid);
    await new Promise<void>((resolve) => parent.stdout.once('data', () => resolve()));
    const after = treeTicks(parent.pid);
    assert.ok(during !== null && after !== null);
    assert.ok(after >= during, `the tree counted ${during} ticks while the child ran and ${after} after it exited`);
  });
});

describe('--cluster-nodes', () => {
  const shapes = (...list: Array<[number, number]>) => list.map(([nodes, replicationFactor]) => ({ nodes, replicationFactor }));
  const good: Array<[string, ReturnType<typeof shapes>]> = [
    ['1,2,4', shapes([1, 1], [2, 2], [4, 2])],
    ['4', shapes([4, 2])],
    [' 1, 2 ', shapes([1, 1], [2, 2])],
    ['4,1', shapes([4, 2], [1, 1])],
    ['16', shapes([16, 2])],
    ['1,2,2/1,4', shapes([1, 1], [2, 2], [2, 1], [4, 2])],
    ['3/3,4/1', shapes([3, 3], [4, 1])],
    ['2/2,2/1', shapes([2, 2], [2, 1])],
  ];
  for (const [text, want] of good) test(`"${text}"`, () => assert.deepEqual(parseClusters(text), want));
  const bad: Array<[string, RegExp]> = [
    ['', /node counts from 1 to 16/],
    ['0', /node counts from 1 to 16/],
    ['17', /node counts from 1 to 16/],
    ['1,,2', /node counts from 1 to 16/],
    ['1.5', /node counts from 1 to 16/],
    ['two', /node counts from 1 to 16/],
    ['2/3', /replication \(1 to the count\)/],
    ['2/0', /replication \(1 to the count\)/],
    ['2/', /node counts from 1 to 16/],
    ['1,2,1', /names 1 twice/],
    ['2,2/2', /names 2\/2 twice/],
  ];
  for (const [text, want] of bad) test(`"${text}" is refused`, () => assert.throws(() => parseClusters(text), want));
  test('the defaults, the replication factor, names and keys', () => {
    assert.deepEqual(DEFAULT_CLUSTERS, shapes([1, 1], [2, 2], [2, 1], [4, 2], [4, 4]));
    assert.deepEqual([1, 2, 3, 4, 8].map(replicationFor), [1, 2, 2, 2, 2]);
    assert.deepEqual(DEFAULT_CLUSTERS.map(clusterName), ['1 node', '2 nodes', '2 nodes, replication 1', '4 nodes', '4 nodes, replication 4']);
    assert.deepEqual(DEFAULT_CLUSTERS.map(clusterKey), ['n1', 'n2', 'n2r1', 'n4', 'n4r4']);
  });
});

const latency = (name: string, samples: number[], answers: string[] = ['a']): QueryLatency => ({
  name,
  samplesMs: samples,
  latencyMs: summarize(samples),
  error: null,
  answers,
});
const failed = (name: string): QueryLatency => ({ name, samplesMs: [], latencyMs: null, error: 'POST /api/search answered 500', answers: [] });

describe('the fan-out overhead and the answers', () => {
  const plain = [latency('q1', [1, 1, 1]), latency('q2', [2, 2, 2]), latency('q3', [10, 10, 10]), latency('q4', [4, 4, 4])];

  test('per query p50 minus the baseline p50, and the median of those', () => {
    const cluster = [latency('q1', [1.5, 1.5, 1.5]), latency('q2', [2.2, 2.3, 2.4]), latency('q3', [9, 9, 9]), failed('q4')];
    const o = overheads(cluster, plain);
    assert.deepEqual(
      [...o.perQuery],
      [
        ['q1', 0.5],
        ['q2', 0.3],
        ['q3', -1],
      ],
    );
    assert.equal(o.medianMs, 0.3);
    const rows = clusterQueries(cluster, o.perQuery);
    assert.deepEqual(
      rows.map((r) => r.overheadMs),
      [0.5, 0.3, -1, null],
    );
    assert.equal(rows[3]!.error, 'POST /api/search answered 500');
    assert.equal(medianP50(cluster), 2.3);
    assert.equal(overheads([failed('q1')], plain).medianMs, null);
    assert.equal(medianP50([failed('q1')]), null);
  });

  test('against as many nodes that each hold every shard: for the spread clusters of a size the phase has a control of', () => {
    const at = (kind: 'plain' | 'cluster', nodes: number, replicationFactor: number | null, qs: QueryLatency[]) => ({
      kind,
      nodes,
      replicationFactor,
      queries: clusterQueries(qs, kind === 'plain' ? null : overheads(qs, plain).perQuery),
    });
    const control4 = [latency('q1', [2, 2, 2]), latency('q2', [3, 3, 3]), latency('q3', [11, 11, 11]), latency('q4', [5, 5, 5])];
    const spread4 = [latency('q1', [2.5, 2.5, 2.5]), latency('q2', [3.1, 3.1, 3.1]), latency('q3', [14, 14, 14]), failed('q4')];
    const got = sameNodesOverheads([
      at('plain', 1, null, plain),
      at('cluster', 2, 1, spread4), // against the 2-node control below
      at('cluster', 4, 2, spread4),
      at('cluster', 4, 3, control4),
      at('cluster', 4, 4, control4),
      at('cluster', 2, 2, plain),
    ]);
    // 4/2: q1 +0.5, q2 +0.1, q3 +3 (q4 failed on one side): median +0.5. 2/1 against 2/2: +1.5, +1.1, +4.
    // Replication 3 of 4 is spread too; the controls and the plain daemon have none.
    assert.deepEqual(got, [null, 1.5, 0.5, 0, null, null]);
    assert.deepEqual(sameNodesOverheads([at('cluster', 4, 2, spread4)]), [null], 'no control, no figure');
  });

  test("interleaved with the daemon: overheads against the paired requests, and the control's drift cancels", () => {
    const paired = (name: string, mine: number, theirs: number): QueryLatency => ({
      ...latency(name, [mine, mine, mine]),
      reference: { samplesMs: [theirs, theirs, theirs], latencyMs: summarize([theirs, theirs, theirs]) },
    });
    // The control ran in a slow window (its daemon too), the spread cluster in a fast one.
    const spread = [paired('q1', 2, 1), paired('q2', 3, 2.5), paired('q3', 12, 10)];
    const control = [paired('q1', 4, 3.5), paired('q2', 5, 4.8), paired('q3', 15, 14)];
    const against = overheadBaseline(spread, plain)!;
    assert.deepEqual(
      against.map((q) => q.latencyMs?.p50),
      [1, 2.5, 10],
      'the paired requests, not the earlier baseline',
    );
    assert.equal(overheadBaseline(plain, plain), plain, 'no reference: the baseline');
    assert.equal(overheadBaseline(plain, undefined), null);
    const row = (qs: QueryLatency[], replicationFactor: number) => ({
      kind: 'cluster' as const,
      nodes: 4,
      replicationFactor,
      queries: clusterQueries(qs, overheads(qs, overheadBaseline(qs, plain)!).perQuery),
    });
    const rows = [row(spread, 2), row(control, 4)];
    assert.deepEqual(
      rows[0]!.queries.map((q) => [q.overheadMs, q.referenceP50Ms]),
      [
        [1, 1],
        [0.5, 2.5],
        [2, 10],
      ],
    );
    // Per query (1 − 0.5), (0.5 − 0.2), (2 − 1): median 0.5; the p50s' difference would say −2.
    assert.deepEqual(sameNodesOverheads(rows), [0.5, null]);
  });

  test('answers through every node are checked against the baseline', () => {
    const cluster = [latency('q1', [1], ['a', 'a', 'b']), latency('q2', [1], ['a', 'a', 'a']), failed('q3'), latency('q9', [1], ['x'])];
    assert.deepEqual(mismatches(cluster, plain, ['n1', 'n2', 'n3']), ['q1 through n3: b; one daemon: a']);
  });

  test('an answer signature: files, match counts and exhaustiveness, not the total', () => {
    const file = (name: string, matches: number) => ({
      repository: 'corpus',
      fileName: { text: name },
      chunks: [{ matchRanges: Array.from({ length: matches }, () => ({})) }],
    });
    const res = (files: ReturnType<typeof file>[], exhaustive = true, total = 9) =>
      ({
        files,
        stats: { actualMatchCount: files.reduce((n, f) => n + f.chunks[0]!.matchRanges.length, 0), totalMatchCount: total },
        isSearchExhaustive: exhaustive,
      }) as unknown as Parameters<typeof answerSignature>[0];
    const one = answerSignature(res([file('a.c', 2), file('b.c', 1)]));
    assert.match(one, /^3 matches in 2 files \([0-9a-f]{12}\)$/);
    assert.equal(answerSignature(res([file('a.c', 2), file('b.c', 1)], true, 500)), one, 'the total match count is timing');
    assert.notEqual(answerSignature(res([file('b.c', 1), file('a.c', 2)])), one, 'the order counts');
    assert.notEqual(answerSignature(res([file('a.c', 1), file('b.c', 2)])), one, 'matches per file count');
    assert.match(answerSignature(res([file('a.c', 2), file('b.c', 1)], false)), /not exhaustive$/);
  });

  test('CPU per request', () => {
    assert.equal(cpuPerRequest([1000, 500], 3000), 0.5);
    assert.equal(cpuPerRequest([1000, null], 3000), null);
    assert.equal(cpuPerRequest([1000], 0), null);
    assert.equal(cpuPerRequest([], 10), null);
  });
});

describe('the load: connections dealt over the nodes', () => {
  test('round-robin over the nodes, the same starting points in the mix for every node count', () => {
    for (const nodes of [1, 2, 4]) {
      const deal = dealConnections(16, nodes, 50);
      assert.deepEqual(
        deal.map((d) => d.offset),
        dealConnections(16, 1, 50).map((d) => d.offset),
      );
      for (let n = 0; n < nodes; n++) assert.equal(deal.filter((d) => d.server === n).length, 16 / nodes);
    }
    assert.deepEqual(dealConnections(4, 2, 8), [
      { server: 0, offset: 0 },
      { server: 1, offset: 2 },
      { server: 0, offset: 4 },
      { server: 1, offset: 6 },
    ]);
  });
  test('rotate', () => {
    assert.deepEqual(rotate([1, 2, 3, 4], 1), [2, 3, 4, 1]);
    assert.deepEqual(rotate([1, 2, 3, 4], 5), [2, 3, 4, 1]);
    assert.deepEqual(rotate([1, 2, 3, 4], 0), [1, 2, 3, 4]);
  });
});

describe('when a cluster is ready', () => {
  const shard = (file: string, owners: string[], holders: string[], health = 'ok') => ({ shard: file, owners, holders, health });
  const status = (self: string, o: { live?: number; generation?: number; shards?: ReturnType<typeof shard>[] } = {}): ClusterStatusView => ({
    self,
    nodes: ['n1', 'n2', 'n3'].map((id, i) => ({ id, live: i < (o.live ?? 3), shards: 1 })),
    repositories:
      o.shards === undefined || o.shards.length > 0
        ? [
            {
              repositoryId: 1,
              generation: o.generation ?? 4,
              builtBy: 'n1',
              shards: o.shards ?? [shard('a', ['n2', 'n3'], ['n3', 'n2']), shard('b', ['n1', 'n3'], ['n1', 'n3'])],
            },
          ]
        : [],
    summary: { shards: 2, ok: 2 },
  });
  const ready = (o: Partial<{ status: number; total: number; searchable: number; symbolsPending: number }> = {}): ReadyView => ({
    status: o.status ?? 200,
    body: {
      status: (o.status ?? 200) === 200 ? 'ready' : 'starting',
      repositories: { total: o.total ?? 1, searchable: o.searchable ?? 1, symbolsPending: o.symbolsPending ?? 0 },
    },
  });
  const all = (f: (self: string) => { cluster: ClusterStatusView; ready: ReadyView }) => ['n1', 'n2', 'n3'].map(f);
  const table: Array<{ name: string; states: Array<{ cluster: ClusterStatusView; ready: ReadyView }>; want: RegExp | null }> = [
    { name: 'ready', states: all((s) => ({ cluster: status(s), ready: ready() })), want: null },
    {
      name: 'a node not seen live',
      states: all((s) => ({ cluster: status(s, { live: s === 'n2' ? 2 : 3 }), ready: ready() })),
      want: /n2 sees 2 of 3 nodes live/,
    },
    { name: 'nothing published', states: all((s) => ({ cluster: status(s, { shards: [] }), ready: ready() })), want: /no index published yet/ },
    {
      name: 'the nodes disagree on the generation',
      states: all((s) => ({ cluster: status(s, { generation: s === 'n3' ? 5 : 4 }), ready: ready() })),
      want: /different published indexes/,
    },
    {
      name: '"ok" but an owner has not copied its shard yet (the builder and one owner hold it)',
      states: all((s) => ({ cluster: status(s, { shards: [shard('a', ['n2', 'n3'], ['n1', 'n2'])] }), ready: ready() })),
      want: /1 of 1 shards not yet on every node placed for them/,
    },
    {
      name: 'every owner holds its shards, but the builder has not dropped one placed elsewhere yet',
      states: all((s) => ({
        cluster: status(s, { shards: [shard('a', ['n2', 'n3'], ['n1', 'n2', 'n3']), shard('b', ['n1', 'n3'], ['n1', 'n3'])] }),
        ready: ready(),
      })),
      want: /1 of 2 shards still held by a node not placed for them/,
    },
    {
      name: 'under-replicated',
      states: all((s) => ({ cluster: status(s, { shards: [shard('a', ['n2', 'n3'], ['n2', 'n3'], 'under-replicated')] }), ready: ready() })),
      want: /not yet on every node/,
    },
    { name: 'a node not ready', states: all((s) => ({ cluster: status(s), ready: ready({ status: s === 'n1' ? 503 : 200 }) })), want: /n1 is not ready/ },
    { name: 'symbols pending', states: all((s) => ({ cluster: status(s), ready: ready({ symbolsPending: 1 }) })), want: /symbols pending/ },
    { name: 'a repository not searchable', states: all((s) => ({ cluster: status(s), ready: ready({ total: 2 }) })), want: /1 of 2 repositories searchable/ },
    { name: 'a node missing', states: all((s) => ({ cluster: status(s), ready: ready() })).slice(0, 2), want: /2 of 3 nodes answered/ },
  ];
  for (const t of table) {
    test(t.name, () => {
      const got = clusterGap(t.states, 3);
      if (t.want === null) assert.equal(got, null);
      else assert.match(got ?? 'null', t.want);
    });
  }
});

/** A cluster phase as a run of it would write, figures scaled by `k` (throughput divided). */
function clusterPhase(k = 1): ClusterPhase {
  const queries = ['q1', 'q2', 'q3'];
  const config = (kind: 'plain' | 'cluster', nodes: number, replication = replicationFor(nodes)): ClusterConfiguration => {
    const cost = kind === 'plain' ? 1 : 1 + nodes / 10;
    const q = queries.map((name, i) =>
      latency(
        name,
        Array.from({ length: 20 }, (_, j) => (i + 1) * cost * k * (1 + j / 100)),
      ),
    );
    return {
      kind,
      nodes,
      replicationFactor: kind === 'plain' ? null : replication,
      readySeconds: 12.5,
      shards: 10,
      indexBytes: 1.5e9,
      perNode: Array.from({ length: nodes }, (_, i) => ({
        id: kind === 'plain' ? 'plain' : `n${i + 1}`,
        shards: 10,
        indexBytes: 1.5e9,
        dataDirBytes: 1.8e9,
        idleRssBytes: 5e8,
        idleAnonBytes: 2e8,
        idleFileBytes: 3e8,
        loadRssPeakBytes: 9e8,
        loadAnonPeakBytes: 3e8,
        loadCpuMs: 9000,
        loadRequests: 1000,
      })),
      queries: clusterQueries(q, kind === 'plain' ? null : new Map(queries.map((n) => [n, 0.2 * nodes]))),
      medianP50Ms: medianP50(q),
      overheadMs: kind === 'plain' ? null : 0.2 * nodes,
      oneClient: { cpuMsPerRequest: 0.5 + nodes / 10, waitMsPerRequest: nodes / 20 },
      load: {
        seconds: 10,
        requests: 20_000,
        requestsPerSecond: 2000 / cost / k,
        perSecondSamples: Array.from({ length: 10 }, (_, j) => Math.round((2000 + j) / cost / k)),
        latencyMs: summarize([1, 2, 3]),
        non2xx: 0,
        errors: 0,
        timeouts: 0,
        cpuMsPerRequest: 0.9 * cost * k,
        cpuMsPerRequestSamples: Array.from({ length: 10 }, (_, j) => 0.9 * cost * k * (1 + j / 1000)),
        supportCpuMsPerRequest: kind === 'plain' ? null : 0.004,
        loadGeneratorCores: 0.3,
        foreignCores: 0.01,
      },
      mismatches: [],
    };
  };
  return {
    nodeCounts: [1, 2, 2, 4, 4],
    repositorySeconds: 3.2,
    workersPerNode: 1,
    iterations: 20,
    warmup: { runs: 2, ms: 20 },
    warmSeconds: 15,
    connections: 16,
    seconds: 10,
    configurations: withSameNodes([
      config('plain', 1),
      config('cluster', 1),
      config('cluster', 2),
      config('cluster', 2, 1),
      config('cluster', 4),
      config('cluster', 4, 4),
    ]),
    foreignCores: 0.01,
  };
}

/** The configurations with their overhead against as many nodes holding every shard, as the phase sets it. */
function withSameNodes(cs: ClusterConfiguration[]): ClusterConfiguration[] {
  const x = sameNodesOverheads(cs);
  return cs.map((c, i) => ({ ...c, sameNodesOverheadMs: x[i]! }));
}

/** A run of the cluster phase alone, from a full synthetic run's identity. */
function clusterOnly(k = 1): AnyBenchResult {
  const full = syntheticResult({ seed: 1, iterations: 20, responses: 50 });
  return {
    format: RESULT_FORMAT,
    startedAt: full.startedAt,
    finishedAt: full.finishedAt,
    options: { ...full.options, only: 'cluster', clusterNodes: [1, 2, 4] },
    environment: full.environment,
    corpus: full.corpus,
    notes: [],
    cluster: clusterPhase(k),
  };
}

describe('a result of the cluster phase alone', () => {
  const tmp = tempDir('bench-cluster');
  after(() => tmp.cleanup());

  test('is valid against the schema; without the cluster phase, or with a core phase, it is not', () => {
    const r = clusterOnly();
    assert.deepEqual(resultErrors(r), []);
    assert.equal(hasCorePhases(r), false);
    const { cluster: _c, ...withoutCluster } = r;
    assert.ok(resultErrors(withoutCluster).some((e) => /required property 'cluster'/.test(e)));
    const full = syntheticResult({ seed: 1, iterations: 20, responses: 50 });
    assert.ok(resultErrors({ ...r, search: full.search }).some((e) => /search boolean schema is false/.test(e)));
    // A full run without --only must still have its core phases; with the phase added it is valid.
    assert.ok(resultErrors({ ...r, options: full.options }).some((e) => /required property 'search'/.test(e)));
    assert.deepEqual(resultErrors({ ...full, options: { ...full.options, clusterNodes: [1, 2, 4] }, cluster: clusterPhase() }), []);
  });

  test('reads back as a result file; readResult, which wants the core phases, says why not', () => {
    const file = join(tmp.path, 'cluster-only.json');
    writeFileSync(file, JSON.stringify(clusterOnly()));
    assert.equal(readResultFile(file).cluster?.configurations.length, 6);
    assert.throws(() => readResult(file), /the cluster phase alone \(--only cluster\)/);
  });

  test('the report: one row per configuration, one per node, one per query', () => {
    const text = runText(clusterOnly());
    assert.match(text, /^### trawl .* the cluster phase alone$/m);
    assert.match(text, /from nothing, every server `--workers 1`; then took the load below for 15 s, untimed; one client ran the mix/);
    assert.doesNotMatch(text, /paired with one to the single daemon/, 'the synthetic run has no reference');
    const paired = clusterOnly();
    paired.cluster!.configurations[1]!.queries[0]!.referenceP50Ms = 1;
    assert.match(
      runText(paired),
      /the nodes taking turns; on each cluster every request paired with one to the single daemon, kept running beside it, the order alternating\); the load/,
    );
    assert.match(runText(paired), /p50 − one daemon's over the requests interleaved with them\)/);
    // A run from before the warming says nothing of it.
    const { warmSeconds: _w, ...cold } = clusterOnly().cluster!;
    assert.deepEqual(resultErrors({ ...clusterOnly(), cluster: cold }), []);
    assert.match(runText({ ...clusterOnly(), cluster: cold }), /from nothing, every server `--workers 1`; one client ran the mix/);
    assert.match(text, /^\| one daemon, no cluster section \| 1 \| — \| 2000 \| 0\.900 ms \| — \| .* \| \(baseline\) \| — \| 0 \| 12\.5 s \|$/m);
    // The synthetic 4/2 and 4/4 clusters cost the same: +0.000 ms against the control.
    assert.match(text, /^\| cluster of 4 nodes \| 4 \| 2 \| 1429 \| 1\.260 ms \| 0\.004 ms \| .* \| \+0\.800 ms \| \+0\.000 ms \| 0 \| 12\.5 s \|$/m);
    assert.match(text, /^\| cluster of 4 nodes, replication 4 \| 4 \| 4 \| 1429 \| .* \| \+0\.800 ms \| \(control\) \| 0 \| 12\.5 s \|$/m);
    // Two nodes at replication 2 are the control of two at replication 1; one node has none.
    assert.match(text, /^\| cluster of 2 nodes \| 2 \| 2 \| .* \| \(control\) \| 0 \| 12\.5 s \|$/m);
    assert.match(text, /^\| cluster of 2 nodes, replication 1 \| 2 \| 1 \| .* \| \+0\.000 ms \| 0 \| 12\.5 s \|$/m);
    assert.match(text, /^\| cluster of 1 node \| 1 \| 1 \| .* \| — \| 0 \| 12\.5 s \|$/m);
    assert.match(text, /^\| cluster of 4 nodes: n4 \| 10 of 10 \| 1\.50 GB \| 1\.80 GB \|/m);
    assert.match(text, /^\| cluster of 4 nodes \| 0\.900 ms \| 0\.200 ms \|$/m);
    // A run from before the scheduler's figures has no such table; a configuration without them a dash.
    const some = clusterOnly();
    some.cluster!.configurations[0]!.oneClient = null;
    delete some.cluster!.configurations[1]!.oneClient;
    assert.deepEqual(resultErrors(some), []);
    assert.match(runText(some), /^\| one daemon, no cluster section \| — \| — \|$/m);
    assert.match(runText(some), /^\| cluster of 1 node \| — \| — \|$/m);
    const none = clusterOnly();
    for (const c of none.cluster!.configurations) delete c.oneClient;
    assert.deepEqual(resultErrors(none), []);
    assert.doesNotMatch(runText(none), /wait for a core per request/);
    assert.match(text, /^\| q2 \| 2\.\d+ ms \| .* \| .* \| .* \|$/m);
    // A full run's report carries the same tables after its own.
    const full = { ...syntheticResult({ seed: 1, iterations: 20, responses: 50 }), cluster: clusterPhase() };
    assert.match(runText(full), /^\| cluster of 2 nodes \| 2 \| 2 \|/m);
    assert.match(runText(full), /^\| cluster of 2 nodes, replication 1 \| 2 \| 1 \|/m);
    assert.match(text, /^\| query \(p50, one client\) \| one daemon \| 1 node \| 2 nodes \| 2 nodes, replication 1 \| 4 nodes \| 4 nodes, replication 4 \|$/m);
  });

  test('compare: two runs of the phase alone are judged on the cluster figures only', () => {
    const same = compareResults(clusterOnly(), clusterOnly());
    assert.deepEqual([...new Set(same.metrics.map((m) => m.group))], ['cluster']);
    assert.deepEqual(
      same.metrics.map((m) => m.id),
      ['plain', 'n1', 'n2', 'n2r1', 'n4', 'n4r4'].flatMap((k) => [`cluster/${k}/throughput`, `cluster/${k}/cpu`, `cluster/${k}/p50`]),
    );
    assert.equal(same.regressions, 0);
    const slower = compareResults(clusterOnly(), clusterOnly(1.5));
    for (const id of ['cluster/n2/throughput', 'cluster/n2/cpu', 'cluster/plain/cpu'])
      assert.equal(slower.metrics.find((m) => m.id === id)!.verdict, 'regression', id);
    assert.equal(slower.exitStatus, 1);
  });

  test('compare: against a full run, the figures only one side has are not judged', () => {
    const full = syntheticResult({ seed: 1, iterations: 20, responses: 50 });
    const report = compareResults(full, clusterOnly());
    assert.ok(report.metrics.some((m) => m.group === 'search'));
    for (const m of report.metrics) assert.equal(m.verdict, 'not judged', m.id);
    assert.equal(report.exitStatus, 0);
    // A full run with the phase against one without: the phase's figures are not judged, the rest as always.
    const withPhase = { ...full, cluster: clusterPhase() };
    const other = compareResults(full, withPhase);
    assert.ok(other.metrics.filter((m) => m.group === 'cluster').every((m) => m.verdict === 'not judged'));
    assert.equal(other.metrics.filter((m) => m.group === 'search').length, full.search.queries.length);
  });
});
