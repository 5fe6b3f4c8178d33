// A full disk under the data directory (docs/security-and-faults.md, row 4): a real daemon
// on a small tmpfs of its own, with users, API keys and an index made while there was
// space, then the filesystem filled to the last byte. Searches and reads go on answering
// (the API key's lastUsedAt write and the rate-limit counter's write fail quietly: logged
// once a minute, the request goes on); every write answers 503 SERVICE_UNAVAILABLE saying
// the disk is full (HTTP) or one line on stderr and exit 1 (CLI); an index run and a mirror
// clone that run out of space leave nothing behind and the previous index serves on; the
// database stays consistent; a mirror fetch or clone and a sync pass fail cleanly (the pass
// records the failure and backs off); and once the filler is deleted the same writes
// succeed, without a restart.
// Needs root (mount); skipped otherwise.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { signLicense } from '../../daemon/auth/license.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { isDiskFull } from '../../daemon/errors.ts';
import { named, readAllManifests } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { SyncScheduler } from '../../daemon/sync/scheduler.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { logRecorder } from '../helpers/log-recorder.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';

const TRAWL = join(import.meta.dirname, '..', '..', 'bin', 'trawl.js');
const FULL = /^trawl: the disk of the data directory is full: free some space and retry/;

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const LICENSE = signLicense(
  { id: 'L-disk', licensee: 'Test Org', entitlements: ['oauth', 'scoped-access-tokens'], issuedAt: '2026-01-01T00:00:00Z', expiresAt: '2099-01-01T00:00:00Z' },
  privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);

