// The watches' phase of `trawl bench webhooks` (webhook-bench.ts): --watches watches, each
// on an identifier no repository holds yet, all POSTing to a receiver in this process.
//
// 1. Made through POST /api/watches by an owner (a key made with the CLI's commands): how
//    long the making took.
// 2. Push to delivered, --pushes times: a line holding one watch's identifier committed to a
//    changed repository, its notice sent to the git route, timed until that watch's POST
//    arrives here.
// 3. The cost to the sync, --pushes times: a line for one watch committed, the repository
//    synced with POST /api/repos/{id}/sync?wait=true (its `seconds`: the fetch and the
//    build), then its POST awaited; the watches' check time is read from the daemon's
//    metrics (trawl_watch_check_seconds) before and after, and the searches they ran
//    (trawl_watch_searches_total).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { commitOneLine } from './many-repos-setup.ts';
import { median, quantile } from './percentiles.ts';

/** What the phase needs of the daemon: its URL, and a notice for a repository sent to the git route (202 expected). */
export interface WatchTarget {
  url: string;
  notify(repo: string): Promise<void>;
}

export interface WatchPhaseResult {
  watches: number;
  createSeconds: number;
  pushToDelivered: { pushes: number; p50: number; p90: number; max: number; samplesMs: number[] };
  cost: {
    pushes: number;
    syncSeconds: number;
    checkSeconds: number;
    checkVsSync: number;
    /** The median over the pushes of each one's checks against its sync. */
    medianCheckVsSync: number;
    watchSearches: number;
    checks: number;
    /** Of checkSeconds: reading the changes (from the index, or git), and the watches' searches. */
    changeSeconds: number;
    searchSeconds: number;
    /** Repositories' changes read from the index held since the check before, from git, and not at all (trawl_watch_changes_read_total). */
    changesRead: { index: number; git: number; unread: number };
    /**
     * The merges of compound shards that followed the syncs (trawl_compound_shard_merge_seconds;
     * 0 when the repositories are too large to be packed), and the checks against the syncs and
     * those merges together: all the indexing a push caused, which the check waits for.
     */
    mergeSeconds: number;
    checkVsIndexing: number;
    medianCheckVsIndexing: number;
  };
}

const ms2 = (x: number) => Math.round(x * 100) / 100;
/** How often the daemon's metrics are read while a check may still be running. */
const CHECK_POLL_MS = 50;

/** The daemon's count of the changes its checks read, by where from. */
async function changesRead(url: string): Promise<{ index: number; git: number; unread: number }> {
  const from = (where: string) => metric(url, `trawl_watch_changes_read_total{from="${where}"}`);
  return { index: await from('index'), git: await from('git'), unread: await from('unread') };
}

/** An owner's API key, made in the data dir's store with the CLI's own commands. */
async function ownerKey(dataDir: string): Promise<string> {
  const out: string[] = [];
  const io = { out: (l: string) => void out.push(l), err: (l: string) => void process.stderr.write(`${l}\n`), now: () => new Date() };
  const where = ['--data-dir', dataDir];
  if ((await usersCommand(['add', '--email', 'bench-watches@example.com', '--role', 'owner', ...where], io)) !== 0) throw new Error('trawl users add failed');
  if ((await keysCommand(['create', '--user', 'bench-watches@example.com', ...where], io)) !== 0) throw new Error('trawl keys create failed');
  return out.at(-1)!;
}

