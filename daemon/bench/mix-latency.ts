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

import { createHash } from 'node:crypto';
import http from 'node:http';
import { requestFor } from './latency.ts';
import type { BenchQuery } from './queries.ts';
import { summarize, type Summary } from './percentiles.ts';
import type { Warmup } from './result.ts';
import { warmUp } from './warm-up.ts';
import type { SearchResponse } from '../search/types.ts';

export interface MixLatencyOptions {
  /** The servers' base URLs. */
  targets: string[];
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
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => keep && parts.push(b));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6, text: keep ? Buffer.concat(parts).toString('utf8') : '' }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function mixLatency(o: MixLatencyOptions, log: (s: string) => void, label: string): Promise<QueryLatency[]> {
  const agents = o.targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const urls = o.targets.map((t) => new URL('/api/search', t));
  const send = async (i: number, body: string, keep = false) => {
    const k = i % urls.length;
    const r = await post(agents[k]!, urls[k]!, body, keep);
    if (r.status !== 200) throw new Error(`POST /api/search answered ${r.status} from ${o.targets[k]}: ${r.text.slice(0, 300)}`);
    return r;
  };
  const out: QueryLatency[] = [];
  try {
    for (const q of o.queries) {
      const body = JSON.stringify(requestFor(q));
      const result: QueryLatency = { name: q.name, samplesMs: [], latencyMs: null, error: null, answers: [] };
      out.push(result);
      try {
        for (let k = 0; k < urls.length; k++) result.answers.push(answerSignature(JSON.parse((await send(k, body, true)).text) as SearchResponse));
        let turn = 0;
        await warmUp(o.warmup, () => send(turn++, body));
        for (let i = 0; i < o.iterations; i++) result.samplesMs.push(round4((await send(i, body)).ms));
        result.samplesMs.sort((a, b) => a - b);
        result.latencyMs = summarize(result.samplesMs);
      } catch (err) {
        result.error = (err as Error).message;
        result.answers = [];
        log(`cluster ${label} ${q.name}: ERROR ${result.error}`);
      }
    }
  } finally {
    for (const a of agents) a.destroy();
  }
  return out;
}