/** `trawl ARGS --data-dir DIR` as its own process. */
function cli(dataDir: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.TRAWL_CONFIG;
  delete env.TRAWL_DATA_DIR;
  const r = spawnSync(process.execPath, [TRAWL, ...args, '--data-dir', dataDir], { encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file under `dir` (relative paths), the fillers and SQLite's own files left out. */
function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.filter((f) => !/^filler-|^trawl\.db(-wal|-shm)?$/.test(f)).sort();
}

function assertDiskFull(a: Answer, what: string): void {
  assert.equal(a.status, 503, `${what}: ${a.text}`);
  assert.equal(a.json.errorCode, 'SERVICE_UNAVAILABLE', what);
  assert.match(a.json.message, /disk of the data directory is full/, what);
  assert.ok(a.headers.get('retry-after'), `${what}: Retry-After`);
}

test('a full disk: reads go on, writes fail clearly and leave nothing behind, and it recovers', async (t) => {
  const dir = tempDir('disk-full');
  const fs = mountTmpfs(join(dir.path, 'data'), 16);
  if (typeof fs === 'string') {
    dir.cleanup();
    t.skip(fs);
    return;
  }
  let clock = new Date('2026-11-22T10:00:00Z');
  const logger = logRecorder();
  let d: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  try {
    d = await startTestDaemon({
      dataDir: fs.path,
      settings: { anonymousAccess: false },
      config: { license: { publicKeys: [PUBLIC_PEM] } },
      daemon: { now: () => clock, logger },
    });
    const dataDir = fs.path;
    const url = d.url;
    // Users, keys and the license, while there is space.
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => {}, now: () => clock };
    const dd = ['--data-dir', dataDir];
    await usersCommand(['add', '--email', 'ann@example.com', '--role', 'owner', ...dd], io);
    await usersCommand(['add', '--email', 'bob@example.com', ...dd], io);
    await usersCommand(['limit', 'bob@example.com', '1', ...dd], io);
    await keysCommand(['create', '--user', 'ann@example.com', ...dd], io);
    const ann = out.at(-1)!;
    await keysCommand(['create', '--user', 'ann@example.com', '--name', 'second', ...dd], io);
    const ann2 = out.at(-1)!;
    await keysCommand(['create', '--user', 'bob@example.com', ...dd], io);
    const bob = out.at(-1)!;
    const store = openStore(dataDir);
    try {
      await store.putLicense(LICENSE);
    } finally {
      await store.close();
    }
    const as = (key: string) => ({ authorization: `Bearer ${key}` });
    const search = (key: string, query = 'widget_count') => call(`${url}/api/search`, { headers: as(key), json: { query, matches: 10 } });
    const paths = (a: Answer): string[] => (a.json.files as Array<{ fileName: { text: string } }>).map((f) => f.fileName.text).sort();
    const widgets = ((await call(`${url}/api/repos`, { headers: as(ann) })).json as Array<{ repoId: number; repoName: string }>).find(
      (r) => r.repoName === 'widgets',
    )!.repoId;
    const scoped = () => call(`${url}/api/ee/scoped_access_token`, { headers: as(ann), json: { repoIds: [widgets] } });
    const register = () =>
      call(`${url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'agent', redirect_uris: ['http://127.0.0.1:5000/cb'], token_endpoint_auth_method: 'none' }),
      });

    const before = await search(ann);
    assert.equal(before.status, 200, before.text);
    const found = paths(before);
    assert.ok(found.includes('src/widget.c'), found.join());
    assert.equal((await search(bob)).status, 200, "bob's one request of the day");
    assert.equal((await search(bob)).status, 429, 'bob is at his limit');
    // A sync pass of a connection, as the daemon's scheduler runs them.
    const config = parseConfig(JSON.stringify({ connections: { local: { type: 'git', url: d.repoPath } } }), join(dir.path, 'sync.json'));
    const scheduler = new SyncScheduler({ config, dataDir, store: d.daemon.services.store, log: logger, intervalMs: 3_600_000, now: () => clock.getTime() });
    // A mirror, as a connection's remote repository gets one, cloned while there is space.
    const { syncMirror } = await import('../../daemon/repos/mirror.ts');
    const { listRefs } = await import('../../daemon/repos/refs.ts');
    const origin = pathToFileURL(d.repoPath).href;
    const mirror = join(dataDir, 'git', '76.git');
    assert.equal((await syncMirror(origin, mirror)).cloned, true);
    const touchLog = /recording when an API key was last used failed/g;
    const touchFailures = () => logger.text().match(touchLog)?.length ?? 0;

    await t.test('an index run that runs out of space leaves nothing behind; the previous index serves on', () => {
      // The store's writes still fit; the new shards (3 MiB of new files) do not.
      const repo = new TestRepo(d!.repoPath);
      const big: Record<string, string> = {};
      for (let i = 0; i < 3; i++) big[`gen/big${i}.txt`] = `needle_beta ${i}\n${'lorem ipsum dolor sit amet, consectetur adipiscing elit\n'.repeat(18_000)}`;
      repo.commit(big, 'Three big files');
      const kept = files(dataDir);
      fs.fill(512 * 1024);
      t.diagnostic(`free before the index run: ${fs.free()} bytes`);
      const r = cli(dataDir, 'index', d!.repoPath, '--branches', 'dev', '--tags', 'v*');
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, FULL);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one line: ${r.stderr}`);
      assert.deepEqual(files(dataDir), kept, 'no partial shard, temporary or lock file is left');
    });

    await t.test('a sync pass that runs out of space records the failure and backs off', async () => {
      const kept = files(dataDir);
      const report = await scheduler.runNow();
      assert.deepEqual(
        report.repos.map((r) => [r.repoName, r.outcome]),
        [['widgets', 'failed']],
      );
      assert.match(report.repos[0]!.error!, /no space left on device/i);
      const record = (await d!.daemon.services.store.getRepoByName('widgets'))!;
      assert.equal(record.state, 'failed');
      assert.equal(record.nextAttemptAt, new Date(clock.getTime() + 60_000).toISOString(), 'retried after settings.retryBaseMs');
      assert.deepEqual(files(dataDir), kept, 'nothing is left behind');
    });

    await t.test('full to the last byte: searches and reads answer, with the API key', async () => {
      // An empty write-ahead log, so that every write needs new space (a log with room left
      // over from earlier writes would take a few more, as a real disk would).
      const db = new Database(join(dataDir, 'trawl.db'));
      try {
        assert.deepEqual(db.pragma('wal_checkpoint(TRUNCATE)'), [{ busy: 0, log: 0, checkpointed: 0 }]);
      } finally {
        db.close();
      }
      fs.fill(0);
      assert.equal(fs.free(), 0);
      // A minute on: the next request records the key's use again, and that write fails.
      clock = new Date(clock.getTime() + 61_000);
      const failuresBefore = touchFailures();
      for (let i = 0; i < 3; i++) {
        const a = await search(ann);
        assert.equal(a.status, 200, a.text);
        assert.deepEqual(paths(a), found, 'the same results');
        // Not counted (the counter cannot be written), and so not lowered either.
        assert.equal(a.headers.get('x-ratelimit-remaining'), before.headers.get('x-ratelimit-remaining'));
      }
      assert.equal(touchFailures(), failuresBefore + 1, 'the failed lastUsedAt write is logged once');
      assert.equal((await search(ann2)).status, 200, 'another key, whose write fails too');
      assert.equal(touchFailures(), failuresBefore + 1, 'within the minute, not logged again');
      clock = new Date(clock.getTime() + 61_000);
      assert.equal((await search(ann)).status, 200);
      assert.equal(touchFailures(), failuresBefore + 2, 'a minute later, logged again');
      assert.equal((logger.text().match(/the disk under the rate-limit counter is full/g) ?? []).length, 2, 'the counter: once a minute too');
      assert.equal((await search(bob)).status, 429, 'a user at the limit stays refused');
      const source = await call(`${url}/api/source?repo=widgets&path=src/main.c`, { headers: as(ann) });
      assert.equal(source.status, 200, source.text);
      assert.match(source.json.source, /widget_count/);
      assert.equal((await call(`${url}/api/repos`, { headers: as(ann) })).status, 200);
      assert.doesNotMatch((await search(ann, 'needle_beta')).text, /big0/, 'the failed run added nothing');
    });

    // The audit log's events so far: a full disk adds none, and no change without its event.
    const auditEvents = async () => (await d!.daemon.services.store.audit.list({ offset: 0, limit: 1 })).total;
    let auditBefore = -1;

    await t.test('full: HTTP writes answer 503 saying the disk is full', async () => {
      auditBefore = await auditEvents();
      assertDiskFull(await scoped(), 'a scoped access token');
      assertDiskFull(await register(), 'an OAuth client registration');
      assert.doesNotMatch(logger.text(), /"request failed"/, 'not logged as an unexpected error');
    });

    await t.test('full: CLI writes fail with one line and exit 1', () => {
      for (const args of [
        ['keys', 'create', '--user', 'ann@example.com'],
        ['users', 'add', '--email', 'cid@example.com'],
        ['index', d!.repoPath, '--branches', 'dev', '--tags', 'v*'],
      ]) {
        const r = cli(dataDir, ...args);
        assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, FULL, args.join(' '));
        assert.equal(r.stderr.trimEnd().split('\n').length, 1, `${args.join(' ')}: one line: ${r.stderr}`);
        assert.equal(r.stdout, '', 'no key or id was printed');
      }
    });

    await t.test('full: a mirror fetch, a mirror clone and a sync pass fail cleanly', async () => {
      const kept = files(dataDir);
      // The origin has new commits (the big files): the fetch cannot write their pack.
      await assert.rejects(syncMirror(origin, mirror), (err: Error) => isDiskFull(err));
      await assert.rejects(syncMirror(origin, join(dataDir, 'git', '77.git')), (err: Error) => isDiskFull(err));
      assert.deepEqual(files(dataDir), kept, 'no half pack and no half mirror is left');
      await assert.rejects(scheduler.runNow(), (err: Error) => isDiskFull(err));
      assert.deepEqual(files(dataDir), kept, 'nothing is left by the sync pass either');
    });

    await t.test('full: the database stays consistent', () => {
      const db = new Database(join(dataDir, 'trawl.db'), { readonly: true });
      try {
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        assert.equal(db.prepare('SELECT count(*) FROM users').pluck().get(), 2, 'no half-added user');
        assert.equal(db.prepare('SELECT count(*) FROM api_keys').pluck().get(), 3, 'no half-created key');
        assert.equal(db.prepare('SELECT count(*) FROM scoped_tokens').pluck().get(), 0, 'no scoped token');
        assert.ok(auditBefore > 0, `${auditBefore} audit events before`);
        assert.equal(db.prepare('SELECT count(*) FROM audit_events').pluck().get(), auditBefore, 'no audit event of a change that failed');
      } finally {
        db.close();
      }
    });

    await t.test('space is back: the same writes succeed without a restart', async () => {
      const lastBefore = Math.max(...(await d!.daemon.services.store.audit.list({ offset: 0, limit: 10_000 })).events.map((e) => e.id));
      fs.empty();
      const created = await scoped();
      assert.equal(created.status, 201, created.text);
      assert.equal((await register()).status, 201);
      const k = cli(dataDir, 'keys', 'create', '--user', 'ann@example.com');
      assert.equal(k.status, 0, k.stderr);
      assert.match(k.stdout, /^svk_/);
      assert.equal(cli(dataDir, 'users', 'add', '--email', 'cid@example.com').status, 0);
      const r = cli(dataDir, 'index', d!.repoPath, '--branches', 'dev', '--tags', 'v*');
      assert.equal(r.status, 0, r.stderr);
      // By id: the spawned commands record on the real clock, the daemon on the test's.
      const recorded = (await d!.daemon.services.store.audit.list({ offset: 0, limit: 10_000 })).events.filter((e) => e.id > lastBefore).map((e) => e.action);
      for (const a of ['scoped_token.created', 'oauth_client.registered', 'api_key.created', 'user.added'])
        assert.ok(recorded.includes(a), `${a} recorded once space is back: ${recorded.join(', ')}`);
      const beta = await search(ann, 'needle_beta');
      assert.equal(beta.status, 200);
      assert.deepEqual(paths(beta), ['gen/big0.txt', 'gen/big1.txt', 'gen/big2.txt']);
      // Counted again, and the key's use recorded again.
      const n = Number((await search(ann)).headers.get('x-ratelimit-remaining'));
      assert.equal(Number((await search(ann)).headers.get('x-ratelimit-remaining')), n - 1);
      clock = new Date(clock.getTime() + 61_000);
      assert.equal((await search(ann)).status, 200);
      const s = openStore(dataDir);
      try {
        const user = (await s.getUserByEmail('ann@example.com'))!;
        assert.equal((await s.listApiKeys(user.id)).find((k) => ann.startsWith(k.hint))!.lastUsedAt, clock.toISOString());
      } finally {
        await s.close();
      }
      assert.equal((await syncMirror(origin, mirror)).cloned, false);
      assert.equal((await listRefs(mirror)).branches.get('main'), (await listRefs(d!.repoPath)).branches.get('main'), 'the fetch caught up');
      assert.equal((await syncMirror(origin, join(dataDir, 'git', '77.git'))).cloned, true);
      const report = await scheduler.runNow();
      assert.deepEqual(
        report.connections.map((c) => c.ok),
        [true],
      );
      assert.deepEqual(
        report.repos.map((r) => [r.repoName, r.outcome]),
        [['widgets', 'indexed']],
      );
    });
  } finally {
    await d?.cleanup();
    fs.unmount();
    dir.cleanup();
  }
});

