// The cost of code-host permissions, measured side by side in one run (docs/identity.md
// "Who sees what"):
//
// 1. Search latency with settings.permissions "all" against "code-host", over HTTP, on one
//    index of many repositories (a directory of git repositories, e.g. the bench's
//    linux-2000 corpus), every repository private, a thousand members each with an API key.
//    Under "code-host" each member's host permissions are rows in the store, as the
//    permission sync writes them: every repository (the answers are then the same as
//    under "all", so the difference is the permission check alone), and in a second
//    scenario a random tenth. Each run is a fresh `trawl serve`; every member first sends
//    one warm-up search (their permissions are read once, then kept), then distinct
//    identifiers drawn from the corpus are each sent once, member after member. The modes
//    alternate (all, code-host, all, code-host) so that the page cache favours neither.
// 2. A permission sync of a thousand members and two thousand private repositories against
//    the fake GitHub (its permission API, in a child process of its own): every member
//    linked with their own token, each repository readable by a random tenth of them.
//
// Usage: node --import tsx bench/suite/permissions-bench.ts --repos DIR [--members 1000]
//        [--queries 300] [--sync-repos 2000] [--out bench/results/NAME]
// (the fake host is test/hosts/fake-github-process.ts, started by path: run from a checkout)
// Writes NAME.json and NAME.md.

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { credentialHash, keyHint, newApiKey, serverSecret } from '../../daemon/auth/credentials.ts';
import { TokenSeal, tokenOwner } from '../../daemon/auth/sealed-token.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { syncPermissions } from '../../daemon/permissions/permission-sync.ts';
import { silentLogger } from '../../daemon/runtime/logger.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { corpusIdentifiers, drawSets } from './identifiers.ts';
import { environment } from './machine.ts';
import { median, quantile } from './percentiles.ts';
import { serveUntilReady } from './serve-ready.ts';
import { seededRandom } from './stats.ts';
import { stopServer } from './load.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Run {
  mode: 'all' | 'code-host';
  scenario: 'every' | 'tenth' | '-';
  p50: number;
  p90: number;
  p99: number;
  /** The daemon's own time (stats.duration), median. */
  serverP50: number;
  files: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, key: string, body: string): Promise<{ ms: number; json: { stats?: { duration?: number }; files?: unknown[] } }> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode !== 200) fail(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
          else done({ ms, json: JSON.parse(text) });
        });
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

