// A load run of a query mix spread over several servers, as a load balancer in front of a
// cluster would spread it (the cluster phase, phase-cluster.ts): `connections` keep-alive
// connections, connection c to server c mod N, each looping over the whole mix from its own
// starting point (offset c × mix / connections), so that at any moment the connections ask
// different queries. The same connections with the same sequences whatever N is: only the
// server each connection reaches changes, which is what makes runs over 1, 2 and 4 nodes
// the same load. One autocannon instance per connection (an instance's connections would all
// start at the same query).
//
// CPU time: every process in `accounted` is read from /proc before and after (load.ts
// marks; a process group's ticks through proc-tree.ts), and the nodes' sum once a second,
// so that CPU per request has a sample per second for `trawl bench compare` to judge.

import { cpuMark, TICKS_PER_SECOND } from './machine.ts';
import { cpuMsBetween, load, log, type Load, type LoadRequest, type Mark, type Server } from './load.ts';

/** A process (or a group of them) whose CPU time the run accounts for. */
export interface Accounted {
  name: string;
  /** `node`: a trawl server answering the load (its CPU is the figure per request); `support`: PostgreSQL, Redis. */
  role: 'node' | 'support';
  /** utime + stime now, in clock ticks; null when unreadable. */
  ticks(): number | null;
}

export interface MixLoadOptions {
  /** The servers, in the order connections are dealt to them. */
  targets: Server[];
  mix: LoadRequest[];
  connections: number;
  seconds: number;
  accounted: Accounted[];
  /** Names the run in the log. */
  label: string;
}

export interface MixLoad {
  /** Wall seconds from the first connection's start to the last one's end. */
  seconds: number;
  /** Responses completed (any status), and of them 2xx. */
  requests: number;
  ok: number;
  /** Requests written (completed ones and those cut off at the end). */
  sent: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** 2xx responses completed in each whole second (a last partial second dropped). */
  perSecond: number[];
  /** Per whole second: the nodes' CPU ms over the 2xx responses of that second. */
  cpuMsPerRequestSamples: number[];
  /** Every 2xx response's time (ms), in order of arrival. */
  latenciesMs: Float64Array;
  /** CPU ms of each accounted process over the run; null when unreadable. */
  cpuMs: Record<string, number | null>;
  /** 2xx responses per target. */
  okPerTarget: number[];
  load: Load;
  firstError: string | null;
}

function markOf(accounted: Accounted[]): Mark {
  return { cpu: cpuMark(), servers: accounted.map((a) => ({ name: a.name, ticks: a.ticks() })) };
}

/** The mix rotated to start at `offset`. */
export function rotate<T>(mix: readonly T[], offset: number): T[] {
  const k = ((offset % mix.length) + mix.length) % mix.length;
  return [...mix.slice(k), ...mix.slice(0, k)];
}

/** Which server and which starting point in the mix each connection gets. */
export function dealConnections(connections: number, servers: number, mixLength: number): Array<{ server: number; offset: number }> {
  return Array.from({ length: connections }, (_, c) => ({ server: c % servers, offset: Math.floor((c * mixLength) / connections) }));
}

export async function mixLoad(o: MixLoadOptions): Promise<MixLoad> {
  if (o.mix.length === 0) throw new Error('mixLoad: an empty mix');
  const { default: autocannon } = await import('autocannon');
  const latencies: number[] = [];
  const perSecond: number[] = [];
  const okPerTarget = o.targets.map(() => 0);
  let firstError: string | null = null;
  const nodes = o.accounted.filter((a) => a.role === 'node');
  const nodeTicks = () => {
    let sum = 0;
    for (const a of nodes) {
      const t = a.ticks();
      if (t === null) return null;
      sum += t;
    }
    return sum;
  };
  const from = markOf(o.accounted);
  const started = performance.now();
  // The nodes' ticks and the 2xx count at each whole second of the run.
  const ticks: Array<number | null> = [nodeTicks()];
  const oks: number[] = [0];
  const timer = setInterval(() => {
    ticks.push(nodeTicks());
    oks.push(latencies.length);
  }, 1000);
  const deals = dealConnections(o.connections, o.targets.length, o.mix.length);
  const instances = deals.map(({ server, offset }, c) => {
    const target = o.targets[server]!;
    const instance = autocannon({
      url: target.url,
      connections: 1,
      duration: o.seconds,
      title: `${o.label} connection ${c}`,
      requests: rotate(o.mix, offset).map((r) => ({
        method: r.method,
        path: r.path,
        headers: { ...(r.body === undefined ? {} : { 'content-type': 'application/json' }), ...r.headers },
        ...(r.body === undefined ? {} : { body: r.body }),
      })),
    });
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      if (statusCode < 200 || statusCode >= 300) return;
      latencies.push(ms);
      okPerTarget[server]!++;
      const second = Math.floor((performance.now() - started) / 1000);
      while (perSecond.length <= second) perSecond.push(0);
      perSecond[second]!++;
    });
    instance.on('reqError', (err) => {
      firstError ??= err.message;
    });
    return instance;
  });
  let results: Awaited<(typeof instances)[number]>[];
  try {
    results = await Promise.all(instances.map((i) => Promise.resolve(i)));
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - started) / 1000;
  const to = markOf(o.accounted);
  for (const t of o.targets) {
    if (t.child.exitCode !== null || t.child.signalCode !== null)
      throw new Error(`${t.name} exited during the load run (${t.child.exitCode ?? t.child.signalCode}); stderr:\n${t.stderr()}`);
  }
  const sum = (pick: (r: (typeof results)[number]) => number) => results.reduce((s, r) => s + pick(r), 0);
  const cpuMs: Record<string, number | null> = {};
  for (const a of o.accounted) cpuMs[a.name] = cpuMsBetween(from, to, a.name);
  const cpuMsPerRequestSamples: number[] = [];
  for (let i = 1; i < ticks.length; i++) {
    const [a, b] = [ticks[i - 1], ticks[i]];
    const n = oks[i]! - oks[i - 1]!;
    if (a != null && b != null && n > 0) cpuMsPerRequestSamples.push(Math.round((((b - a) / TICKS_PER_SECOND) * 1000 * 1000) / n) / 1000);
  }
  const wholeSeconds = Math.floor(seconds);
  while (perSecond.length < wholeSeconds) perSecond.push(0);
  const run: MixLoad = {
    seconds: Math.round(seconds * 1000) / 1000,
    requests: sum((r) => r.requests.total),
    ok: latencies.length,
    sent: sum((r) => r.requests.sent),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    perSecond: perSecond.slice(0, wholeSeconds),
    cpuMsPerRequestSamples,
    latenciesMs: Float64Array.from(latencies),
    cpuMs,
    okPerTarget,
    load: load(from, to),
    firstError,
  };
  const nodeCpu = nodes.reduce((s, a) => s + (cpuMs[a.name] ?? NaN), 0);
  log(
    `  ${o.label.padEnd(22)} ${Math.round(run.ok / seconds)
      .toString()
      .padStart(6)} req/s  nodes' CPU ${Number.isFinite(nodeCpu) && run.ok > 0 ? (nodeCpu / run.ok).toFixed(3) : '?'} ms/request  ` +
      `non-2xx ${run.non2xx}  errors ${run.errors}  timeouts ${run.timeouts}  load generator ${run.load.benchCores?.toFixed(2) ?? '?'} cores, other ${run.load.foreignCores?.toFixed(2) ?? '?'}` +
      (firstError ? `  (first error: ${firstError})` : ''),
  );
  return run;
}
