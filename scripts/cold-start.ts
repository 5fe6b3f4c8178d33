// `node --import tsx scripts/cold-start.ts ROOT DATA_DIR CORPUS [OUT.json]`: how a daemon
// answers its first searches with the page cache cold and warm, for a trawl checkout at ROOT
// serving DATA_DIR (an index of the tree CORPUS, whose identifiers make the queries). Run it
// for two checkouts back to back on the same index to compare them; it prints one line per
// figure and writes them all as JSON to OUT.
//
// For each of `cold` and `warm`: the daemon is started and waited for (/api/health); then,
// cold: the page cache is dropped (`echo 3 > /proc/sys/vm/drop_caches`: run as root; it
// drops every process's cached files, not only the index's); warm: every file of the data
// dir is read once. Then:
//   first    one identifier's search: what the first caller after a start waits
//   next     200 further distinct identifiers, each sent once by one client (latency)
// The identifiers are scripts/hostile-load.ts's (the same 400, in its order): the cold run's
// next 200 are its `idle` ones, the warm run takes the other 198; each run's first is one
// of neither. Every figure is wall-clock: run it on an otherwise idle machine.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readSync, openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, stopServer, waitHealthy } from '../bench/suite/load.ts';
import { quantile } from '../bench/suite/percentiles.ts';
import { corpusIdentifiers, drawSets } from '../bench/suite/identifiers.ts';

const args = process.argv.slice(2);
if (args.length < 3) throw new Error('usage: cold-start.ts ROOT DATA_DIR CORPUS [OUT.json]');
const [root, dataDir, corpus] = args.slice(0, 3).map((p) => resolve(p));
const out = args[3];
const cwd = join(tmpdir(), `trawl-cold-start-${process.pid}`);
mkdirSync(cwd, { recursive: true });
const config = join(cwd, 'trawl.json');
writeFileSync(config, JSON.stringify({ settings: { anonymousAccess: true, rateLimit: { requestsPerDay: 1_000_000_000, store: 'embedded' } } }));

/** Distinct identifiers of the corpus, drawn as the bench draws its held-out ones (bench/suite/identifiers.ts), in a fixed pseudo-random order. */
function identifiers(n: number): string[] {
  return drawSets(corpusIdentifiers(corpus!), { picked: { count: n } }, 56).picked.map((i) => i.name);
}

interface Answer {
  query: string;
  status: number;
  ms: number;
  crashes: number;
  /** What the search read: documents and KB of content and of index. */
  read: string;
}

async function search(url: string, query: string): Promise<Answer> {
  const t = performance.now();
  try {
    const res = await fetch(`${url}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, matches: 100 }),
    });
    const body = (await res.json()) as { stats?: { crashes?: number; filesLoaded?: number; contentBytesLoaded?: number; indexBytesLoaded?: number } };
    const st = body.stats ?? {};
    const read = `${st.filesLoaded} docs, ${Math.round((st.contentBytesLoaded ?? 0) / 1024)} KB content, ${Math.round((st.indexBytesLoaded ?? 0) / 1024)} KB index`;
    return { query, status: res.status, ms: performance.now() - t, crashes: st.crashes ?? 0, read };
  } catch {
    return { query, status: 0, ms: performance.now() - t, crashes: 0, read: '' };
  }
}

/** Reads every file under `dir` once (what "warm" means here). */
function readAll(dir: string): void {
  const buf = Buffer.alloc(1 << 20);
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const fd = openSync(join(e.parentPath, e.name), 'r');
    try {
      while (readSync(fd, buf, 0, buf.length, null) > 0);
    } finally {
      closeSync(fd);
    }
  }
}

const r1 = (x: number) => Math.round(x * 10) / 10;
const stats = (xs: number[]) => ({
  n: xs.length,
  p50: r1(quantile(xs, 0.5)),
  p90: r1(quantile(xs, 0.9)),
  p99: r1(quantile(xs, 0.99)),
  max: r1(Math.max(...xs)),
});

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

try {
  for (const [k, mode] of (['cold', 'warm'] as const).entries()) {
    const mine = k === 0 ? [ids[399]!, ...ids.slice(0, 200)] : [ids[398]!, ...ids.slice(200, 398)];
    if (mode === 'warm') readAll(dataDir!);
    const server = await startServer(
      'trawl',
      [join(root!, 'bin', 'trawl.js'), 'serve', '--config', config, '--data-dir', dataDir!, '--port', '0', '--log-level', 'warn'],
      cwd,
    );
    try {
      await waitHealthy(server.url);
      if (mode === 'cold') {
        execFileSync('sync');
        writeFileSync('/proc/sys/vm/drop_caches', '3\n');
      }
      const first = await search(server.url, mine[0]!);
      const next: Answer[] = [];
      for (const id of mine.slice(1)) next.push(await search(server.url, id));
      const statuses = [...new Set([first, ...next].map((a) => a.status))];
      const crashes = [first, ...next].reduce((n, a) => n + a.crashes, 0);
      const slowest = [...next]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3)
        .map((a) => `${a.query} ${r1(a.ms)} ms (${a.read})`);
      print(mode, { firstMs: r1(first.ms), next: stats(next.map((a) => a.ms)), statuses, crashes, slowest });
      if (crashes > 0) console.log(server.stderr());
    } finally {
      await stopServer(server);
    }
  }
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