/**
 * What a failed run may leave: nothing half-written. Every file in a repository's shard
 * directory is its manifest or a file the manifest names (live or retired), and no
 * temporary file is anywhere. Returns the files that break this.
 */
function halfWritten(dataDir: string): string[] {
  const bad = files(dataDir).filter((f) => f.includes('.tmp-'));
  for (const m of readAllManifests(dataDir)) {
    const dir = join(dataDir, 'shards', String(m.repoId));
    const known = new Set(['manifest.json', ...named(m), ...m.retired.map((r) => r.file)]);
    for (const f of readdirSync(dir)) if (!known.has(f)) bad.push(`shards/${m.repoId}/${f}${f === 'lock' ? ` (${statSync(join(dir, f)).size} bytes)` : ''}`);
    for (const f of named(m)) if (!existsSync(join(dir, f))) bad.push(`shards/${m.repoId}/${f} (named, missing)`);
  }
  return [...new Set(bad)].sort();
}

test('an index run that runs out of space at any point fails saying so, and leaves nothing half-written', async (t) => {
  const dir = tempDir('disk-full-sweep');
  const fs = mountTmpfs(join(dir.path, 'data'), 4);
  if (typeof fs === 'string') {
    dir.cleanup();
    t.skip(fs);
    return;
  }
  try {
    const repo = TestRepo.init(join(dir.path, 'repo'));
    const base: Record<string, string> = {};
    for (let i = 0; i < 20; i++) base[`f${i}.txt`] = `hello ${i}\n`.repeat(200);
    repo.commit(base, 'base');
    await indexLocal(repo.path, { dataDir: fs.path, symbols: false });
    // Free space from none to more than a delta run needs, a page at a time: each run
    // stops at a different write (the store, a shard, the manifest, the index version).
    const outcomes: string[] = [];
    const leftovers: string[] = [];
    for (let kib = 0; kib <= 96; kib += 4) {
      repo.commit({ [`step${kib}.txt`]: `step ${kib}\n`.repeat(300) }, `step ${kib}`);
      fs.fill(kib * 1024);
      let failure: unknown;
      try {
        await indexLocal(repo.path, { dataDir: fs.path, symbols: false });
      } catch (err) {
        failure = err;
      }
      fs.empty();
      outcomes.push(`${kib}: ${failure === undefined ? 'indexed' : (failure as Error).message.split('\n')[0]}`);
      if (failure !== undefined) assert.ok(isDiskFull(failure), `${kib} KiB free: ${(failure as Error).message}`);
      const bad = halfWritten(fs.path);
      if (bad.length > 0) leftovers.push(`${kib} KiB free: ${bad.join(', ')}`);
      // The next step starts from a clean, complete index.
      await indexLocal(repo.path, { dataDir: fs.path, symbols: false });
    }
    t.diagnostic(outcomes.join('; '));
    assert.ok(
      outcomes.some((o) => o.endsWith('indexed')),
      'the last steps have room enough',
    );
    await t.test('nothing half-written', () => {
      assert.deepEqual(leftovers, []);
    });
  } finally {
    fs.unmount();
    dir.cleanup();
  }
});
