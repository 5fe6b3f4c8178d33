// Latency on distinct requests, each sent once: the one way `trawl bench run` times what a
// user waits for (the headline of a run on one corpus, phase-distinct.ts, and every query
// kind of the many-repositories phase, phase-many-repos.ts). A query sent over and over is
// answered from warm caches along the whole path (the plan, the shards' pages, the
// workers' JIT-compiled code for that shape) that a user's next, different query does not
// find; so each query here is sent once, after a warm-up on other queries, by one client
// on one keep-alive connection (http-client.ts), and the figure is over the whole set.
//
// A search is POST /api/search with `matches` MATCH_LIMIT, no context, case-sensitive (as
// the peers run it). Its answer's stats.duration, the daemon's own time for the search,
// is kept beside the client's time: the difference is HTTP, queueing and JSON.

import type http from 'node:http';
import { oneConnection, send, type Answer } from './http-client.ts';
import { MATCH_LIMIT } from './latency.ts';
import { median, quantile } from './percentiles.ts';
import type { ColdPass, DaemonStart, DistinctLatency, DistinctSummary, DistinctWarmup, Warmup } from './result.ts';
import { stopServer } from './load.ts';
import { dropPageCache } from './page-cache.ts';
import type { ReadyServer } from './serve-ready.ts';
import { warmUp } from './warm-up.ts';

/** One request timed: a search (its query) or a GET (its path). */
export type TimedRequest = { search: string } | { get: string };

export const search = (query: string): TimedRequest => ({ search: query });

/** The body of a search request. */
export function searchBody(query: string): string {
  return JSON.stringify({ query, matches: MATCH_LIMIT, contextLines: 0, isCaseSensitivityEnabled: true });
}

/** A daemon's address and one keep-alive connection to it. */
export interface Client {
  url: string;
  agent: http.Agent;
}

export function client(url: string): Client {
  return { url, agent: oneConnection() };
}

function sendOne(c: Client, r: TimedRequest): Promise<Answer> {
  return 'search' in r
    ? send(c.agent, new URL('/api/search', c.url), 'POST', searchBody(r.search), true)
    : send(c.agent, new URL(r.get, c.url), 'GET', undefined, true);
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** p50, p90, p99, mean, min, max of samples in any order; null for none. */
export function distinctSummary(samples: readonly number[]): DistinctSummary | null {
  if (samples.length === 0) return null;
  const q = (p: number) => round4(quantile(samples, p));
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), mean: round4(samples.reduce((s, x) => s + x, 0) / samples.length), min: q(0), max: q(1) };
}

/** Sends each request once, in order, and times it. */
export async function eachOnce(c: Client, requests: readonly TimedRequest[]): Promise<DistinctLatency> {
  return (await eachOnceDetail(c, requests)).latency;
}

/** eachOnce, with each request's time by its position (null: it failed), for figures over some of them (a peer's sample). */
export async function eachOnceDetail(c: Client, requests: readonly TimedRequest[]): Promise<{ latency: DistinctLatency; msByRequest: Array<number | null> }> {
  const msByRequest: Array<number | null> = [];
  const samplesMs: number[] = [];
  const durations: number[] = [];
  let found = 0;
  let errors = 0;
  let firstError: string | null = null;
  for (const r of requests) {
    let a: Answer;
    msByRequest.push(null);
    try {
      a = await sendOne(c, r);
    } catch (err) {
      errors++;
      firstError ??= (err as Error).message;
      continue;
    }
    if (a.status !== 200) {
      errors++;
      firstError ??= `${a.status} ${(a.text ?? '').slice(0, 300)}`;
      continue;
    }
    samplesMs.push(round4(a.ms));
    msByRequest[msByRequest.length - 1] = round4(a.ms);
    if ('search' in r) {
      const stats = (JSON.parse(a.text!) as { stats: { duration: number; actualMatchCount: number } }).stats;
      durations.push(stats.duration / 1e6);
      if (stats.actualMatchCount > 0) found++;
    }
  }
  const searches = requests.some((r) => 'search' in r);
  const latency: DistinctLatency = {
    queries: requests.map((r) => ('search' in r ? r.search : r.get)),
    samplesMs,
    latencyMs: distinctSummary(samplesMs),
    serverDurationP50Ms: searches && durations.length > 0 ? round4(median(durations)) : null,
    found: searches ? found : null,
    errors,
    firstError,
  };
  return { latency, msByRequest };
}

/**
 * The warm-up before timed requests: `requests` sent in turn (over again when they run
 * out) until both bounds of `w` are met. None of them may be among the timed ones.
 */
export async function warmUpOn(c: Client, requests: readonly TimedRequest[], w: Warmup): Promise<DistinctWarmup> {
  if (requests.length === 0) return { requests: 0, ms: 0 };
  let sent = 0;
  const ms = await warmUp(w, async () => {
    const a = await sendOne(c, requests[sent++ % requests.length]!);
    if (a.status !== 200) throw new Error(`a warm-up request answered ${a.status}: ${(a.text ?? '').slice(0, 300)}`);
  });
  return { requests: sent, ms: Math.round(ms) };
}

