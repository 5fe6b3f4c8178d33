// What the phases that load a daemon share (the HTTP, auth and web phases): servers in
// child processes (started, health-checked, stopped, never left behind), per-process CPU
// time from /proc, and one autocannon load run with exact latency percentiles and the
// target server's CPU time per request, so that every phase measures a request the same way.

import { spawn, type ChildProcess } from 'node:child_process';
import { cpuMark, foreignCores, processTicks, TICKS_PER_SECOND, type CpuMark } from './machine.ts';
import { formatMs } from '../../daemon/cli/format.ts';
import { quantileSorted } from './percentiles.ts';

export const log = (s: string) => process.stderr.write(`${s}\n`);
export const round2 = (x: number) => Math.round(x * 100) / 100;

// --- Child processes ---------------------------------------------------------------------

/** A child process whose CPU time is accounted for by mark() (a server, or redis-server). */
export interface Proc {
  name: string;
  child: ChildProcess;
}

export interface Server extends Proc {
  url: string;
  /** The last few KB of its stderr (for error messages). */
  stderr: () => string;
}

const children = new Set<ChildProcess>();

/** Registers a child so that it is stopped with the others on a signal or when this process exits. */
export function track(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}

// A benchmark that throws past its `finally` (or calls process.exit) must not leave servers
// behind holding ports and CPU: the next run would measure against them.
process.once('exit', () => {
  for (const c of children) c.kill('SIGTERM');
});

/**
 * On SIGINT / SIGTERM: stops every tracked child, runs `cleanup` (e.g. removes the work
 * dir) and exits with 130. Returns the function that removes the handlers.
 */
