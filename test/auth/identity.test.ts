// Users and API keys end to end: `trawl users` / `trawl keys` write the store, the daemon
// accepts a key in either header, a revoked key or a suspended user fails on the very next
// request, anonymous access follows the setting, and no issued key or the server secret
// appears in the database file (the audit log's rows included), the audit log or the logs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SECRET_FILE, serverSecret } from '../../daemon/auth/credentials.ts';
import { auditCommand } from '../../daemon/cli/audit-command.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon } from '../helpers/daemon.ts';
import { databaseText, logRecorder } from '../helpers/log-recorder.ts';

function cli(dataDir: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now: () => new Date('2026-11-22T10:00:00Z') };
  return {
    out,
    err,
    users: (...args: string[]) => usersCommand([...args, '--data-dir', dataDir], io),
    keys: (...args: string[]) => keysCommand([...args, '--data-dir', dataDir], io),
  };
}

test('API keys in both headers; revocation and suspension take effect at once; no secret at rest or in logs', async () => {
  const logger = logRecorder();
  const d = await startTestDaemon({ settings: { anonymousAccess: false }, daemon: { logger } });
  try {
    const c = cli(d.dataDir);
    assert.equal(await c.users('add', '--email', 'owner@example.com', '--role', 'owner', '--name', 'Olga'), 0);
    assert.equal(await c.users('add', '--email', 'dev@example.com'), 0);
    assert.equal(await c.keys('create', '--user', 'dev@example.com', '--name', 'laptop'), 0);
    const key = c.out.at(-1)!;
    assert.match(key, /^svk_[0-9a-f]{64}$/, 'the key alone on its stdout line');
    assert.match(c.err.at(-1)!, /shown once/);
    await c.keys('create', '--user', 'dev@example.com', '--name', 'ci');
    const second = c.out.at(-1)!;

    const repos = (headers: Record<string, string>) => call(`${d.url}/api/repos`, { headers });
    assert.equal((await repos({})).status, 401, 'anonymous access is off');
    assert.equal((await repos({})).json.errorCode, 'NOT_AUTHENTICATED');
    const viaBearer = await repos({ authorization: `Bearer ${key}` });
    assert.equal(viaBearer.status, 200);
    assert.deepEqual(
      viaBearer.json.map((r: { repoName: string }) => r.repoName),
      ['secret', 'widgets'],
      'members see private repositories too',
    );
    assert.equal((await repos({ 'x-service-api-key': key })).status, 200);
    // One character changed (a key ending in 0 gets a 1: replacing 0 by 0 would change nothing).
    assert.equal((await repos({ authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}` })).status, 401);
    assert.equal((await repos({ authorization: `Bearer svk_${'0'.repeat(64)}` })).status, 401);
    assert.equal((await repos({ authorization: 'Basic abc' })).status, 401);

    // Activity is recorded.
    await c.keys('list', '--user', 'dev@example.com');
    assert.match(c.out.find((l) => l.includes('laptop'))!, /last used 20\d\d-/);

    // Suspension: every key of the user stops at once; lifting it restores them.
    await c.users('suspend', 'dev@example.com');
    assert.equal((await repos({ authorization: `Bearer ${key}` })).status, 401);
    assert.match((await repos({ authorization: `Bearer ${second}` })).json.message, /suspended/);
    await c.users('unsuspend', 'dev@example.com');
    assert.equal((await repos({ authorization: `Bearer ${key}` })).status, 200);

    // Revocation: that key only.
    await c.keys('list', '--user', 'dev@example.com', '--json');
    const listed = JSON.parse(c.out.at(-1)!) as Array<{ id: string; name: string }>;
    await c.keys('revoke', listed.find((k) => k.name === 'laptop')!.id);
    assert.equal((await repos({ authorization: `Bearer ${key}` })).status, 401);
    assert.equal((await repos({ authorization: `Bearer ${second}` })).status, 200);

    // Nothing secret at rest, in the audit log or in the logs: not the keys, not the server secret.
    const before = c.out.length;
    assert.equal(await auditCommand(['--json', '--data-dir', d.dataDir], { out: (l) => c.out.push(l), err: () => {}, now: () => new Date() }), 0);
    const audit = c.out.slice(before).join('\n');
    assert.deepEqual((JSON.parse(audit) as Array<{ action: string }>).map((e) => e.action).reverse(), [
      'user.added',
      'user.added',
      'api_key.created',
      'api_key.created',
      'user.suspended',
      'user.unsuspended',
      'api_key.revoked',
    ]);
    const secretHex = readFileSync(join(d.dataDir, SECRET_FILE), 'utf8').trim();
    assert.equal(statSync(join(d.dataDir, SECRET_FILE)).mode & 0o777, 0o600);
    await d.daemon.close(); // the failed authentications' counts are recorded at shutdown
    const db = databaseText(d.dataDir);
    assert.match(db, /api_key\.revoked/);
    assert.match(db, /auth\.failed/);
    const logs = logger.text();
    for (const s of [key, second, key.slice(4), second.slice(4), secretHex]) {
      assert.ok(!db.includes(s), 'the database holds no key or secret');
      assert.ok(!audit.includes(s), 'the audit log holds no key or secret');
      assert.ok(!logs.includes(s), 'the logs hold no key or secret');
    }
  } finally {
    await d.cleanup();
  }
});

test('users and keys commands: usage errors and refusals', async () => {
  const dir = tempDir('identity-cli');
  try {
    const c = cli(dir.path);
    await assert.rejects(c.users('add', '--email', 'not-an-email'), /--email ADDRESS/);
    await assert.rejects(c.users('add', '--email', 'a@b.c', '--role', 'admin'), /--role must be owner or member/);
    await c.users('add', '--email', 'a@b.c');
    await assert.rejects(c.users('add', '--email', 'A@B.C'), /exists already/);
    await assert.rejects(c.keys('create', '--user', 'nobody@b.c'), /no user with the email nobody@b\.c/);
    await assert.rejects(c.keys('revoke', 'key_nope'), /no API key with id key_nope/);
    await assert.rejects(c.users('limit', 'a@b.c', '5.5'), /whole number/);
    await c.users('limit', 'a@b.c', '500');
    await c.users('list', '--json');
    assert.equal(JSON.parse(c.out.at(-1)!)[0].dailyLimit, 500);
    await c.users('limit', 'a@b.c', 'default');
    await c.users('list', '--json');
    assert.equal(JSON.parse(c.out.at(-1)!)[0].dailyLimit, undefined);
    await assert.rejects(c.users('remove', 'a@b.c'), /users takes add, list, suspend, unsuspend, limit or sign-out/);
  } finally {
    dir.cleanup();
  }
});

test('the server secret is created once, and every caller reads the same one', () => {
  const dir = tempDir('secret');
  try {
    const a = serverSecret(dir.path);
    const b = serverSecret(dir.path);
    assert.equal(a.length, 32);
    assert.deepEqual(a, b);
  } finally {
    dir.cleanup();
  }
});
