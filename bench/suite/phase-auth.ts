// Authentication and rate limiting (`--auth`): what identifying a caller and counting its
// request costs, asked on every release. `trawl users add` and
// `trawl keys create` make a user and an API key in the bench's data dir, as an operator
// would; a `trawl serve` with a configuration file (anonymous access allowed, a daily limit
// no run reaches, counting in the embedded store) then answers GET /api/repos (rate
// limited, no search: the step is a large share of it) to two variants of the request:
// anonymous (no credential lookup, never counted) and the key as `Authorization: Bearer`.
// A warm-up run of each, then `rounds` alternations of `seconds` each: requests per second,
// every response's latency, the daemon's CPU per request. What the step adds is the key's
// CPU per request minus anonymous's.
//
// Checked, or the phase fails: both variants answer 200 with the same body and
// X-RateLimit-Remaining on the key's alone; around each timed run of the key its counter
// falls by at least the responses received and at most the requests sent (it counted).

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, cpuMsBetween, loadRunDetail, startServer, stopServer, waitHealthy, type LoadRequest, type Server } from './load.ts';
import { summarize } from './percentiles.ts';
import type { AuthPhase, AuthVariant } from './result.ts';

export interface AuthPhaseOptions {
  root: string;
  dataDir: string;
  work: string;
  seconds: number;
  connections: number;
  rounds: number;
}

const EMAIL = 'bench@trawl.invalid';
/** A daily limit no run reaches: a refused request would take another path. */
const REQUESTS_PER_DAY = 1_000_000_000;
const REQUEST: LoadRequest = { method: 'GET', path: '/api/repos' };
const round3 = (x: number) => Math.round(x * 1000) / 1000;

function trawl(root: string, args: string[]): string {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'trawl.js'), ...args], { env: childEnv(), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`trawl ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr.trim()}`);
  return r.stdout.trim();
}

async function get(server: Server, headers: Record<string, string>): Promise<{ status: number; body: string; remaining: string | null }> {
  const r = await fetch(`${server.url}${REQUEST.path}`, { headers });
  return { status: r.status, body: await r.text(), remaining: r.headers.get('x-ratelimit-remaining') };
}

async function remaining(server: Server, headers: Record<string, string>): Promise<number> {
  const r = await get(server, headers);
  if (r.status !== 200 || r.remaining === null)
    throw new Error(`auth: GET ${REQUEST.path} with the key answered ${r.status}, X-RateLimit-Remaining ${r.remaining ?? 'absent'}`);
  return Number(r.remaining);
}