const searchBody = (query: string) => JSON.stringify({ query, matches: 100, contextLines: 0, isCaseSensitivityEnabled: true });

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      repos: { type: 'string' },
      members: { type: 'string', default: '1000' },
      queries: { type: 'string', default: '300' },
      rounds: { type: 'string', default: '3' },
      'sync-repos': { type: 'string', default: '2000' },
      out: { type: 'string' },
    },
  });
  if (values.repos === undefined) throw new Error('--repos DIR: a directory of git repositories');
  const members = Number(values.members);
  const queries = Number(values.queries);
  const work = mkdtempSync(join(tmpdir(), 'trawl-permissions-bench-'));
  const log = (s: string) => process.stderr.write(`${s}\n`);
  try {
    const searchPart = await searchOverhead({ repos: resolve(values.repos), members, queries, rounds: Number(values.rounds), work, log });
    const syncPart = await syncCost({ repos: Number(values['sync-repos']), members, work, log });
    const result = { environment: environment(ROOT), members, queries, ...searchPart, sync: syncPart };
    const md = report(result);
    process.stdout.write(md);
    if (values.out) {
      writeFileSync(`${values.out}.json`, `${JSON.stringify(result, null, 2)}\n`);
      writeFileSync(`${values.out}.md`, md);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function searchOverhead(o: { repos: string; members: number; queries: number; rounds: number; work: string; log: (s: string) => void }) {
  const dataDir = join(o.work, 'data');
  const syncConfig = join(o.work, 'sync.json');
  writeFileSync(
    syncConfig,
    JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: `${o.repos}/*`, visibility: 'private' } } }),
  );
  o.log(`sync of ${o.repos} ...`);
  const syncStarted = performance.now();
  execFileSync(process.execPath, [join(ROOT, 'bin', 'trawl.js'), 'sync', '--config', syncConfig, '--data-dir', dataDir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const syncSeconds = (performance.now() - syncStarted) / 1000;
  const store = openStore(dataDir);
  const keys: string[] = [];
  const userIds: string[] = [];
  let repoIds: number[];
  try {
    const repos = await store.listRepos();
    repoIds = repos.map((r) => r.repoId);
    if (repos.some((r) => r.visibility !== 'private')) throw new Error('the repositories were indexed as public');
    const secret = serverSecret(dataDir);
    const now = new Date().toISOString();
    for (let i = 0; i < o.members; i++) {
      const user = await store.createUser({ email: `m${i}@example.com`, name: `m${i}`, role: 'member' }, now);
      const key = newApiKey();
      await store.createApiKey({ userId: user.id, name: 'bench', hash: credentialHash(secret, key), hint: keyHint(key) }, now);
      keys.push(key);
      userIds.push(user.id);
    }
    await writeRows(store, userIds, repoIds, 1);
  } finally {
    await store.close();
  }
  o.log(`${repoIds.length} repositories, ${o.members} members`);
  const identifiers = corpusIdentifiers(o.repos, { maxFiles: 6000 });
  const drawn = drawSets(identifiers, { warm: { count: o.members }, timed: { count: o.queries } }, 20261128);
  const configs = {
    all: join(o.work, 'all.json'),
    'code-host': join(o.work, 'code-host.json'),
  };
  for (const [mode, path] of Object.entries(configs))
    writeFileSync(path, JSON.stringify({ settings: { permissions: mode, symbols: false, rateLimit: { requestsPerDay: 100_000_000 } } }));
  const runs: Run[] = [];
  const byQuery = new Map<string, number[]>();
  const measure = async (mode: Run['mode'], scenario: Run['scenario']) => {
    const cwd = mkdtempSync(join(o.work, 'cwd-'));
    const ready = await serveUntilReady({ root: ROOT, dataDir, config: configs[mode], cwd });
    try {
      const url = `${ready.server.url}/api/search`;
      for (let i = 0; i < o.members; i++) await post(url, keys[i]!, searchBody(drawn.warm[i % drawn.warm.length]!.name));
      const ms: number[] = [];
      const server: number[] = [];
      let files = 0;
      for (let i = 0; i < drawn.timed.length; i++) {
        const q = drawn.timed[i]!.name;
        const { ms: t, json } = await post(url, keys[(i * 7) % o.members]!, searchBody(q));
        ms.push(t);
        // stats.duration is in nanoseconds.
        server.push((json.stats?.duration ?? Number.NaN) / 1e6);
        files += json.files?.length ?? 0;
        const k = `${mode}/${scenario}`;
        byQuery.set(`${k}\n${q}`, [...(byQuery.get(`${k}\n${q}`) ?? []), t]);
      }
      const run: Run = {
        mode,
        scenario,
        p50: median(ms),
        p90: quantile(ms, 0.9),
        p99: quantile(ms, 0.99),
        serverP50: median(server.filter((x) => Number.isFinite(x))),
        files,
      };
      o.log(`${mode} ${scenario}: p50 ${run.p50.toFixed(3)} ms, p99 ${run.p99.toFixed(2)} ms, files ${files}`);
      runs.push(run);
    } finally {
      await stopServer(ready.server);
    }
  };
  for (let round = 0; round < o.rounds; round++) {
    await measure('all', '-');
    await measure('code-host', 'every');
  }
  // The realistic case: each member's hosts allow a random tenth of the repositories.
  const again = openStore(dataDir);
  try {
    await writeRows(again, userIds, repoIds, 0.1);
  } finally {
    await again.close();
  }
  for (let round = 0; round < o.rounds; round++) await measure('code-host', 'tenth');
  // Paired per query: code-host (every) minus all, each query's two runs averaged.
  const diffs: number[] = [];
  for (const { name } of drawn.timed) {
    const a = byQuery.get(`all/-\n${name}`) ?? [];
    const c = byQuery.get(`code-host/every\n${name}`) ?? [];
    if (a.length > 0 && c.length > 0) diffs.push(mean(c) - mean(a));
  }
  return { repositories: repoIds.length, syncSeconds, runs, pairedDiffP50: median(diffs) };
}

function mean(xs: number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/** Each member's account-driven rows: every repository with probability `share`. */
async function writeRows(store: Store, userIds: string[], repoIds: number[], share: number): Promise<void> {
  const random = seededRandom(7);
  const now = new Date().toISOString();
  for (const userId of userIds) {
    await store.permissions.replaceAccountRepos(userId, 'hosted', share >= 1 ? repoIds : repoIds.filter(() => random() < share), now);
  }
}

/** The permission sync of `members` x `repos` against the fake GitHub in a child process. */
async function syncCost(o: { repos: number; members: number; work: string; log: (s: string) => void }) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'hosts', 'fake-github-process.ts'), String(o.repos), String(o.members)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [url, token] = await new Promise<[string, string]>((done, fail) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^listening (\S+) (\S+)$/m.exec(out);
      if (m) done([m[1]!, m[2]!]);
    });
    child.on('exit', (code) => fail(new Error(`the fake host exited (${code})`)));
  });
  const dir = join(o.work, 'sync-store');
  mkdirSync(dir);
  const store = openStore(dir);
  try {
    const config = parseConfig(JSON.stringify({ settings: { permissions: 'code-host' } }), join(dir, 'trawl.json'));
    config.connections = {
      gh: {
        type: 'github',
        url,
        token: { env: 'BENCH_GH_TOKEN' },
        revisions: { branches: [], tags: [] },
        exclude: { forks: false, archived: false, repos: [] },
        orgs: ['acme'],
        users: [],
        repos: [],
      },
    };
    const connection = await store.upsertConnection('gh', 'github');
    const host = new URL(url).hostname;
    for (let r = 0; r < o.repos; r++) {
      await store.upsertRepo({
        repoName: `${host}/acme/r${r}`,
        displayName: `acme/r${r}`,
        codeHostType: 'github',
        connectionId: connection.id,
        isFork: false,
        isArchived: false,
        visibility: 'private',
      });
    }
    const seal = new TokenSeal(randomBytes(32));
    const now = new Date().toISOString();
    for (let m = 0; m < o.members; m++) {
      const user = await store.createUser({ email: `p${m}@example.com`, name: `p${m}`, role: 'member' }, now);
      await store.permissions.linkAccount(
        {
          userId: user.id,
          connection: 'gh',
          accountId: String(10_000 + m),
          login: `p${m}`,
          sealedToken: seal.seal(`token-p${m}`, tokenOwner(user.id, 'gh')),
          linkedBy: 'sign-in',
        },
        now,
      );
    }
    o.log(`permission sync: ${o.members} members x ${o.repos} repositories ...`);
    const started = performance.now();
    const report = await syncPermissions({
      config,
      store,
      seal,
      log: silentLogger,
      now: () => new Date(),
      hostOptions: { env: { BENCH_GH_TOKEN: token } },
      force: true,
    });
    const seconds = (performance.now() - started) / 1000;
    const c = report.connections[0]!;
    let rows = 0;
    for (let m = 0; m < Math.min(o.members, 50); m++)
      rows += (await store.permissions.permittedRepos((await store.getUserByEmail(`p${m}@example.com`))!.id)).length;
    o.log(`permission sync: ${seconds.toFixed(1)} s`);
    return {
      members: o.members,
      repositories: o.repos,
      seconds,
      repositoriesSynced: c.repositories.synced,
      accountsSynced: c.accounts.synced,
      failed: c.repositories.failed + c.accounts.failed,
      meanPermittedOfFirst50: rows / 50,
    };
  } finally {
    await store.close();
    child.kill();
  }
}

