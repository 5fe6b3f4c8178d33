// Files of the data dir that are not what trawl wrote: manifest.json, index-version and a
// lock file each replaced by a link to /dev/zero, a FIFO or a 2 GiB sparse file. A plain
// read of any of them runs until memory is gone (the daemon grows until it aborts) or
// blocks forever (the daemon never listened, `trawl repos` never returned). Read through
// the bounded reader (daemon/bounded-read.ts), the real `trawl serve` starts, keeps its
// memory, leaves out only the repository whose manifest is refused and reports it; the
// real `trawl repos` returns within seconds saying so; the real `trawl index` takes the
// refused lock over as a leftover. TRAWL_FAULTS_FULL=1 adds a directory in their place.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, lutimesSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { call } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/corpus.ts';
import { procStats } from '../helpers/proc.ts';
import { TRAWL } from '../helpers/trawl-cli.ts';

const FULL = process.env.TRAWL_FAULTS_FULL === '1';
const MiB = 1024;
/** What a damaged data dir may cost a process over an intact one, in KiB of resident memory. */
const RSS_MARGIN_KB = 100 * MiB;
/** Past this a process is killed, sparing the machine (the test then fails). */
const RSS_KILL_KB = 1536 * MiB;
/** Generous bounds: a process that blocked or ran away is stopped there. */
const SERVE_MS = 20_000;
const COMMAND_MS = 15_000;
const FILES = 4;

type Victim = 'alpha' | 'beta' | 'gamma';

interface Kind {
  name: string;
  make(path: string): void;
  /** What `trawl repos` says of the refused manifest. */
  reason: RegExp;
  /** A lock of this kind cannot be taken over (a directory cannot be unlinked): `trawl index` says so at once. */
  lockRefused?: true;
}

const KINDS: Kind[] = [
  {
    name: 'a link to /dev/zero',
    make: (p) => symlinkSync('/dev/zero', p),
    reason: /manifest\.json is not a regular file \(a symbolic link to a character device\)/,
  },
  { name: 'a FIFO', make: (p) => assert.equal(spawnSync('mkfifo', [p]).status, 0, 'mkfifo'), reason: /manifest\.json is not a regular file \(a FIFO\)/ },
  {
    name: 'a 2 GiB sparse file',
    make: (p) => assert.equal(spawnSync('truncate', ['-s', String(2 ** 31), p]).status, 0, 'truncate'),
    reason: /manifest\.json is 2,147,483,648 bytes, over the 67,108,864 bytes a file of its kind may hold/,
  },
  ...(FULL
    ? [{ name: 'a directory', make: (p: string) => mkdirSync(p), reason: /manifest\.json is not a regular file \(a directory\)/, lockRefused: true as const }]
    : []),
];

let root: { path: string; cleanup(): void };
let template: string;
const sources = {} as Record<Victim, string>;
const ids = {} as Record<Victim, number>;
/** What the intact data dir gives: the hits of "needle", and each process's peak memory. */
let intact: Exercise;

before(async () => {
  root = tempDir('unbounded');
  template = join(root.path, 'template');
  for (const name of ['alpha', 'beta', 'gamma'] as const) {
    sources[name] = join(root.path, 'dirs', name);
    mkdirSync(sources[name], { recursive: true });
    for (let i = 0; i < FILES; i++) writeFileSync(join(sources[name], `${name}${i}.txt`), `needle of ${name} ${i}\n`);
    ids[name] = (await indexLocal(sources[name], { dataDir: template, symbols: false, workers: 1 })).repoId;
  }
  intact = await exercise(copy('intact'), undefined);
});

after(() => root.cleanup());

function copy(name: string): string {
  const data = join(root.path, name);
  cpSync(template, data, { recursive: true });
  return data;
}

/** A trawl process whose resident memory is sampled all along (and capped: RSS_KILL_KB). */
interface Watched {
  /** Resolves with the address once `trawl serve` listens; rejects when it exits or blocks first. */
  listening: Promise<string>;
  exit: Promise<{ code: number | null; stdout: string; stderr: string; ms: number; peakKb: number; killed?: string }>;
  /** SIGTERM: a daemon drains and exits. */
  stop(): void;
  /** SIGKILL: a process blocked in a read cannot handle SIGTERM. */
  kill(): void;
  peakKb(): number;
}