export async function authPhase(o: AuthPhaseOptions, log: (s: string) => void): Promise<AuthPhase> {
  trawl(o.root, ['users', 'add', '--email', EMAIL, '--data-dir', o.dataDir]);
  const key = trawl(o.root, ['keys', 'create', '--user', EMAIL, '--name', 'bench', '--data-dir', o.dataDir]);
  if (!/^svk_[0-9a-f]{64}$/.test(key)) throw new Error(`auth: trawl keys create printed "${key.slice(0, 12)}…", not an API key`);
  const cwd = join(o.work, 'auth');
  mkdirSync(cwd, { recursive: true });
  const config = join(cwd, 'trawl.json');
  writeFileSync(
    config,
    `${JSON.stringify({ settings: { anonymousAccess: true, rateLimit: { requestsPerDay: REQUESTS_PER_DAY, store: 'embedded' } } }, null, 2)}\n`,
  );
  const variants: Array<{ name: AuthVariant['name']; headers: Record<string, string> }> = [
    { name: 'anonymous', headers: {} },
    { name: 'apiKey', headers: { authorization: `Bearer ${key}` } },
  ];
  const server = await startServer(
    'trawl',
    [join(o.root, 'bin', 'trawl.js'), 'serve', '--config', config, '--data-dir', o.dataDir, '--port', '0', '--log-level', 'silent'],
    cwd,
  );
  try {
    await waitHealthy(server.url);
    log(`auth    trawl serve at ${server.url} (pid ${server.child.pid}): GET ${REQUEST.path} anonymous and with an API key`);
    const answers = await Promise.all(variants.map((v) => get(server, v.headers)));
    for (const [i, a] of answers.entries()) {
      const v = variants[i]!;
      if (a.status !== 200) throw new Error(`auth: GET ${REQUEST.path} as ${v.name} answered ${a.status}: ${a.body.slice(0, 300)}`);
      if ((a.remaining !== null) !== (v.name !== 'anonymous'))
        throw new Error(`auth: GET ${REQUEST.path} as ${v.name}: X-RateLimit-Remaining ${a.remaining === null ? 'absent' : 'present'}`);
      if (a.body !== answers[0]!.body) throw new Error(`auth: GET ${REQUEST.path} as ${v.name} answered differently from anonymous`);
    }

    // The most any timed run saw other processes use (the daemon's CPU subtracted: load.ts).
    let cores: number | null = null;
    const pooled = variants.map(() => ({
      samplesMs: [] as number[],
      perSecond: [] as number[],
      cpuMs: 0 as number | null,
      ok: 0,
      seconds: 0,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
    }));
    for (const v of variants)
      await loadRunDetail(server, [server], { ...REQUEST, headers: v.headers }, { round: 0, duration: 1, connections: o.connections, label: v.name });
    for (let round = 1; round <= o.rounds; round++) {
      for (const [i, v] of variants.entries()) {
        const before = v.name === 'anonymous' ? null : await remaining(server, v.headers);
        const d = await loadRunDetail(
          server,
          [server],
          { ...REQUEST, headers: v.headers },
          { round, duration: o.seconds, connections: o.connections, label: v.name },
        );
        const p = pooled[i]!;
        const ok = d.latenciesMs.length;
        if (before !== null) {
          // The reading request is counted too.
          const counted = before - (await remaining(server, v.headers)) - 1;
          if (counted < ok || counted > d.sent)
            throw new Error(`auth: the key's counter fell by ${counted} over a run of ${ok} responses and ${d.sent} requests sent`);
        }
        for (const x of d.latenciesMs) p.samplesMs.push(round3(x));
        p.perSecond.push(...d.perSecond);
        const cpu = cpuMsBetween(d.from, d.to, 'trawl');
        p.cpuMs = p.cpuMs === null || cpu === null ? null : p.cpuMs + cpu;
        p.ok += ok;
        p.seconds += d.run.seconds;
        p.non2xx += d.run.non2xx;
        p.errors += d.run.errors;
        p.timeouts += d.run.timeouts;
        const f = d.run.load.foreignCores;
        if (f !== null) cores = Math.max(cores ?? 0, f);
      }
    }
    const out: AuthVariant[] = variants.map((v, i) => {
      const p = pooled[i]!;
      return {
        name: v.name,
        requestsPerSecond: p.seconds > 0 ? Math.round((p.ok / p.seconds) * 10) / 10 : 0,
        perSecondSamples: p.perSecond,
        latencyMs: p.samplesMs.length > 0 ? summarize(p.samplesMs) : null,
        samplesMs: p.samplesMs,
        non2xx: p.non2xx,
        errors: p.errors,
        timeouts: p.timeouts,
        serverCpuMsPerRequest: p.cpuMs === null || p.ok === 0 ? null : round3(p.cpuMs / p.ok),
      };
    });
    const [anon, withKey] = out;
    const step =
      anon!.serverCpuMsPerRequest === null || withKey!.serverCpuMsPerRequest === null
        ? null
        : Math.round((withKey!.serverCpuMsPerRequest - anon!.serverCpuMsPerRequest) * 1000 * 10) / 10;
    return {
      request: `${REQUEST.method} ${REQUEST.path}`,
      seconds: o.seconds,
      connections: o.connections,
      rounds: o.rounds,
      variants: out,
      stepCpuUsPerRequest: step,
      foreignCores: cores,
    };
  } finally {
    await stopServer(server);
  }
}