function report(r: {
  environment: unknown;
  members: number;
  queries: number;
  repositories: number;
  syncSeconds: number;
  runs: Run[];
  pairedDiffP50: number;
  sync: Record<string, number>;
}): string {
  const lines = [
    '# Permissions: search overhead and sync cost',
    '',
    `Environment: ${JSON.stringify(r.environment)}`,
    '',
    `Search: ${r.repositories} repositories (all private; indexed in ${r.syncSeconds.toFixed(1)} s), ${r.members} members with API keys, ${r.queries} distinct identifiers each sent once per run over HTTP (one connection, members in turn, each member warmed up once on another identifier). Runs alternate.`,
    '',
    '| run | mode | host permissions | p50 ms | p90 ms | p99 ms | daemon p50 ms | files |',
    '|---|---|---|---|---|---|---|---|',
    ...r.runs.map(
      (x, i) =>
        `| ${i + 1} | ${x.mode} | ${x.scenario} | ${x.p50.toFixed(3)} | ${x.p90.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.serverP50.toFixed(3)} | ${x.files} |`,
    ),
    '',
  ];
  const p50 = (mode: string, scenario: string) => median(r.runs.filter((x) => x.mode === mode && x.scenario === scenario).map((x) => x.p50));
  lines.push(
    `Median of the runs' p50: all ${p50('all', '-').toFixed(3)} ms, code-host (every repository permitted) ${p50('code-host', 'every').toFixed(3)} ms: ` +
      `${(p50('code-host', 'every') - p50('all', '-')).toFixed(3)} ms; paired per query (code-host minus all, each query's runs averaged): median ${r.pairedDiffP50.toFixed(3)} ms. ` +
      `A random tenth permitted: ${p50('code-host', 'tenth').toFixed(3)} ms.`,
    '',
    `Sync: ${r.sync.members} members x ${r.sync.repositories} private repositories against the fake GitHub (a child process; each member's own token, each repository readable by a random tenth): ${r.sync.seconds!.toFixed(1)} s; repositories synced ${r.sync.repositoriesSynced}, accounts synced ${r.sync.accountsSynced}, failed ${r.sync.failed}; the first 50 members may read ${r.sync.meanPermittedOfFirst50!.toFixed(0)} repositories on average.`,
    '',
  );
  return lines.join('\n');
}

await main();