function watched(args: string[], limitMs: number): Watched {
  const started = performance.now();
  const env = { ...process.env };
  delete env.TRAWL_CONFIG;
  delete env.TRAWL_DATA_DIR;
  const child = spawn(process.execPath, [TRAWL, ...args], { cwd: root.path, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let peak = 0;
  let killed: string | undefined;
  const kill = (why: string) => {
    killed ??= why;
    child.kill('SIGKILL');
  };
  const sample = setInterval(() => {
    try {
      peak = Math.max(peak, procStats(child.pid!).rssKb);
    } catch {
      return; // exited between two samples
    }
    if (peak > RSS_KILL_KB) kill(`resident memory passed ${RSS_KILL_KB / MiB} MiB`);
  }, 20);
  const timer = setTimeout(() => kill(`still running after ${limitMs} ms`), limitMs);
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exit = new Promise<Awaited<Watched['exit']>>((resolve) =>
    child.on('close', (code) => {
      clearInterval(sample);
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started, peakKb: peak, ...(killed ? { killed } : {}) });
    }),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stderr.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exit.then((e) =>
      reject(
        new Error(
          `trawl ${args[0]} ended before listening (${e.killed ?? `exit ${e.code}`}; peak ${Math.round(e.peakKb / MiB)} MiB): ${e.stderr.slice(0, 500)}`,
        ),
      ),
    );
  });
  listening.catch(() => {}); // a command never listens; a daemon's caller awaits it
  return { listening, exit, stop: () => child.kill('SIGTERM'), kill: () => child.kill('SIGKILL'), peakKb: () => peak };
}