export function stopOnSignal(cleanup: () => void): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the servers`);
    for (const c of children) c.kill('SIGTERM');
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
}

/** The environment of the servers: no configuration file or port from the caller's shell. */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['TRAWL_CONFIG', 'TRAWL_PORT', 'TRAWL_LOG_LEVEL', 'TRAWL_DATA_DIR']) delete env[k];
  return env;
}

/** Starts a server and resolves with its URL, read from the `...: listening on URL` line on stderr. */
export function startServer(name: string, args: string[], cwd: string): Promise<Server> {
  const child = spawn(process.execPath, args, { cwd, env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  track(child);
  let tail = '';
  const stderr = () => tail;
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => fail(new Error(`${name}: no "listening on" line within 120 s; stderr:\n${tail}`)), 120_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('error', fail);
    const early = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(new Error(`${name} exited (${code ?? signal}) before listening; stderr:\n${tail}`));
    child.once('exit', early);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      tail = (tail + s).slice(-4096);
      const m = /listening on (http:\/\/\S+)/.exec(tail);
      if (m) {
        clearTimeout(timer);
        child.removeListener('exit', early);
        resolvePromise({ name, url: m[1]!.replace(/\/$/, ''), child, stderr });
      }
    });
  });
}

/** SIGTERM, then waits for the exit (SIGKILL after 20 s). */
export async function stopServer(s: Proc | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => s.child.once('exit', () => r()));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    log(`${s.name} did not stop within 20 s of SIGTERM: killing it`);
    s.child.kill('SIGKILL');
  }, 20_000);
  await exited;
  clearTimeout(timer);
}

export async function waitHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${url}/api/health`);
      await r.arrayBuffer();
      if (r.status === 200) return;
      last = `status ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`GET ${url}/api/health did not answer 200 within 120 s (${last})`);
}

// --- CPU accounting ----------------------------------------------------------------------

export interface Mark {
  cpu: CpuMark | null;
  servers: Array<{ name: string; ticks: number | null }>;
}

export function mark(servers: Proc[]): Mark {
  return markPids(servers.map((s) => ({ name: s.name, pid: s.child.pid })));
}

/** mark() of processes known by their ids (a process that did not start them: stream-child.ts). */
export function markPids(processes: Array<{ name: string; pid: number | undefined }>): Mark {
  return { cpu: cpuMark(), servers: processes.map((p) => ({ name: p.name, ticks: processTicks(p.pid) })) };
}

export interface Load {
  /** Cores other processes kept busy (this process and the servers not counted); near 0: clean figures. */
  foreignCores: number | null;
  /** Cores each server used. */
  serverCores: Record<string, number | null>;
  /** Cores this process used: the load generator (autocannon) or the fetch client. */
  benchCores: number | null;
}

export function load(from: Mark, to: Mark): Load {
  const seconds = from.cpu && to.cpu ? Number(to.cpu.at - from.cpu.at) / 1e9 : 0;
  const serverCores: Record<string, number | null> = {};
  let serversTotal = 0;
  for (const [i, s] of from.servers.entries()) {
    const a = s.ticks;
    const b = to.servers[i]?.ticks ?? null;
    const cores = a === null || b === null || seconds <= 0 ? null : (b - a) / TICKS_PER_SECOND / seconds;
    serverCores[s.name] = cores === null ? null : round2(cores);
    serversTotal += cores ?? 0;
  }
  const all = foreignCores(from.cpu, to.cpu);
  return {
    foreignCores: all === null ? null : round2(Math.max(0, all - serversTotal)),
    serverCores,
    benchCores: from.cpu && to.cpu && seconds > 0 ? round2((to.cpu.own - from.cpu.own) / TICKS_PER_SECOND / seconds) : null,
  };
}

/** CPU ms of the process `name` between two marks; null when unknown. */
export function cpuMsBetween(from: Mark, to: Mark, name: string): number | null {
  const i = from.servers.findIndex((s) => s.name === name);
  const a = from.servers[i]?.ticks ?? null;
  const b = to.servers[i]?.ticks ?? null;
  return a === null || b === null ? null : ((b - a) / TICKS_PER_SECOND) * 1000;
}

// --- Load runs (autocannon) --------------------------------------------------------------

/** Response times in ms, appended cheaply (a run can hold a million). */
class Samples {
  private data = new Float64Array(1 << 16);
  length = 0;

  push(x: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = x;
  }

  /** In the order pushed. */
  values(): Float64Array {
    return this.data.slice(0, this.length);
  }

  sorted(): Float64Array {
    return this.values().sort();
  }
}

/** One request, sent over and over by autocannon. */
export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  /** A JSON body (sent with Content-Type: application/json); none for a GET. */
  body?: string;
  /** More request headers (credentials). */
  headers?: Record<string, string>;
}

export interface LoadRun {
  target: string;
  /** 0: the warm-up run (not in the medians). */
  round: number;
  seconds: number;
  /** autocannon's requests.average: completed requests per one-second sample, averaged. */
  requestsPerSecond: number;
  requests: number;
  /** Over every 2xx response, from autocannon's per-response time (fractional ms). */
  latencyMs: { p50: number | null; p90: number | null; p99: number | null; p999: number | null; mean: number | null; max: number | null };
  /** autocannon's own histogram (whole ms: 1 ms resolution). */
  autocannonLatencyMs: { p50: number; p90: number; p97_5: number; p99: number; average: number; max: number };
  /** Response bytes, headers included, per completed request. */
  bytesPerResponse: number | null;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** The target server's CPU time per completed request (ms). */
  serverCpuMsPerRequest: number | null;
  load: Load;
}

/** A load run and what a caller may need beyond it. */
export interface LoadRunDetail {
  run: LoadRun;
  /** Requests autocannon wrote (completed ones and those cut off at the end). */
  sent: number;
  /** The marks around the run, for the CPU time of other processes (cpuMsBetween). */
  from: Mark;
  to: Mark;
  /** Every 2xx response's time (ms), in order of arrival. */
  latenciesMs: Float64Array;
  /** 2xx responses completed in each whole second of the run (a last partial second is dropped). */
  perSecond: number[];
}

/** How one load run goes: its round, length and connections. */
export interface LoadRunShape {
  /** 0: a warm-up; 1 and up: a measured round. */
  round: number;
  /** Seconds. */
  duration: number;
  connections: number;
  /** Names the run in the log (default: the server's name). */
  label?: string;
}

/**
 * `duration` seconds of autocannon against `server` (in this process, keep-alive, no
 * pipelining). `servers`: every process whose CPU is accounted for (the target among them).
 */
export async function loadRunDetail(
  server: Server,
  servers: Proc[],
  request: LoadRequest,
  { round, duration, connections, label }: LoadRunShape,
): Promise<LoadRunDetail> {
  const samples = new Samples();
  const perSecond: number[] = [];
  let errorMessage: string | undefined;
  // Loaded when first needed: a process that only streams (stream-child.ts) goes without
  // it (loaded, it doubled a fetch client's CPU per stream: stream-child.ts).
  const { default: autocannon } = await import('autocannon');
  const from = mark(servers);
  const headers = { ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers };
  const instance = autocannon({
    url: `${server.url}${request.path}`,
    method: request.method,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(request.body === undefined ? {} : { body: request.body }),
    connections,
    duration,
    title: `${label ?? server.name} round ${round}`,
  });
  const started = performance.now();
  instance.on('response', (_client, statusCode, _bytes, ms) => {
    if (statusCode < 200 || statusCode >= 300) return;
    samples.push(ms);
    const second = Math.floor((performance.now() - started) / 1000);
    while (perSecond.length <= second) perSecond.push(0);
    perSecond[second]!++;
  });
  instance.on('reqError', (err) => {
    errorMessage ??= err.message;
  });
  const r = await instance;
  const to = mark(servers);
  if (server.child.exitCode !== null || server.child.signalCode !== null) {
    throw new Error(`${server.name} exited during the load run (${server.child.exitCode ?? server.child.signalCode}); stderr:\n${server.stderr()}`);
  }
  const l = load(from, to);
  const sorted = samples.sorted();
  let sum = 0;
  for (const x of sorted) sum += x;
  const q = (p: number) => {
    return sorted.length === 0 ? null : Math.round(quantileSorted(sorted, p) * 1000) / 1000;
  };
  const cpuMs = cpuMsBetween(from, to, server.name);
  const requests = r.requests.total;
  const run: LoadRun = {
    target: server.name,
    round,
    seconds: r.duration,
    requestsPerSecond: r.requests.average,
    requests,
    latencyMs: {
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      p999: q(0.999),
      mean: sorted.length ? Math.round((sum / sorted.length) * 1000) / 1000 : null,
      max: q(1),
    },
    autocannonLatencyMs: { p50: r.latency.p50, p90: r.latency.p90, p97_5: r.latency.p97_5, p99: r.latency.p99, average: r.latency.average, max: r.latency.max },
    bytesPerResponse: requests > 0 ? Math.round(r.throughput.total / requests) : null,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])),
    serverCpuMsPerRequest: cpuMs === null || requests === 0 ? null : Math.round((cpuMs / requests) * 1e3) / 1e3,
    load: l,
  };
  log(
    `  ${round === 0 ? 'warm-up' : `round ${round}`} ${(label ?? server.name).padEnd(5)} ${Math.round(run.requestsPerSecond).toString().padStart(7)} req/s  ` +
      `p50 ${formatMs(run.latencyMs.p50)}  p99 ${formatMs(run.latencyMs.p99)}  non-2xx ${run.non2xx}  errors ${run.errors}  timeouts ${run.timeouts}  ` +
      `server ${l.serverCores[server.name]?.toFixed(2) ?? '?'} cores, autocannon ${l.benchCores?.toFixed(2) ?? '?'}, other ${l.foreignCores?.toFixed(2) ?? '?'}` +
      (errorMessage ? `  (first error: ${errorMessage})` : ''),
  );
  const wholeSeconds = Math.floor((performance.now() - started) / 1000);
  while (perSecond.length < wholeSeconds) perSecond.push(0); // seconds without a response count too
  return { run, sent: r.requests.sent, from, to, latenciesMs: samples.values(), perSecond: perSecond.slice(0, wholeSeconds) };
}
