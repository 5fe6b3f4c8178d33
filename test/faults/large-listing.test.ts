// Whole-repository answers against a real `trawl serve` process: a generated repository of
// many small files, served from git and, as a plain directory, from its index. While 30
// requests for its whole file list (POST /api/files) and for its tree with every directory
// expanded (POST /api/tree) run at once, /api/health is polled from a thread of its own:
// the daemon keeps answering it (the listings are built once per revision, in time
// slices, and written as the sockets take them), and every answer is byte for byte what a
// straightforward listing of `git ls-tree` gives.
//
// 20,000 files by default; TRAWL_FAULTS_FULL=1 runs 80,000.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { serve, stop } from '../helpers/serve.ts';

const TRAWL = join(import.meta.dirname, '..', '..', 'bin', 'trawl.js');
const FULL = process.env.TRAWL_FAULTS_FULL === '1';

/** 20 top directories × MIDDLE × FILES_PER_DIR files: the leaf directories (at most 1000, /api/tree's limit) are every directory there is to expand. */
const MIDDLE = FULL ? 50 : 25;
const FILES_PER_DIR = FULL ? 80 : 40;
const REQUESTS = 30;
/** The worst /api/health latency allowed while the listings run: generous for a loaded 2-core machine. */
const HEALTH_BOUND_MS = 100;

interface Node {
  type: 'tree' | 'blob';
  path: string;
  name: string;
  children: Node[];
}