/** A command to its end: exit `code` (0), within COMMAND_MS, under the memory cap. */
async function command(args: string[], code = 0): Promise<{ stdout: string; stderr: string; peakKb: number; ms: number }> {
  const r = await watched(args, COMMAND_MS).exit;
  assert.equal(r.killed, undefined, `trawl ${args.join(' ')}: ${r.killed} (peak ${Math.round(r.peakKb / MiB)} MiB)`);
  assert.equal(r.code, code, `trawl ${args.join(' ')}: ${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr, peakKb: r.peakKb, ms: r.ms };
}

interface Hit {
  repository: string;
  path: string;
}

async function search(url: string): Promise<{ hits: Hit[]; exhaustive: boolean; crashes: number }> {
  const r = await call(`${url}/api/search`, { json: { query: 'needle', matches: 1000, contextLines: 0 } });
  assert.equal(r.status, 200, r.text);
  const hits = (r.json.files as Array<{ repository: string; fileName: { text: string } }>).map((f) => ({ repository: f.repository, path: f.fileName.text }));
  hits.sort((a, b) => (`${a.repository}/${a.path}` < `${b.repository}/${b.path}` ? -1 : 1));
  return { hits, exhaustive: r.json.isSearchExhaustive, crashes: r.json.stats.crashes };
}

interface Exercise {
  hits: Hit[];
  serveKb: number;
  reposKb: number;
  indexKb: number;
  reposMs: number;
}

/**
 * Runs the daemon over `data` and, beside it, `trawl repos` and `trawl index` of beta.
 * With `kind`, alpha's manifest, index-version and beta's lock are `kind` (the lock dated
 * as a leftover of long ago).
 */
async function exercise(data: string, kind: Kind | undefined): Promise<Exercise> {
  const lock = join(shardsDir(data, ids.beta), 'lock');
  if (kind) {
    const manifest = join(shardsDir(data, ids.alpha), 'manifest.json');
    rmSync(manifest);
    kind.make(manifest);
    rmSync(join(data, 'index-version'));
    kind.make(join(data, 'index-version'));
    kind.make(lock);
    const old = new Date(Date.now() - 60_000);
    lutimesSync(lock, old, old);
  }
  const serve = watched(['serve', '--port', '0', '--workers', '1', '--data-dir', data], SERVE_MS + COMMAND_MS * 2);
  let deadline: NodeJS.Timeout | undefined;
  try {
    const url = await Promise.race([
      serve.listening,
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () =>
            reject(
              new Error(`trawl serve did not listen within ${SERVE_MS} ms (peak ${Math.round(serve.peakKb() / MiB)} MiB): a read of the data dir blocked`),
            ),
          SERVE_MS,
        );
      }),
    ]);
    clearTimeout(deadline);
    const first = await search(url);
    const served: Victim[] = kind ? ['beta', 'gamma'] : ['alpha', 'beta', 'gamma'];
    if (kind) {
      assert.deepEqual(
        first.hits,
        intact.hits.filter((h) => h.repository !== 'alpha'),
        'beta and gamma answer as before, alpha not at all',
      );
      assert.equal(first.exhaustive, false, 'a search that leaves a repository out is not exhaustive');
      assert.ok(first.crashes >= 1, 'the left-out repository is counted');
    } else {
      assert.deepEqual([...new Set(first.hits.map((h) => h.repository))], served);
      assert.equal(first.exhaustive, true);
    }
    const listed = await call(`${url}/api/repos`);
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.json.map((r: { repoName: string }) => r.repoName).sort(), served);

    const repos = await command(['repos', '--data-dir', data]);
    const line = (name: Victim) => repos.stdout.split('\n').find((l) => l.split(/\s+/)[1] === name) ?? '';
    if (kind) {
      assert.match(line('alpha'), /damaged \(not served\)/, repos.stdout);
      assert.match(line('alpha'), kind.reason);
    }
    for (const name of served) assert.match(line(name), /\bindexed\b/, repos.stdout);

    // The refused lock is a leftover: taken over, the run completes and releases it.
    const indexArgs = ['index', sources.beta, '--data-dir', data, '--no-symbols', '--workers', '1'];
    if (kind?.lockRefused) {
      const refused = await command(indexArgs, 1);
      assert.equal(refused.stderr, `trawl: ${lock} is a directory, not a lock file; remove it\n`);
      // What an operator then removes; a directory at index-version would stop the run's
      // bump next (a write, refused by the system with the path named).
      rmSync(lock, { recursive: true });
      rmSync(join(data, 'index-version'), { recursive: true });
    }
    const index = await command(indexArgs);
    assert.match(index.stdout, /indexed beta/);
    assert.equal(existsSync(lock), false, 'the lock is released');
    // Its commit replaced index-version: the daemon, reading it again, still serves the same.
    assert.match(readFileSync(join(data, 'index-version'), 'utf8'), /^\d+-[0-9a-f]+\n$/);
    const again = await search(url);
    assert.deepEqual(again.hits, first.hits, 'after the re-index of beta the answer is the same');

    serve.stop();
    const end = await serve.exit;
    assert.equal(end.killed, undefined, `trawl serve: ${end.killed}`);
    if (kind) {
      const damaged = end.stdout.split('\n').filter((l) => l.includes('repository index is damaged'));
      assert.equal(damaged.length, 1, `one log line reports alpha:\n${end.stdout}`);
      assert.equal(JSON.parse(damaged[0]!).repoId, ids.alpha);
    }
    return { hits: first.hits, serveKb: end.peakKb, reposKb: repos.peakKb, indexKb: index.peakKb, reposMs: repos.ms };
  } finally {
    clearTimeout(deadline);
    serve.kill(); // exited already unless an assertion failed
    await serve.exit;
  }
}

for (const kind of KINDS) {
  test(`manifest.json, index-version and a lock file as ${kind.name}: bounded memory, the others answer, trawl repos reports it at once`, async (t) => {
    const got = await exercise(copy(`damaged-${KINDS.indexOf(kind)}`), kind);
    const mb = (kb: number) => `${Math.round(kb / MiB)} MiB`;
    t.diagnostic(
      `peak RSS, intact -> damaged: trawl serve ${mb(intact.serveKb)} -> ${mb(got.serveKb)}, trawl repos ${mb(intact.reposKb)} -> ${mb(got.reposKb)} (${Math.round(got.reposMs)} ms), trawl index ${mb(intact.indexKb)} -> ${mb(got.indexKb)}`,
    );
    assert.ok(got.serveKb < intact.serveKb + RSS_MARGIN_KB, `trawl serve peaked at ${mb(got.serveKb)}, ${mb(intact.serveKb)} over an intact data dir`);
    assert.ok(got.reposKb < intact.reposKb + RSS_MARGIN_KB, `trawl repos peaked at ${mb(got.reposKb)}, ${mb(intact.reposKb)} over an intact data dir`);
    assert.ok(got.indexKb < intact.indexKb + RSS_MARGIN_KB, `trawl index peaked at ${mb(got.indexKb)}, ${mb(intact.indexKb)} over an intact data dir`);
  });
}
