// Each query of the mix over HTTP, one client, through one or several servers (the cluster
// phase, phase-cluster.ts): what one user waits for when nothing else runs, so that a
// cluster's figure minus a single daemon's is what the fan-out adds to a request.
//
// One keep-alive connection per server. Per query: one untimed request to every server,
// whose answer is kept as a signature (matches, files, exhaustiveness, unavailable shards:
// a cluster must answer what one daemon answers), then the warm-up of the other phases
// (warm-up.ts) and `iterations` timed requests, request i going to server i mod N (the
// servers take turns, as behind a load balancer), each from the first byte written to the
// last byte read.
//
// With a `reference` (the single daemon, kept running beside a cluster), every request to
// the servers is paired with one to the reference, the order alternating, so that both are
// measured in the same seconds: a shared machine's speed drifts over minutes (the same
// single daemon measured a quarter of an hour apart differs by more than a fan-out costs),
// and a difference between configurations measured in turn held that drift.

import { createHash } from 'node:crypto';
import http from 'node:http';
import { requestFor } from './latency.ts';
import type { BenchQuery } from './queries.ts';
import { summarize, type Summary } from './percentiles.ts';
import type { Warmup } from './result.ts';
import { warmUp } from './warm-up.ts';
import type { SearchResponse } from '../../daemon/search/types.ts';

export interface MixLatencyOptions {
  /** The servers' base URLs. */
  targets: string[];
  /** A server measured interleaved with them (the baseline), its answers not checked here. */
  reference?: string;
  queries: BenchQuery[];
  iterations: number;
  warmup: Warmup;
}

export interface QueryLatency {
  name: string;
  /** Sorted. */
  samplesMs: number[];
  latencyMs: Summary | null;
  error: string | null;
  /** Per server, what it answered (answerSignature); empty when the query failed. */
  answers: string[];
  /** The reference's timed requests, each paired with one of `samplesMs` (sorted); absent without a reference. */
  reference?: { samplesMs: number[]; latencyMs: Summary | null };
}

export interface MixLatency {
  queries: QueryLatency[];
  /** Requests the servers answered, untimed ones included (not the reference's). */
  requests: number;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * What must agree between a single daemon and a cluster for one request: the files (with
 * their repository and match count) in order, the matches returned, whether the search was
 * exhaustive, and the shards it could not search. Not the total match count, which counts
 * matches of shards that ran before the search stopped (timing). A short digest, with the
 * counts in clear for a reader of a mismatch.
 */
export function answerSignature(r: Pick<SearchResponse, 'files' | 'stats' | 'isSearchExhaustive' | 'unavailableShards'>): string {
  const files = r.files.map((f) => `${f.repository}/${f.fileName.text}:${f.chunks.reduce((n, c) => n + c.matchRanges.length, 0)}`);
  const digest = createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 12);
  const unavailable = r.unavailableShards?.length ?? 0;
  return `${r.stats.actualMatchCount} matches in ${r.files.length} files (${digest})${r.isSearchExhaustive ? '' : ', not exhaustive'}${unavailable ? `, ${unavailable} shards unavailable` : ''}`;
}

/** POST `body`; the status, the body when asked for, and the time to the last byte in ms. */
function post(agent: http.Agent, url: URL, body: string, keep: boolean): Promise<{ status: number; ms: number; text: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => keep && parts.push(b));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            text: keep ? Buffer.concat(parts).toString('utf8') : '',
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function mixLatency(o: MixLatencyOptions, log: (s: string) => void, label: string): Promise<MixLatency> {
  const all = o.reference === undefined ? o.targets : [...o.targets, o.reference];
  const agents = all.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const urls = all.map((t) => new URL('/api/search', t));
  const at = async (k: number, body: string, keep: boolean) => {
    const r = await post(agents[k]!, urls[k]!, body, keep);
    if (r.status !== 200) throw new Error(`POST /api/search answered ${r.status} from ${all[k]}: ${r.text.slice(0, 300)}`);
    return r;
  };
  let requests = 0;
  const send = (i: number, body: string, keep = false) => {
    requests++;
    return at(i % o.targets.length, body, keep);
  };
  const ref = o.reference === undefined ? null : (body: string) => at(o.targets.length, body, false);
  const out: QueryLatency[] = [];
  try {
    for (const q of o.queries) {
      const body = JSON.stringify(requestFor(q));
      const result: QueryLatency = { name: q.name, samplesMs: [], latencyMs: null, error: null, answers: [] };
      out.push(result);
      try {
        for (let k = 0; k < o.targets.length; k++) result.answers.push(answerSignature(JSON.parse((await send(k, body, true)).text) as SearchResponse));
        let turn = 0;
        await warmUp(o.warmup, async () => {
          await send(turn++, body);
          if (ref) await ref(body);
        });
        const paired: number[] = [];
        for (let i = 0; i < o.iterations; i++) {
          // The reference goes first every other time: neither side always follows the other.
          if (ref && i % 2 === 1) paired.push(round4((await ref(body)).ms));
          result.samplesMs.push(round4((await send(i, body)).ms));
          if (ref && i % 2 === 0) paired.push(round4((await ref(body)).ms));
        }
        result.samplesMs.sort((a, b) => a - b);
        result.latencyMs = summarize(result.samplesMs);
        if (ref) {
          paired.sort((a, b) => a - b);
          result.reference = { samplesMs: paired, latencyMs: summarize(paired) };
        }
      } catch (err) {
        result.error = (err as Error).message;
        result.answers = [];
        delete result.reference;
        log(`cluster ${label} ${q.name}: ERROR ${result.error}`);
      }
    }
  } finally {
    for (const a of agents) a.destroy();
  }
  return { queries: out, requests };
}