/** The seed of every draw of held-out identifiers: the same corpus gives the same queries run after run. */
export const DISTINCT_SEED = 20261127;

/**
 * The sets of a measurement, for identifiers.ts drawSets: one first search, a warm-up (as
 * many identifiers as the warm-up's runs, 10 to 200: sent over again when it asks for
 * more), `count` timed ones, and with --cold as many again plus a first. A corpus holding
 * fewer than that (`available`) gets every set but the first shrunk in proportion.
 */
export function identifierSpecs(count: number, warmup: Warmup, cold: boolean, available = Number.POSITIVE_INFINITY) {
  let w = Math.max(10, Math.min(warmup.runs, 200));
  let m = count;
  let c = cold ? count + 1 : 0;
  if (available < 1 + w + m + c) {
    const share = Math.max(0, available - 1) / (w + m + c);
    [w, m, c] = [Math.floor(w * share), Math.floor(m * share), Math.floor(c * share)];
  }
  return { first: { count: 1 }, warmup: { count: w }, measured: { count: m }, cold: { count: c } };
}

/** The held-out identifiers of a measurement: disjoint sets (identifiers.ts drawSets). */
export interface IdentifierSets {
  /** The first search after the daemon is ready. */
  first: string;
  /** Sent, untimed, before the timed ones. */
  warmup: string[];
  measured: string[];
  /** `--cold`: its first is the first search after the cache was dropped, the rest are timed. */
  cold: string[];
}

export interface WarmIdentifiers {
  start: DaemonStart;
  warmup: DistinctWarmup;
  identifiers: DistinctLatency;
  /** Each timed identifier's time by its position in `sets.measured` (null: it failed). */
  msByRequest: Array<number | null>;
}

/** How a pass of identifiers warms up, and what names it in the log. */
export interface IdentifierPass {
  warmup: Warmup;
  log: (s: string) => void;
  label: string;
}

/**
 * On a daemon just ready: its first search (`sets.first`), the warm-up on `sets.warmup`,
 * then `sets.measured` each once. The connection stays open for the caller's next requests.
 */
export async function identifiersAfterReady(
  ready: ReadyServer,
  c: Client,
  sets: IdentifierSets,
  { warmup: w, log, label }: IdentifierPass,
): Promise<WarmIdentifiers> {
  const first = await eachOnce(c, [search(sets.first)]);
  const start: DaemonStart = {
    listeningMs: Math.round(ready.listeningMs),
    readyMs: Math.round(ready.readyMs),
    firstSearch: sets.first,
    firstSearchMs: first.samplesMs[0] ?? null,
  };
  log(`${label} ready after ${start.readyMs} ms (listening after ${start.listeningMs} ms); first search ${fmt(start.firstSearchMs)}`);
  const warmup = await warmUpOn(c, sets.warmup.map(search), w);
  const { latency: identifiers, msByRequest } = await eachOnceDetail(c, sets.measured.map(search));
  log(`${label} ${describeLatency(identifiers)} (after a warm-up of ${warmup.requests} other identifiers, ${warmup.ms} ms)`);
  return { start, warmup, identifiers, msByRequest };
}

/**
 * `--cold`: a daemon started anew (`serve`), the page cache dropped once it is ready, then
 * its first search (`identifiers[0]`) and the others each once. Stops the daemon.
 */
export async function coldIdentifiers(
  serve: () => Promise<ReadyServer>,
  identifiers: readonly string[],
  log: (s: string) => void,
  label: string,
): Promise<ColdPass> {
  const ready = await serve();
  const c = client(ready.server.url);
  try {
    dropPageCache();
    const first = await eachOnce(c, [search(identifiers[0]!)]);
    const measured = await eachOnce(c, identifiers.slice(1).map(search));
    const cold: ColdPass = {
      listeningMs: Math.round(ready.listeningMs),
      readyMs: Math.round(ready.readyMs),
      firstSearch: identifiers[0]!,
      firstSearchMs: first.samplesMs[0] ?? null,
      identifiers: measured,
    };
    log(`${label} cold: page cache dropped once ready; first search ${fmt(cold.firstSearchMs)}, then ${describeLatency(measured)}`);
    return cold;
  } finally {
    c.agent.destroy();
    await stopServer(ready.server);
  }
}

const fmt = (ms: number | null | undefined) => (ms === null || ms === undefined ? '—' : `${ms.toFixed(1)} ms`);

/** One line for the log: what was timed and its percentiles. */
export function describeLatency(d: DistinctLatency): string {
  const l = d.latencyMs;
  const found = d.found === null ? '' : `, ${d.found} found something`;
  return `${d.samplesMs.length} distinct: p50 ${fmt(l?.p50)}, p90 ${fmt(l?.p90)}, p99 ${fmt(l?.p99)}${d.serverDurationP50Ms === null ? '' : `, daemon p50 ${fmt(d.serverDurationP50Ms)}`}${found}${d.errors ? `, ${d.errors} errors (${d.firstError})` : ''}`;
}
