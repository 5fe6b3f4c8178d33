// What the HTTP layer itself costs a request (`trawl bench run`'s HTTP phase): the daemon's CPU time per
// request, from /proc/PID/stat over an autocannon run, for requests whose own work is next
// to nothing, so that what is measured is routing, authentication, rate-limit counting,
// validation, JSON writing and logging:
//   GET /api/version            no authentication, no validation: the floor of a request;
//   POST /api/search (no hit)   authentication (anonymous), validation of a JSON body,
//                               the search gate and a search that finds nothing.
// Measured out of process, on the real server, rather than with an in-process
// microbenchmark of the request path: the cost that matters includes uWS's parsing and
// writing and the garbage a request leaves, which a loop around the handler would miss.
// CPU per request, not latency: on a shared 2-core machine the CPU a request costs is the
// figure that stays put when other processes take turns.

import { cpuMsBetween, loadRunDetail, type LoadRequest, type Server } from './load.ts';
import { summarize } from './percentiles.ts';
import type { HttpOverhead } from './result.ts';

/** A query no corpus holds (its trigrams are unlikely in any source tree): the search finds nothing. */
export const NO_HIT_QUERY = 'qxzjvqk_trawl_no_hit_zqxj';

export interface OverheadKind {
  name: HttpOverhead['name'];
  request: LoadRequest;
}

/** The cheap requests of the HTTP phase, anonymous. */
export const OVERHEAD_KINDS: OverheadKind[] = [
  { name: 'version', request: { method: 'GET', path: '/api/version' } },
  { name: 'noHitSearch', request: { method: 'POST', path: '/api/search', body: JSON.stringify({ query: NO_HIT_QUERY, matches: 100 }) } },
];

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * `rounds` alternations of the kinds (`seconds` each, after a one-second warm-up of each),
 * pooled per kind. The no-hit search must answer 200 with no file, or this throws: a
 * figure for a request that failed or found something would measure something else.
 */
export async function overheadRuns(server: Server, kinds: OverheadKind[], seconds: number, connections: number, rounds: number): Promise<HttpOverhead[]> {
  for (const k of kinds) {
    const r = await fetch(`${server.url}${k.request.path}`, {
      method: k.request.method,
      headers: { ...(k.request.body === undefined ? {} : { 'content-type': 'application/json' }), ...k.request.headers },
      ...(k.request.body === undefined ? {} : { body: k.request.body }),
    });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${k.request.method} ${k.request.path} (${k.name}) answered ${r.status}: ${text.slice(0, 300)}`);
    if (k.name === 'noHitSearch' && (JSON.parse(text) as { files: unknown[] }).files.length !== 0)
      throw new Error(`the no-hit query ${NO_HIT_QUERY} found files in this corpus`);
  }
  for (const k of kinds) await loadRunDetail(server, [server], k.request, { round: 0, duration: 1, connections, label: k.name });
  const pooled = kinds.map(() => ({
    cpuMs: 0 as number | null,
    ok: 0,
    seconds: 0,
    perSecond: [] as number[],
    samplesMs: [] as number[],
    cpuSamples: [] as number[],
    non2xx: 0,
    errors: 0,
  }));
  for (let round = 1; round <= rounds; round++) {
    for (const [i, k] of kinds.entries()) {
      const d = await loadRunDetail(server, [server], k.request, { round, duration: seconds, connections, label: k.name });
      const p = pooled[i]!;
      const ok = d.latenciesMs.length;
      const cpu = cpuMsBetween(d.from, d.to, server.name);
      p.cpuMs = p.cpuMs === null || cpu === null ? null : p.cpuMs + cpu;
      if (cpu !== null && ok > 0) p.cpuSamples.push(round3(cpu / ok));
      p.ok += ok;
      p.seconds += d.run.seconds;
      p.perSecond.push(...d.perSecond);
      for (const x of d.latenciesMs) p.samplesMs.push(x);
      p.non2xx += d.run.non2xx;
      p.errors += d.run.errors + d.run.timeouts;
    }
  }
  return kinds.map((k, i) => {
    const p = pooled[i]!;
    const l = p.samplesMs.length > 0 ? summarize(p.samplesMs) : null;
    return {
      name: k.name,
      request: `${k.request.method} ${k.request.path}`,
      connections,
      seconds: p.seconds,
      requestsPerSecond: p.seconds > 0 ? Math.round((p.ok / p.seconds) * 10) / 10 : 0,
      perSecondSamples: p.perSecond,
      // Only the summary: tens of thousands of samples per second would swell the file.
      latencyMs: l && { p50: round3(l.p50), p95: round3(l.p95), p99: round3(l.p99), mean: round3(l.mean), min: round3(l.min), max: round3(l.max) },
      non2xx: p.non2xx,
      errors: p.errors,
      serverCpuMsPerRequest: p.cpuMs === null || p.ok === 0 ? null : round3(p.cpuMs / p.ok),
      serverCpuMsPerRequestSamples: p.cpuSamples,
    };
  });
}
