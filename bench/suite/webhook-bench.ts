// Push webhooks measured on many repositories (docs/operations.md "Webhooks"): a daemon
// serving N repositories of one `git` connection with a webhook secret, and this process
// as the git server, sending signed push notices to POST /api/webhooks/git over loopback.
//
// 1. The corpus: N repositories cut from a tree (--tree), or N tiny ones, made once under
//    --cache (many-repos.ts); a view of it with `--changed` of them copied (they get
//    commits) and the rest linked. `trawl sync` indexes it; `trawl serve` on the same
//    configuration, until /readyz (its first pass finds everything up to date).
// 2. Idle: distinct identifiers drawn from the corpus, each searched once: p50 and p99.
// 3. Push to searchable, --pushes times: one line committed to a changed repository, its
//    notice sent, the token searched every 10 ms until found: from the notice to found.
// 4. Refused: forged, unsigned, oversized and malformed notices, and an accepted one sent
//    again: each must be refused (or answered `replayed`), and no index may move.
// 5. A flood: every changed repository gets a commit, then --flood notices over
//    --flood-seconds, spread evenly over all N repositories (each named flood/N times),
//    while other distinct identifiers are searched one after another: every notice
//    answered 202, every changed repository searchable at its newest commit after, search
//    p99 under the flood against idle, and the daemon's RssAnon sampled throughout.
//
// Usage: trawl bench webhooks [--repos 2000] [--tree PATH] [--cache DIR] [--changed 50]
//        [--pushes 20] [--flood 10000] [--flood-seconds 60] [--queries 200] [--seed 1]
//        [--out bench/results/NAME]

import { createHmac, randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../../daemon/cli/usage.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { INSTALL_ROOT } from '../../daemon/install-root.ts';
import { rssOf } from '../../daemon/runtime/resident-memory.ts';
import { corpusIdentifiers, drawSets } from './identifiers.ts';
import { childEnv, stopServer } from './load.ts';
import { environment } from './machine.ts';
import { commitOneLine, ensureManyCorpus, manyCorpusName } from './many-repos-setup.ts';
import { repoDirs } from './many-repos.ts';
import { median, quantile } from './percentiles.ts';
import { runTimed } from './build.ts';
import { serveUntilReady } from './serve-ready.ts';
import { seededRandom } from './stats.ts';

const SECRET_ENV = 'TRAWL_BENCH_WEBHOOK_SECRET';
const POLL_MS = 10;
const ms2 = (x: number) => Math.round(x * 100) / 100;

interface Sent {
  status: number;
  text: string;
}

/** One keep-alive agent of a few sockets: the flood's notices and the searches each have theirs. */
function agentOf(sockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: sockets });
}

/**
 * POSTs `body`. The server may answer before the body is all sent (a 413 to an oversized
 * one) and close the connection: the answer then stands, whatever writing the rest did.
 */
function request(agent: http.Agent, url: URL, body: Buffer | string, headers: Record<string, string>): Promise<Sent> {
  return new Promise((resolvePromise, reject) => {
    let answered = false;
    const options = { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers } };
    const req = http.request(url, options, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8').on('data', (s: string) => (text += s));
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, text }));
      res.on('error', () => resolvePromise({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(body);
  });
}