test(`whole-repository listings of ${20 * MIDDLE * FILES_PER_DIR} files: /api/health keeps answering, the answers are exact`, async (t) => {
  const dir = tempDir('large-listing');
  let child: Awaited<ReturnType<typeof serve>>['child'] | undefined;
  try {
    const repoPath = join(dir.path, 'big');
    const leaves: string[] = [];
    for (let a = 0; a < 20; a++) {
      for (let b = 0; b < MIDDLE; b++) {
        const leaf = `subsystem${a}/component_${b}`;
        leaves.push(leaf);
        mkdirSync(join(repoPath, leaf), { recursive: true });
        for (let f = 0; f < FILES_PER_DIR; f++) writeFileSync(join(repoPath, leaf, `source_file_${f}.c`), `int sym_${a}_${b}_${f};\n`);
      }
    }
    // A name that sorts differently as a directory ("sub/") and as a name ("sub-x", "sub.c").
    mkdirSync(join(repoPath, 'sub'), { recursive: true });
    writeFileSync(join(repoPath, 'sub', 'x.c'), 'int x;\n');
    writeFileSync(join(repoPath, 'sub-x'), 'x\n');
    writeFileSync(join(repoPath, 'sub.c'), 'int sub;\n');
    writeFileSync(join(repoPath, 'README.md'), '# big\n');
    // The same files as a directory with no git: served from its index.
    const plainPath = join(dir.path, 'plain');
    cpSync(repoPath, plainPath, { recursive: true });
    git(repoPath, 'init', '-q', '-b', 'main');
    git(repoPath, 'add', '-A');
    git(repoPath, 'commit', '-q', '-m', 'many files');

    const data = join(dir.path, 'data');
    const indexed = spawnSync(process.execPath, [TRAWL, 'index', repoPath, plainPath, '--data-dir', data, '--no-symbols'], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(indexed.status, 0, `trawl index: ${indexed.signal ?? ''} ${indexed.stderr}`);

    // The reference: git's own listing of the commit, in its order (the byte order of paths).
    const paths = git(repoPath, 'ls-tree', '-r', '-z', '--name-only', 'HEAD').split('\0').filter((p) => p !== '');
    const expand = [...leaves, 'sub'];
    const expected = {
      files: Buffer.from(JSON.stringify(paths.map((path) => ({ type: 'blob', path, name: path.slice(path.lastIndexOf('/') + 1) })))),
      tree: Buffer.from(JSON.stringify({ tree: referenceTree(paths, expand) })),
    };

    const served = await serve(['--data-dir', data, '--log-level', 'silent'], dir.path);
    child = served.child;
    const url = served.url;

    const poller = healthPoller(url);
    const ask = async (repoName: string, what: 'files' | 'tree'): Promise<{ what: 'files' | 'tree'; status: number; body: Buffer }> => {
      const res = await fetch(`${url}/api/${what}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(what === 'files' ? { repoName } : { repoName, paths: expand }),
        signal: AbortSignal.timeout(120_000),
      });
      return { what, status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };
    const t0 = performance.now();
    let answers: Array<{ what: 'files' | 'tree'; status: number; body: Buffer }>;
    let latencies: number[];
    try {
      await poller.started;
      answers = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => ask(i % 4 < 2 ? 'big' : 'plain', i % 2 === 0 ? 'files' : 'tree')));
    } finally {
      latencies = await poller.stop();
    }
    const ms = performance.now() - t0;
    const worst = Math.max(...latencies);
    const median = [...latencies].sort((a, b) => a - b)[latencies.length >> 1]!;
    t.diagnostic(`${REQUESTS} listings (${paths.length} files; ${expected.files.length} and ${expected.tree.length} bytes) in ${ms.toFixed(0)} ms; /api/health answered ${latencies.length} times, median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms`);

    for (const a of answers) {
      assert.equal(a.status, 200, a.body.toString('utf8', 0, 300));
      assert.ok(a.body.equals(expected[a.what]), `the ${a.what} answer differs from the reference (${a.body.length} vs ${expected[a.what].length} bytes)`);
    }
    assert.ok(latencies.length >= 5, `health polled ${latencies.length} times`);
    assert.ok(worst < HEALTH_BOUND_MS, `worst /api/health latency ${worst.toFixed(0)} ms while the listings ran (bound ${HEALTH_BOUND_MS} ms)`);
  } finally {
    if (child) await stop(child);
    dir.cleanup();
  }
});

/**
 * /api/health polled back to back from a worker thread: this thread reads the listings'
 * megabytes, which must not count as the daemon's latency.
 */
function healthPoller(url: string): { started: Promise<void>; stop(): Promise<number[]> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    let polling = true;
    const latencies = [];
    parentPort.on('message', () => { polling = false; });
    (async () => {
      while (polling) {
        const t0 = performance.now();
        const res = await fetch(workerData + '/api/health', { signal: AbortSignal.timeout(60000) });
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (latencies.length === 1) parentPort.postMessage('started');
        await new Promise((r) => setTimeout(r, 5));
      }
      parentPort.postMessage(latencies);
    })();
    `,
    { eval: true, workerData: url },
  );
  const messages: unknown[] = [];
  const waiting: Array<(m: unknown) => void> = [];
  worker.on('message', (m: unknown) => {
    const w = waiting.shift();
    if (w) w(m);
    else messages.push(m);
  });
  const next = (): Promise<unknown> => (messages.length > 0 ? Promise.resolve(messages.shift()) : new Promise((r) => waiting.push(r)));
  const started = next().then(() => undefined);
  return {
    started,
    async stop() {
      await started;
      worker.postMessage('stop');
      const latencies = (await next()) as number[];
      await worker.terminate();
      return latencies;
    },
  };
}

/**
 * The tree /api/tree answers, from the file list: the root's children, every directory on
 * the way to each of `expand` and each of them expanded; directories first, then files,
 * each by the bytes of its name.
 */
function referenceTree(paths: string[], expand: string[]): Node {
  const children = new Map<string, Map<string, 'tree' | 'blob'>>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 0; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (!children.has(parent)) children.set(parent, new Map());
      children.get(parent)!.set(parts[i]!, i === parts.length - 1 ? 'blob' : 'tree');
    }
  }
  const open = new Set<string>(['']);
  for (const e of expand) {
    const parts = e.split('/');
    for (let i = 1; i <= parts.length; i++) open.add(parts.slice(0, i).join('/'));
  }
  const node = (path: string, name: string, type: 'tree' | 'blob'): Node => {
    const n: Node = { type, path, name, children: [] };
    if (type === 'tree' && open.has(path)) {
      const kids = [...(children.get(path) ?? new Map<string, 'tree' | 'blob'>())].map(([k, kind]) => node(path === '' ? k : `${path}/${k}`, k, kind));
      kids.sort((a, b) => (a.type !== b.type ? (a.type === 'tree' ? -1 : 1) : Buffer.compare(Buffer.from(a.name), Buffer.from(b.name))));
      n.children = kids;
    }
    return n;
  };
  return node('', 'root', 'tree');
}
