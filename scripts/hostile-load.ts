// `node --import tsx scripts/hostile-load.ts ROOT DATA_DIR CORPUS [OUT.json]`: what the
// costliest requests a caller can send do to a daemon, for a trawl checkout at ROOT
// serving DATA_DIR (an index of the tree CORPUS, whose identifiers make the normal
// queries). Run it for two checkouts back to back on the same index to compare them; it
// prints one line per figure and writes them all as JSON to OUT.
//
//   idle         200 distinct identifiers, each sent once by one client (latency)
//   repeated     one query sent 50 times after 10 warm-ups (labelled so: plans are cached)
//   regex        30 distinct 16 KB regexes of counted repetitions at once: /api/health's
//                latency meanwhile, and how long they took to be answered
//   terms        a query of 3,276 `a` or-ed with `b` (16 KB), alone
//   contention   four 64-term searches of one caller, and meanwhile 60 distinct identifiers
//                sent once each by another caller: their latency against idle
//   worst        10 regexes, 10 64-term searches and 10 whole-repository file listings at
//                once, from 30 callers: /api/health's latency meanwhile
//   sigterm      SIGTERM while 30 regexes are being answered: the time to exit
//
// Callers are told apart by address: the daemon is configured to trust X-Forwarded-For from
// loopback. Every figure is wall-clock: run it on an otherwise idle machine.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, stopServer, waitHealthy, type Server } from '../bench/suite/load.ts';
import { quantile } from '../bench/suite/percentiles.ts';
import { corpusIdentifiers, drawSets } from '../bench/suite/identifiers.ts';

const args = process.argv.slice(2);
if (args.length < 3) throw new Error('usage: hostile-load.ts ROOT DATA_DIR CORPUS [OUT.json]');
// The daemon runs in a directory of its own: paths are made absolute first.
const [root, dataDir, corpus] = args.slice(0, 3).map((p) => resolve(p));
const out = args[3];
const cwd = join(tmpdir(), `trawl-hostile-load-${process.pid}`);
mkdirSync(cwd, { recursive: true });
const config = join(cwd, 'trawl.json');
writeFileSync(
  config,
  JSON.stringify({
    settings: { anonymousAccess: true, http: { trustedProxies: ['127.0.0.1', '::1'] }, rateLimit: { requestsPerDay: 1_000_000_000, store: 'embedded' } },
  }),
);

/** Distinct identifiers of the corpus, drawn as the bench draws its held-out ones (bench/suite/identifiers.ts), in a fixed pseudo-random order. */
function identifiers(n: number): string[] {
  return drawSets(corpusIdentifiers(corpus!), { picked: { count: n } }, 56).picked.map((i) => i.name);
}

interface Answer {
  status: number;
  ms: number;
}

async function post(url: string, path: string, body: unknown, from: string): Promise<Answer> {
  const t = performance.now();
  try {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - t };
  } catch {
    return { status: 0, ms: performance.now() - t };
  }
}

/** /api/health's latencies while `until` is pending. */
async function healthDuring(url: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const seen: number[] = [];
  while (!done) {
    const t = performance.now();
    try {
      await (await fetch(`${url}/api/health`)).arrayBuffer();
    } catch {
      break;
    }
    seen.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 10));
  }
  return seen;
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const stats = (xs: number[]) =>
  xs.length === 0 ? { n: 0 } : { n: xs.length, p50: r1(quantile(xs, 0.5)), p90: r1(quantile(xs, 0.9)), p99: r1(quantile(xs, 0.99)), max: r1(Math.max(...xs)) };
const hugeRegex = (k: number) => ({ query: `x${k}${'.{0,1000}'.repeat(1800)}`, matches: 100, isRegexEnabled: true });
const costly = (k: number) => ({ query: Array.from({ length: 64 }, (_, i) => String.fromCodePoint(0x100 + ((i + k) % 128))).join(' or '), matches: 100 });
const normal = (id: string) => ({ query: id, matches: 100 });

