// The cluster phase's tables in the Markdown report (run-text.ts): one row per
// configuration (throughput, CPU per request, median latency, the fan-out's overhead against
// one daemon and against as many nodes that each hold every shard), one
// per node (what it held and what it used: the figures the sizing rules of
// docs/deployment.md come from), and each query's p50 per configuration.

import { formatBytes, formatMs } from '../../daemon/cli/format.ts';
import { clusterName } from './cluster-figures.ts';
import type { ClusterConfiguration, ClusterPhase } from './result.ts';

const name = (c: ClusterConfiguration) =>
  c.kind === 'plain' ? 'one daemon, no cluster section' : `cluster of ${clusterName({ nodes: c.nodes, replicationFactor: c.replicationFactor! })}`;
const ms3 = (x: number | null) => (x === null ? '—' : `${x.toFixed(3)} ms`);
const signedMs = (x: number | null) => (x === null ? '—' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)} ms`);
const bytes = (n: number | null) => (n === null ? '—' : formatBytes(n));
const cell = (s: string) => s.replace(/\|/g, '\\|');

export function clusterText(p: ClusterPhase): string[] {
  const lines: string[] = [];
  const queries = p.configurations[0]?.queries.length ?? 0;
  // Runs since the plain daemon stayed up beside each cluster pair their requests with its.
  const interleaved = p.configurations.some((c) => c.queries.some((q) => q.referenceP50Ms !== undefined));
  lines.push(
    '',
    `Cluster phase: each configuration synced the corpus as one git repository from nothing, every server \`--workers ${p.workersPerNode}\`; ` +
      (p.warmSeconds === undefined ? '' : `then took the load below for ${p.warmSeconds} s, untimed; `) +
      `one client ran the mix (${queries} queries, ${p.iterations} timed requests each after ≥ ${p.warmup.runs} and ≥ ${p.warmup.ms} ms untimed, the nodes taking turns` +
      (interleaved ? `; on each cluster every request paired with one to the single daemon, kept running beside it, the order alternating` : '') +
      '); ' +
      `the load: ${p.connections} connections dealt round-robin over the nodes, each looping over the mix, ${p.seconds} s. ` +
      `CPU per request: the nodes' user + system time over the requests completed. Other processes kept up to ${p.foreignCores === null ? '—' : p.foreignCores.toFixed(2)} cores busy.`,
    '',
    `| configuration | nodes | replication | req/s | CPU ms/request (nodes) | PostgreSQL + Redis ms/request | median p50, one client | fan-out overhead (median over queries of p50 − one daemon's${interleaved ? ' over the requests interleaved with them' : ''}) | against as many nodes each holding every shard | non-2xx, errors | ready after |`,
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  // A cluster whose nodes each hold every shard is the control of the spread ones of its size.
  const isControl = (c: ClusterConfiguration) =>
    c.kind === 'cluster' &&
    c.replicationFactor === c.nodes &&
    p.configurations.some((o) => o.nodes === c.nodes && o.kind === 'cluster' && o.replicationFactor !== o.nodes);
  for (const c of p.configurations) {
    const l = c.load;
    const same = isControl(c) ? '(control)' : c.sameNodesOverheadMs == null ? '—' : signedMs(c.sameNodesOverheadMs);
    lines.push(
      `| ${name(c)} | ${c.nodes} | ${c.replicationFactor ?? '—'} | ${Math.round(l.requestsPerSecond)} | ${ms3(l.cpuMsPerRequest)} | ${ms3(l.supportCpuMsPerRequest)} | ` +
        `${formatMs(c.medianP50Ms)} | ${c.kind === 'plain' ? '(baseline)' : signedMs(c.overheadMs)} | ${same} | ${l.non2xx + l.errors + l.timeouts} | ${c.readySeconds.toFixed(1)} s |`,
    );
  }
  if (p.configurations.some((c) => c.oneClient)) {
    lines.push(
      '',
      "| configuration (one client, the mix) | the nodes' CPU per request | their threads' wait for a core per request |",
      '|---|--:|--:|',
      ...p.configurations.map((c) => `| ${name(c)} | ${ms3(c.oneClient?.cpuMsPerRequest ?? null)} | ${ms3(c.oneClient?.waitMsPerRequest ?? null)} |`),
    );
  }
  lines.push(
    '',
    '| node | shards held | its index | its data dir | RSS idle (anon; file) | RSS peak under load (anon) | CPU under load | requests it took |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const c of p.configurations) {
    for (const n of c.perNode) {
      lines.push(
        `| ${name(c)}: ${n.id} | ${n.shards} of ${c.shards} | ${bytes(n.indexBytes)} | ${bytes(n.dataDirBytes)} | ${bytes(n.idleRssBytes)} (${bytes(n.idleAnonBytes)}; ${bytes(n.idleFileBytes)}) | ` +
          `${bytes(n.loadRssPeakBytes)} (${bytes(n.loadAnonPeakBytes)}) | ${n.loadCpuMs === null ? '—' : `${(n.loadCpuMs / 1000).toFixed(2)} s`} | ${n.loadRequests.toLocaleString('en-US')} |`,
      );
    }
  }
  const clusters = p.configurations.filter((c) => c.kind === 'cluster');
  const plain = p.configurations.find((c) => c.kind === 'plain');
  if (plain) {
    lines.push(
      '',
      `| query (p50, one client) | one daemon | ${clusters.map((c) => clusterName({ nodes: c.nodes, replicationFactor: c.replicationFactor! })).join(' | ')} |`,
      `|---|--:|${clusters.map(() => '--:|').join('')}`,
    );
    for (const q of plain.queries) {
      const at = (c: ClusterConfiguration) => {
        const x = c.queries.find((y) => y.name === q.name);
        return !x ? '' : x.latencyMs ? `${formatMs(x.latencyMs.p50)} (${signedMs(x.overheadMs)})` : 'error';
      };
      lines.push(`| ${cell(q.name)} | ${q.latencyMs ? formatMs(q.latencyMs.p50) : 'error'} | ${clusters.map(at).join(' | ')} |`);
    }
  }
  const wrong = p.configurations.flatMap((c) => c.mismatches.map((m) => `${name(c)}: ${m}`));
  if (wrong.length > 0) {
    lines.push('', `Answers that differ from one daemon's (${wrong.length}):`);
    for (const w of wrong.slice(0, 10)) lines.push(`- ${cell(w)}`);
  }
  return lines;
}