/** A push notice for `repo`, as the post-receive hook of docs/configuration.md sends it, signed with `secret` (none: unsigned). */
function notice(repo: string, secret: string | undefined): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify({ repository: repo, refs: [{ ref: 'refs/heads/main', after: randomUUID() }] }));
  return { body, headers: secret === undefined ? {} : { 'x-trawl-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` } };
}

export async function webhookBench(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      repos: { type: 'string', default: '2000' },
      tree: { type: 'string' },
      cache: { type: 'string' },
      changed: { type: 'string', default: '50' },
      pushes: { type: 'string', default: '20' },
      flood: { type: 'string', default: '10000' },
      'flood-seconds': { type: 'string', default: '60' },
      queries: { type: 'string', default: '200' },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`bench webhooks takes no arguments, got "${positionals[0]}"`);
  const int = (name: keyof typeof values, min: number): number => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer of at least ${min}, got ${values[name]}`);
    return n;
  };
  const count = int('repos', 2);
  const changedCount = Math.min(int('changed', 1), count);
  const pushes = int('pushes', 1);
  const flood = int('flood', 0);
  const floodSeconds = int('flood-seconds', 1);
  const queries = int('queries', 10);
  const seed = int('seed', 0);
  const root = INSTALL_ROOT;
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const secret = randomUUID() + randomUUID();
  process.env[SECRET_ENV] = secret;

  // 1. The corpus, its view, the index, the daemon.
  const tree = values.tree === undefined ? undefined : resolve(values.tree);
  const spec = tree === undefined ? ({ kind: 'tiny', count } as const) : ({ kind: 'cut', count } as const);
  const cacheDir = resolve(values.cache ?? join(tmpdir(), 'trawl-bench-many'));
  const dir = join(cacheDir, manyCorpusName(spec, tree ?? '', tree ?? ''));
  const { made } = await ensureManyCorpus(spec, tree ?? '', dir);
  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-webhooks-'));
  try {
    const reposDir = join(work, 'repos');
    mkdirSync(reposDir, { recursive: true });
    const paths = repoDirs(made);
    const names = paths.map((p) => basename(p));
    const random = seededRandom(seed);
    const changed = new Set(drawSets(names, { changed: { count: changedCount } }, seed).changed);
    for (const [i, p] of paths.entries()) {
      if (changed.has(names[i]!)) cpSync(p, join(reposDir, names[i]!), { recursive: true, verbatimSymlinks: true });
      else symlinkSync(p, join(reposDir, names[i]!), 'dir');
    }
    const config = join(work, 'trawl.json');
    writeFileSync(
      config,
      JSON.stringify({
        settings: { anonymousAccess: true, symbols: false },
        connections: { c: { type: 'git', url: `${reposDir}/*`, webhookSecret: { env: SECRET_ENV } } },
      }),
    );
    const dataDir = join(work, 'data');
    log(`webhooks: ${names.length} repositories (${changedCount} get commits), ${made.files} files`);
    const synced = runTimed(
      process.execPath,
      [join(root, 'bin', 'trawl.js'), 'sync', '--config', config, '--data-dir', dataDir],
      childEnv(),
      join(work, 'sync.rss'),
    );
    log(`webhooks: trawl sync ${synced.seconds.toFixed(1)} s`);
    const cwd = join(work, 'serve');
    mkdirSync(cwd, { recursive: true });
    const ready = await serveUntilReady({ root, dataDir, config, cwd });
    const url = ready.server.url;
    const pid = ready.server.child.pid;
    const notices = agentOf(16);
    const searches = agentOf(1);
    const hook = new URL('/api/webhooks/git', url);
    const searchUrl = new URL('/api/search', url);
    const search = async (query: string): Promise<{ ms: number; found: boolean }> => {
      const t = performance.now();
      const a = await request(searches, searchUrl, JSON.stringify({ query, matches: 100, isCaseSensitivityEnabled: true }), {});
      const ms = performance.now() - t;
      if (a.status !== 200) throw new Error(`search ${query}: ${a.status} ${a.text.slice(0, 300)}`);
      return { ms, found: (JSON.parse(a.text) as { stats: { actualMatchCount: number } }).stats.actualMatchCount > 0 };
    };
    try {
      // 2. Idle latency.
      const sets = drawSets(corpusIdentifiers(made.dir), { idle: { count: queries }, flood: { count: queries } }, seed);
      const idle: number[] = [];
      for (const q of sets.idle) idle.push((await search(q.name)).ms);
      log(
        `webhooks: idle search p50 ${median(idle).toFixed(2)} ms, p99 ${quantile(idle, 0.99).toFixed(2)} ms (${idle.length} distinct identifiers, each once)`,
      );

      // 3. Push to searchable.
      const changedList = [...changed].sort();
      const pushMs: number[] = [];
      for (let k = 0; k < pushes; k++) {
        const repo = changedList[k % changedList.length]!;
        const token = `trawl_hook_${Math.floor(random() * 2 ** 32).toString(16)}`;
        commitOneLine(join(reposDir, repo), token);
        const n = notice(repo, secret);
        const t = performance.now();
        const a = await request(notices, hook, n.body, n.headers);
        if (a.status !== 202) throw new Error(`notice for ${repo}: ${a.status} ${a.text}`);
        for (;;) {
          if ((await search(token)).found) break;
          if (performance.now() - t > 60_000) throw new Error(`${token} not searchable 60 s after its notice`);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
        pushMs.push(performance.now() - t);
      }
      log(`webhooks: push to searchable p50 ${median(pushMs).toFixed(0)} ms, max ${Math.max(...pushMs).toFixed(0)} ms (${pushes} pushes)`);

      // 4. Refused deliveries change nothing.
      const generations = () =>
        readAllManifests(dataDir)
          .map((m) => `${m.repoId}:${m.generation}`)
          .join();
      const before = generations();
      const accepted = notice(changedList[0]!, secret);
      const bad: Array<[string, () => Promise<Sent>, (s: Sent) => boolean]> = [
        ['forged', () => (({ body, headers }) => request(notices, hook, body, headers))(notice(changedList[0]!, `${secret}x`)), (s) => s.status === 401],
        ['unsigned', () => (({ body }) => request(notices, hook, body, {}))(notice(changedList[0]!, undefined)), (s) => s.status === 401],
        // (Its own connection each time: the server closes it after a 413, the rest of the body unread.)
        [
          'oversized',
          () => request(agentOf(1), hook, Buffer.alloc(2 * 1024 * 1024, 32), {}).catch(() => ({ status: 0, text: 'closed' })),
          // A 413, or the connection closed before it could be read: refused either way.
          (s) => s.status === 413 || s.text === 'closed',
        ],
        [
          'malformed',
          () => {
            const body = Buffer.from('{"repository": 7');
            return request(notices, hook, body, { 'x-trawl-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` });
          },
          (s) => s.status === 400,
        ],
        ['replayed', () => request(notices, hook, accepted.body, accepted.headers), (s) => s.status === 200 && s.text.includes('"replayed"')],
      ];
      await request(notices, hook, accepted.body, accepted.headers);
      await new Promise((r) => setTimeout(r, 1500));
      const settled = generations();
      const refused: Record<string, { sent: number; refused: number }> = {};
      for (const [kind, send, ok] of bad) {
        refused[kind] = { sent: 0, refused: 0 };
        for (let i = 0; i < 100; i++) {
          const s = await send();
          refused[kind].sent++;
          if (ok(s)) refused[kind].refused++;
        }
      }
      await new Promise((r) => setTimeout(r, 1500));
      const indexMoved = generations() !== settled;
      log(
        `webhooks: refused ${Object.entries(refused)
          .map(([k, v]) => `${k} ${v.refused}/${v.sent}`)
          .join(', ')}; index moved: ${indexMoved ? 'YES' : 'no'}`,
      );
      if (before === '') throw new Error('no manifest read');

      // 5. The flood.
      const tokens = new Map<string, string>();
      for (const repo of changedList) {
        const token = `trawl_flood_${Math.floor(random() * 2 ** 32).toString(16)}`;
        commitOneLine(join(reposDir, repo), token);
        tokens.set(repo, token);
      }
      const order = drawSets(names, { all: { count: names.length } }, seed + 1).all;
      const rssBefore = rssOf(pid)?.anon ?? 0;
      const statuses = new Map<number, number>();
      const rss: number[] = [];
      const sampler = setInterval(() => {
        const r = rssOf(pid);
        if (r) rss.push(r.anon);
      }, 200);
      const floodStarted = performance.now();
      const sender = (async () => {
        const pending = new Set<Promise<void>>();
        for (let i = 0; i < flood; i++) {
          const due = floodStarted + (i * floodSeconds * 1000) / flood;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const n = notice(order[i % order.length]!, secret);
          const p = request(notices, hook, n.body, n.headers).then(
            (s) => void statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1),
            () => void statuses.set(0, (statuses.get(0) ?? 0) + 1),
          );
          pending.add(p);
          void p.finally(() => pending.delete(p));
          if (pending.size >= 64) await Promise.race(pending);
        }
        await Promise.all(pending);
      })();
      const underFlood: number[] = [];
      let q = 0;
      let done = false;
      void sender.then(() => (done = true));
      while (!done) {
        underFlood.push((await search(sets.flood[q++ % sets.flood.length]!.name)).ms);
      }
      await sender;
      const floodMs = performance.now() - floodStarted;
      const caughtUp = performance.now();
      for (const [repo, token] of tokens) {
        for (;;) {
          if ((await search(token)).found) break;
          if (performance.now() - caughtUp > 300_000) throw new Error(`${repo}: ${token} not searchable 300 s after the flood`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const lastMs = performance.now() - caughtUp;
      clearInterval(sampler);
      const idleRss = rssOf(pid)?.anon ?? 0;
      const accepted202 = statuses.get(202) ?? 0;
      log(
        `webhooks: flood of ${flood} notices in ${(floodMs / 1000).toFixed(1)} s: ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}; every changed repository searchable ${(lastMs / 1000).toFixed(1)} s after its end; search p99 ${quantile(underFlood, 0.99).toFixed(1)} ms under it (${underFlood.length} searches) vs ${quantile(idle, 0.99).toFixed(1)} ms idle; RssAnon max ${(Math.max(...rss) / 1e6).toFixed(0)} MB`,
      );

      const result = {
        kind: 'webhooks',
        environment: environment(root),
        date: new Date().toISOString(),
        corpus: { kind: spec.kind, repositories: names.length, files: made.files, bytes: made.bytes, changed: changedCount, ...(tree ? { tree } : {}) },
        syncSeconds: ms2(synced.seconds),
        idle: { searches: idle.length, p50: ms2(median(idle)), p99: ms2(quantile(idle, 0.99)) },
        pushToSearchable: { pushes, p50: ms2(median(pushMs)), p90: ms2(quantile(pushMs, 0.9)), max: ms2(Math.max(...pushMs)), samplesMs: pushMs.map(ms2) },
        refused: { ...refused, indexMoved },
        flood: {
          notices: flood,
          seconds: ms2(floodMs / 1000),
          statuses: Object.fromEntries(statuses),
          accepted: accepted202,
          changedSearchableSecondsAfter: ms2(lastMs / 1000),
          searches: underFlood.length,
          p50: ms2(median(underFlood)),
          p99: ms2(quantile(underFlood, 0.99)),
          p99VsIdle: ms2(quantile(underFlood, 0.99) / quantile(idle, 0.99)),
          rssAnonBeforeBytes: rssBefore,
          rssAnonMaxBytes: Math.max(...rss),
          rssAnonAfterBytes: idleRss,
        },
      };
      if (values.out !== undefined) {
        const out = resolve(values.out);
        mkdirSync(dirname(out), { recursive: true });
        writeFileSync(`${out}.json`, `${JSON.stringify(result, null, 2)}\n`);
        writeFileSync(`${out}.md`, markdown(result));
        log(`webhooks: wrote ${out}.json and ${out}.md`);
      }
      return 0;
    } finally {
      await stopServer(ready.server);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type Result = {
  environment: ReturnType<typeof environment>;
  corpus: { kind: string; repositories: number; files: number; changed: number };
  syncSeconds: number;
  idle: { searches: number; p50: number; p99: number };
  pushToSearchable: { pushes: number; p50: number; p90: number; max: number };
  refused: Record<string, unknown> & { indexMoved: boolean };
  flood: {
    notices: number;
    seconds: number;
    accepted: number;
    statuses: Record<string, number>;
    changedSearchableSecondsAfter: number;
    searches: number;
    p99: number;
    p99VsIdle: number;
    rssAnonBeforeBytes: number;
    rssAnonMaxBytes: number;
    rssAnonAfterBytes: number;
  };
};

function markdown(r: Result): string {
  const e = r.environment;
  const refusedRows = Object.entries(r.refused)
    .filter(([k]) => k !== 'indexMoved')
    .map(([k, v]) => `${k} ${(v as { refused: number }).refused}/${(v as { sent: number }).sent}`)
    .join(', ');
  return `# Push webhooks: ${r.corpus.repositories} ${r.corpus.kind === 'tiny' ? 'tiny' : 'cut'} repositories

${e.machine.cpuModel}, ${e.machine.cores} cores; Node ${e.node}; trawl ${e.gitCommit}.

| measure | value | target |
|---|---|---|
| corpus | ${r.corpus.repositories} repositories, ${r.corpus.files} files, ${r.corpus.changed} of them get commits; indexed by \`trawl sync\` in ${r.syncSeconds} s | |
| one-line push to searchable, from the notice (${r.pushToSearchable.pushes} pushes) | p50 ${r.pushToSearchable.p50.toFixed(0)} ms, p90 ${r.pushToSearchable.p90.toFixed(0)} ms, max ${r.pushToSearchable.max.toFixed(0)} ms | ≤ 1 s (median) |
| forged, unsigned, oversized, malformed, replayed notices refused | ${refusedRows}; an index moved: ${r.refused.indexMoved ? 'yes' : 'no'} | 100 %, 0 changes |
| flood: notices sent, over | ${r.flood.notices} in ${r.flood.seconds} s, each repository named ${Math.round(r.flood.notices / r.corpus.repositories)} times | 10,000 in a minute |
| flood: answered | ${Object.entries(r.flood.statuses)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ')} | every one accepted |
| flood: every changed repository at its newest commit | ${r.flood.changedSearchableSecondsAfter} s after the flood's end | all |
| search p99 under the flood / idle (distinct identifiers, each once) | ${r.flood.p99} ms (${r.flood.searches} searches) / ${r.idle.p99} ms: ${r.flood.p99VsIdle}× | ≤ 3× |
| daemon RssAnon before the flood; its max during it; once every change was searchable | ${(r.flood.rssAnonBeforeBytes / 1e6).toFixed(0)} MB; ${(r.flood.rssAnonMaxBytes / 1e6).toFixed(0)} MB; ${(r.flood.rssAnonAfterBytes / 1e6).toFixed(0)} MB | bounded |

The notices are the post-receive hook's (docs/configuration.md), sent by this process over loopback to \`POST /api/webhooks/git\` of \`trawl serve\`, signed with the connection's secret.
`;
}