const ids = identifiers(400);
const result: Record<string, unknown> = {
  root,
  dataDir,
  corpus,
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  node: process.version,
  when: new Date().toISOString(),
};
const print = (name: string, value: unknown) => {
  result[name] = value;
  console.log(`${name.padEnd(12)} ${JSON.stringify(value)}`);
};

async function start(): Promise<Server> {
  const server = await startServer(
    'trawl',
    [join(root!, 'bin', 'trawl.js'), 'serve', '--config', config, '--data-dir', dataDir!, '--port', '0', '--log-level', 'silent'],
    cwd,
  );
  await waitHealthy(server.url);
  // Warm: every shard mapped and checked by a search that reads them all.
  for (let k = 0; k < 3; k++) await post(server.url, '/api/search', normal(`warm_up_${k}`), '10.0.0.1');
  return server;
}

const server = await start();
try {
  const url = server.url;
  const repo = ((await (await fetch(`${url}/api/repos`)).json()) as Array<{ repoName: string }>)[0]!.repoName;

  const idle: number[] = [];
  for (const id of ids.slice(0, 200)) idle.push((await post(url, '/api/search', normal(id), '10.0.1.1')).ms);
  print('idle', stats(idle));

  for (let k = 0; k < 10; k++) await post(url, '/api/search', normal('EXPORT_SYMBOL_GPL'), '10.0.1.1');
  const repeated: number[] = [];
  for (let k = 0; k < 50; k++) repeated.push((await post(url, '/api/search', normal('EXPORT_SYMBOL_GPL'), '10.0.1.1')).ms);
  print('repeated', stats(repeated));

  {
    const t = performance.now();
    const all = Promise.all(Array.from({ length: 30 }, (_, k) => post(url, '/api/search', hugeRegex(k), `10.1.0.${k}`)));
    const health = await healthDuring(url, all);
    const answers = await all;
    print('regex', { health: stats(health), answeredMs: r1(performance.now() - t), statuses: [...new Set(answers.map((a) => a.status))] });
  }

  {
    const a = await post(url, '/api/search', { query: `${Array.from({ length: 3276 }, () => 'a').join(' or ')} or b`, matches: 100 }, '10.2.0.1');
    print('terms', { status: a.status, ms: r1(a.ms) });
  }

  {
    const heavy = Array.from({ length: 4 }, (_, k) => post(url, '/api/search', costly(k), '10.3.0.1'));
    await new Promise((r) => setTimeout(r, 300));
    const beside: number[] = [];
    for (const id of ids.slice(200, 260)) beside.push((await post(url, '/api/search', normal(id), '10.3.0.2')).ms);
    const heavyAnswers = await Promise.all(heavy);
    print('contention', {
      beside: stats(beside),
      idleP50: r1(quantile(idle, 0.5)),
      ratio: r1(quantile(beside, 0.5) / quantile(idle, 0.5)),
      costlyMs: heavyAnswers.map((a) => r1(a.ms)),
      costlyStatuses: heavyAnswers.map((a) => a.status),
    });
  }

  {
    const worst: Array<Promise<Answer>> = [];
    for (let k = 0; k < 10; k++) {
      worst.push(post(url, '/api/search', hugeRegex(100 + k), `10.4.0.${k}`));
      worst.push(post(url, '/api/search', costly(20 + k), `10.4.1.${k}`));
      worst.push(post(url, '/api/files', { repoName: repo }, `10.4.2.${k}`));
    }
    const all = Promise.all(worst);
    const health = await healthDuring(url, all);
    const answers = await all;
    print('worst', { health: stats(health), statuses: [...new Set(answers.map((a) => a.status))], slowestMs: r1(Math.max(...answers.map((a) => a.ms))) });
  }

  {
    const pending = Array.from({ length: 30 }, (_, k) => post(url, '/api/search', hugeRegex(200 + k), `10.5.0.${k}`));
    await new Promise((r) => setTimeout(r, 200));
    const t = performance.now();
    await stopServer(server);
    print('sigterm', { exitMs: r1(performance.now() - t) });
    await Promise.all(pending);
  }
} finally {
  await stopServer(server);
  rmSync(cwd, { recursive: true, force: true });
}
if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