/** A receiver of the watches' POSTs: the time each watch's first POST arrived. */
async function receiver(): Promise<{ url: string; arrived: Map<number, number>; close(): Promise<void> }> {
  const arrived = new Map<number, number>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { watch: { id: number } };
      if (!arrived.has(body.watch.id)) arrived.set(body.watch.id, at);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/watch`,
    arrived,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await fetch(new URL(path, url), {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
  return text === '' ? undefined : JSON.parse(text);
}

/** A metric's value from the daemon's /metrics (a counter, or a histogram's _sum or _count). */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

async function until(what: string, check: () => boolean, maxMs: number): Promise<void> {
  const end = performance.now() + maxMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function watchPhase(
  t: WatchTarget,
  s: { dataDir: string; reposDir: string; changed: readonly string[] },
  o: { watches: number; pushes: number },
  random: () => number,
  log: (s: string) => void,
): Promise<WatchPhaseResult> {
  const key = await ownerKey(s.dataDir);
  const hook = await receiver();
  try {
    const tokens: string[] = [];
    const ids: number[] = [];
    const made = performance.now();
    for (let i = 0; i < o.watches; i++) {
      const token = `trawl_watch_${i}_${Math.floor(random() * 2 ** 32).toString(16)}`;
      const w = (await api(t.url, key, 'POST', '/api/watches', { name: `bench ${i}`, query: token, isCaseSensitivityEnabled: true, url: hook.url })) as {
        id: number;
      };
      tokens.push(token);
      ids.push(w.id);
    }
    const createSeconds = (performance.now() - made) / 1000;
    log(`watches: ${o.watches} made in ${createSeconds.toFixed(1)} s`);
    let next = 0;
    const commitFor = async (k: number): Promise<{ repo: string; id: number }> => {
      const i = next++ % o.watches;
      const repo = s.changed[k % s.changed.length]!;
      await commitOneLine(join(s.reposDir, repo), tokens[i]!);
      return { repo, id: ids[i]! };
    };
    const delivered: number[] = [];
    for (let k = 0; k < o.pushes; k++) {
      const { repo, id } = await commitFor(k);
      const started = performance.now();
      await t.notify(repo);
      await until(`watch ${id} delivered`, () => hook.arrived.has(id), 60_000);
      delivered.push(hook.arrived.get(id)! - started);
    }
    log(`watches: push to delivered p50 ${median(delivered).toFixed(0)} ms, max ${Math.max(...delivered).toFixed(0)} ms (${o.pushes} pushes)`);
    const repos: Array<{ repoId: number; repoName: string }> = [];
    for (let page = 1; ; page++) {
      const got = (await api(t.url, key, 'GET', `/api/repos?perPage=100&page=${page}`)) as Array<{ repoId: number; repoName: string }>;
      repos.push(...got);
      if (got.length < 100) break;
    }
    const idOf = (repo: string) => repos.find((r) => r.repoName === repo || r.repoName.endsWith(`/${repo}`))?.repoId;
    const before = {
      sum: await metric(t.url, 'trawl_watch_check_seconds_sum'),
      count: await metric(t.url, 'trawl_watch_check_seconds_count'),
      searches: await metric(t.url, 'trawl_watch_searches_total'),
      change: await metric(t.url, 'trawl_watch_check_part_seconds_total{part="change"}'),
      search: await metric(t.url, 'trawl_watch_check_part_seconds_total{part="search"}'),
      reads: await changesRead(t.url),
    };
    const merges = () => metric(t.url, 'trawl_compound_shard_merge_seconds_sum');
    const mergedBefore = await merges();
    let syncSeconds = 0;
    /** Per push: its checks' seconds over its sync's (a pause of the process, a collection, lands on one push, not on the median). */
    const ratios: number[] = [];
    const indexingRatios: number[] = [];
    for (let k = 0; k < o.pushes; k++) {
      const { repo, id } = await commitFor(k + o.pushes);
      const repoId = idOf(repo);
      if (repoId === undefined) throw new Error(`${repo}: not listed by GET /api/repos`);
      const was = {
        sum: await metric(t.url, 'trawl_watch_check_seconds_sum'),
        count: await metric(t.url, 'trawl_watch_check_seconds_count'),
        merged: await merges(),
      };
      const r = (await api(t.url, key, 'POST', `/api/repos/${repoId}/sync?wait=true`)) as { seconds: number; outcome: string };
      if (r.outcome !== 'indexed') throw new Error(`sync of ${repo}: ${r.outcome}`);
      syncSeconds += r.seconds;
      await until(`watch ${id} delivered`, () => hook.arrived.has(id), 60_000);
      // The check that recorded the change may still be ending when its POST arrives. Asked
      // every CHECK_POLL_MS, not more often: each GET /metrics runs on the daemon's main
      // thread, between the check's own steps, and was counted in its time.
      let count = was.count;
      for (const end = performance.now() + 10_000; count === was.count && performance.now() < end; ) {
        await new Promise((resolveWait) => setTimeout(resolveWait, CHECK_POLL_MS));
        count = await metric(t.url, 'trawl_watch_check_seconds_count');
      }
      // (The check runs once the merge after the sync has ended: its figure is in by now.)
      const checked = (await metric(t.url, 'trawl_watch_check_seconds_sum')) - was.sum;
      ratios.push(checked / r.seconds);
      indexingRatios.push(checked / (r.seconds + (await merges()) - was.merged));
    }
    const checkSeconds = (await metric(t.url, 'trawl_watch_check_seconds_sum')) - before.sum;
    const mergeSeconds = (await merges()) - mergedBefore;
    const cost = {
      pushes: o.pushes,
      syncSeconds: ms2(syncSeconds),
      checkSeconds: Math.round(checkSeconds * 10_000) / 10_000,
      checkVsSync: Math.round((checkSeconds / syncSeconds) * 10_000) / 10_000,
      medianCheckVsSync: Math.round(median(ratios) * 10_000) / 10_000,
      watchSearches: (await metric(t.url, 'trawl_watch_searches_total')) - before.searches,
      checks: (await metric(t.url, 'trawl_watch_check_seconds_count')) - before.count,
      changeSeconds: Math.round(((await metric(t.url, 'trawl_watch_check_part_seconds_total{part="change"}')) - before.change) * 10_000) / 10_000,
      searchSeconds: Math.round(((await metric(t.url, 'trawl_watch_check_part_seconds_total{part="search"}')) - before.search) * 10_000) / 10_000,
      changesRead: await changesRead(t.url).then((now) => ({
        index: now.index - before.reads.index,
        git: now.git - before.reads.git,
        unread: now.unread - before.reads.unread,
      })),
      mergeSeconds: Math.round(mergeSeconds * 10_000) / 10_000,
      checkVsIndexing: Math.round((checkSeconds / (syncSeconds + mergeSeconds)) * 10_000) / 10_000,
      medianCheckVsIndexing: Math.round(median(indexingRatios) * 10_000) / 10_000,
    };
    log(
      `watches: checks took ${(checkSeconds * 1000).toFixed(1)} ms over ${cost.checks} checks (reading the changes ${(cost.changeSeconds * 1000).toFixed(1)} ms: ${cost.changesRead.index} from the index, ${cost.changesRead.git} from git, ${cost.changesRead.unread} unread; searches ${(cost.searchSeconds * 1000).toFixed(1)} ms) against ${syncSeconds.toFixed(2)} s of syncs: ${(cost.checkVsSync * 100).toFixed(2)} %, per push at the median ${(cost.medianCheckVsSync * 100).toFixed(2)} % (${cost.watchSearches} watch searches)`,
    );
    log(
      `watches: the merges of compound shards after the syncs took ${(mergeSeconds * 1000).toFixed(1)} ms: the checks against the syncs and merges ${(cost.checkVsIndexing * 100).toFixed(2)} %, per push at the median ${(cost.medianCheckVsIndexing * 100).toFixed(2)} %`,
    );
    return {
      watches: o.watches,
      createSeconds: ms2(createSeconds),
      pushToDelivered: {
        pushes: o.pushes,
        p50: ms2(median(delivered)),
        p90: ms2(quantile(delivered, 0.9)),
        max: ms2(Math.max(...delivered)),
        samplesMs: delivered.map(ms2),
      },
      cost,
    };
  } finally {
    await hook.close();
  }
}
