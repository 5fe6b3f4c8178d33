// `trawl cluster status` (docs/deployment.md): how a cluster stands, for an operator, read
// straight from the cluster's Redis with the configuration every node reads
// (cluster/observe.ts): it works with no node running (when every node is down is when
// it is wanted most) and asks for no owner's key (whoever has the file reaches Redis and
// the store anyway). It prints what GET /api/cluster answers, computed by the same code
// (cluster/status.ts), and says with its exit status whether every shard is ok, so that a
// script or a probe can act on it.

import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.ts';
import { observeCluster, type ObservedStatus } from '../cluster/observe.ts';
import { findConfigFile } from './config-file.ts';
import { escaped, escapeControl, formatAge, formatCount, formatTable, jsonText } from './format.ts';
import { UsageError } from './usage.ts';
import { defaultIo, none, type Io } from './users-command.ts';

export const CLUSTER_HELP = `usage: trawl cluster status [--config FILE] [--json]

How the cluster stands, read from its Redis with the configuration's cluster section: no
node needs to run and no key is asked. Prints the nodes (id, URL, state, whether live,
how long ago their last heartbeat was, the shards and repositories each holds), a
summary of the published shards' replica health, and each shard that is
under-replicated (fewer live holders than the replication factor, or than there are live
nodes) or unavailable (no live holder: searches leave it out).

Exit status: 0 when every shard is ok, 1 when some are under-replicated or unavailable
(or the cluster's Redis cannot be read), 2 for bad usage.

  --config FILE   the cluster's configuration (else $TRAWL_CONFIG, else ./trawl.json)
  --json          what GET /api/cluster answers, without "self" (no node answered)`;

/** How many shards of each kind are named one by one (--json names them all). */
const LISTED = 20;

export async function clusterCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  // --data-dir is every command's (docs/command-line.md); the cluster's state is not in a data dir.
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { config: { type: 'string' }, json: { type: 'boolean' }, 'data-dir': { type: 'string' }, verbose: { type: 'boolean' } },
  });
  if (sub !== 'status') throw new UsageError(`cluster takes status${sub ? `, not "${sub}"` : ''}`);
  none(positionals, 'cluster status');
  const path = findConfigFile(values.config);
  if (path === undefined) throw new UsageError("cluster status needs the cluster's configuration: --config FILE (or $TRAWL_CONFIG, or ./trawl.json)");
  const settings = loadConfig(path).cluster;
  if (!settings) throw new UsageError(`${path} has no cluster section: this installation runs alone`);
  const observed = await observeCluster(settings);
  const { summary } = observed.status;
  if (values.json) io.out(jsonText(observed.status, 2));
  else for (const line of report(observed)) io.out(line);
  return summary.ok === summary.shards ? 0 : 1;
}

/** The human report: a heading, the nodes' table, the health summary, the shards that are not ok. */
export function report({ status, readAt }: ObservedStatus): string[] {
  const live = status.nodes.filter((n) => n.live).length;
  const lines = [
    escaped`cluster "${status.name}": ${status.nodes.length} node${status.nodes.length === 1 ? '' : 's'}, ${live} live; replication factor ${status.replicationFactor}`,
  ];
  if (status.nodes.length > 0) {
    const head = ['NODE', 'URL', 'STATE', 'LIVE', 'HEARTBEAT', 'SHARDS', 'REPOSITORIES'];
    // What nodes say of themselves, and repository names: escaped.
    const rows = status.nodes.map((n) => [
      escapeControl(n.id),
      escapeControl(n.url),
      n.state,
      n.live ? 'yes' : 'no',
      `${formatAge(readAt - Date.parse(n.lastHeartbeat))} ago`,
      formatCount(n.shards),
      formatCount(n.repositories),
    ]);
    lines.push(...formatTable(head, rows));
  } else {
    lines.push('no node is in the cluster (none has joined, or every one left)');
  }
  const { shards, ok, underReplicated, unavailable } = status.summary;
  lines.push(
    `shards: ${formatCount(shards)} published, ${formatCount(ok)} ok, ${formatCount(underReplicated)} under-replicated, ${formatCount(unavailable)} unavailable`,
  );
  for (const health of ['under-replicated', 'unavailable'] as const) {
    const bad = status.repositories.flatMap((r) => r.shards.filter((s) => s.health === health).map((s) => ({ repo: r.repository, ...s })));
    for (const s of bad.slice(0, LISTED)) {
      const where = s.holders.length > 0 ? escaped`held by ${s.holders.join(', ')}` : 'held by no live node';
      lines.push(escaped`${health}: ${s.repo} ${s.shard}: ${where}; placed on ${s.owners.join(', ') || 'no node'}`);
    }
    if (bad.length > LISTED) lines.push(`${health}: ${formatCount(bad.length - LISTED)} more (--json lists them all)`);
  }
  return lines;
}
