// Control characters never reach a terminal or the audit log as they are. A name given
// with a newline, an escape sequence (ESC [2J clears the screen), an 8-bit CSI or a
// right-to-left override is refused: POST /api/keys with 400 INVALID_REQUEST_BODY, `trawl
// keys create` and `trawl users add` with one line on stderr and exit 1, nothing stored;
// an error message that quotes such input is one line with it escaped.
// Names that an older version stored anyway (put in through the store directly) are
// printed escaped by `trawl keys list`, `keys revoke` and `users list`. A DELETE whose
// path id carries a forged audit line is refused as no such token and leaves nothing of
// it in the log; a forged line an older version did record prints as one escaped event.
//
// The real command line (bin/trawl.js in a child process) against a real daemon's store.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { replaceControlCharacters } from '../../daemon/auth/control-characters.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon } from '../helpers/daemon.ts';
import { runTrawl, type TrawlRun } from '../helpers/trawl-cli.ts';

/** What a terminal would act on, with a newline: a line that reads like another record. */
const HOSTILE = ['a\n\u001b[2J', 'x\u009b2J', 'good\u202eevil', 'tab\there', 'nul\u0000'];
/** The forged audit line: a whole event of its own, as `trawl audit` prints one. */
const FORGED = '2026-01-01T00:00:00.000Z  api_key.revoked  by admin@example.com cli root  on api_key key_000000000000000000000000';

/** The control characters in `text` besides the line breaks between its lines. */
function rawControls(text: string): string[] {
  const found: string[] = [];
  replaceControlCharacters(text.replace(/\n$/, '').split('\n').join(''), (c) => (found.push(c), c));
  return found;
}

/** A refusal on the command line: exit 1, nothing on stdout, one line on stderr that holds no control character. */
function refusedInOneLine(r: TrawlRun, what: string): void {
  assert.equal(r.code, 1, `${what}: exit status (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, /^trawl: [^\n]*\n$/, `${what}: one line on stderr`);
  assert.deepEqual(rawControls(r.stderr), [], `${what}: no control character on stderr`);
}

test('names with control characters are refused, stored ones print escaped, and the audit log cannot be forged', async (t) => {
  const d = await startTestDaemon({ settings: { anonymousAccess: false } });
  const cwd = join(d.dataDir, '..');
  const trawl = (...args: string[]) => runTrawl([...args, '--data-dir', d.dataDir], cwd);
  try {
    assert.equal((await trawl('users', 'add', '--email', 'op@example.com', '--role', 'owner')).code, 0);
    const created = await trawl('keys', 'create', '--user', 'op@example.com', '--name', 'ops');
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    const auth = { authorization: `Bearer ${key}` };
    const keyCount = async () => (await call(`${d.url}/api/keys`, { headers: auth })).json.length as number;

    await t.test('POST /api/keys: 400 INVALID_REQUEST_BODY for each hostile name, nothing created', async () => {
      const before = await keyCount();
      for (const name of HOSTILE) {
        const r = await call(`${d.url}/api/keys`, { headers: auth, json: { name } });
        assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.text}`);
        assert.equal(r.json.errorCode, 'INVALID_REQUEST_BODY');
        assert.match(r.json.message, /control or bidirectional-override characters/);
      }
      // Around the name, trimmed away: not part of it.
      assert.equal((await call(`${d.url}/api/keys`, { headers: auth, json: { name: ' laptop ' } })).status, 201);
      assert.equal(await keyCount(), before + 1, 'only the clean name made a key');
    });

    await t.test('trawl keys create and users add: one line on stderr, exit 1, nothing stored; an error quoting input is escaped', async () => {
      const before = await keyCount();
      // An argument cannot hold NUL; the others go through as given.
      for (const name of HOSTILE.filter((n) => !n.includes('\u0000'))) {
        refusedInOneLine(await trawl('keys', 'create', '--user', 'op@example.com', '--name', name), `keys create --name ${JSON.stringify(name)}`);
      }
      assert.equal(await keyCount(), before);
      refusedInOneLine(await trawl('users', 'add', '--email', 'eve\u001b[2J@example.com'), 'users add --email with ESC');
      refusedInOneLine(
        await trawl('users', 'add', '--email', 'eve@example.com', '--name', 'Eve\nop@example.com  Op  owner'),
        'users add --name with a newline',
      );
      refusedInOneLine(await trawl('users', 'add', '--email', 'eve@example.com', '--name', 'eve\u202etoor'), 'users add --name with an override');
      const users = JSON.parse((await trawl('users', 'list', '--json')).stdout) as Array<{ email: string }>;
      assert.deepEqual(
        users.map((u) => u.email),
        ['op@example.com'],
        'no user was added',
      );
      // An error that quotes what it was given: still one line, the input escaped.
      const unknownKey = await trawl('keys', 'revoke', 'x\n\u001b[2J');
      refusedInOneLine(unknownKey, 'keys revoke of a hostile id');
      assert.equal(unknownKey.stderr, 'trawl: no API key with id x\\n\\x1b[2J (trawl keys list --user EMAIL shows them)\n');
      refusedInOneLine(await trawl('users', 'suspend', 'eve\n\u001b[2J@example.com'), 'users suspend of a hostile email');
    });

    await t.test('names an older version stored print escaped: keys list, keys revoke, users list', async () => {
      const email = 'old\u001b[2J@example.com';
      const keyName = 'a\n\u001b[2J\u202e';
      const store = openStore(d.dataDir);
      let oldKeyId: string;
      try {
        const user = await store.createUser({ email, name: 'Old\nop@example.com  Op  owner', role: 'member' }, new Date().toISOString());
        oldKeyId = (await store.createApiKey({ userId: user.id, name: keyName, hash: 'stored-before', hint: 'svk_00000000' }, new Date().toISOString())).id;
        await store.createApiKey({ userId: user.id, name: 'x\u009b2J', hash: 'stored-before-2', hint: 'svk_00000001' }, new Date().toISOString());
      } finally {
        await store.close();
      }

      const keys = await trawl('keys', 'list', '--user', email);
      assert.equal(keys.code, 0, keys.stderr);
      assert.deepEqual(rawControls(keys.stdout), [], 'keys list: no raw control character');
      assert.equal(keys.stdout.trimEnd().split('\n').length, 2, 'keys list: one line per key');
      assert.ok(keys.stdout.includes(`${oldKeyId}  a\\n\\x1b[2J\\u202e  svk_00000000...`), keys.stdout);
      assert.ok(keys.stdout.includes('  x\\x9b2J  '), keys.stdout);

      const json = await trawl('keys', 'list', '--user', email, '--json');
      assert.deepEqual(rawControls(json.stdout), [], 'keys list --json: no raw control character');
      assert.deepEqual(
        JSON.parse(json.stdout)
          .map((k: { name: string }) => k.name)
          .sort(),
        [keyName, 'x\u009b2J'].sort(),
        '--json: the names as stored',
      );

      const users = await trawl('users', 'list');
      assert.equal(users.code, 0, users.stderr);
      assert.deepEqual(rawControls(users.stdout), [], 'users list: no raw control character');
      assert.equal(users.stdout.trimEnd().split('\n').length, 2, 'users list: one line per user');
      assert.ok(users.stdout.includes('old\\x1b[2J@example.com  Old\\nop@example.com  Op  owner  member'), users.stdout);

      const revoked = await trawl('keys', 'revoke', oldKeyId);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.deepEqual(rawControls(revoked.stdout), [], 'keys revoke: no raw control character');
      assert.match(revoked.stdout, /^key key_[0-9a-f]{24} \(a\\n\\x1b\[2J\\u202e\) revoked at /);
    });

    await t.test('a DELETE whose id carries a forged audit line: refused as no such token, nothing of it in the log', async () => {
      const hostile = [`sat_x\n${FORGED}`, `sat_000000000000000000000000\n${FORGED}`, `x\u001b[2J`];
      for (const id of hostile) {
        const r = await call(`${d.url}/api/ee/scoped_access_token/${encodeURIComponent(id)}`, { method: 'DELETE', headers: auth });
        assert.equal(r.status, 404, r.text);
        assert.equal(r.json.errorCode, 'SCOPED_ACCESS_TOKEN_NOT_FOUND');
        assert.ok(!r.json.message.includes(id), 'the answer does not repeat it');
      }
      for (const [path, code] of [
        ['/api/keys/', 'API_KEY_NOT_FOUND'],
        ['/api/sessions/', 'SESSION_NOT_FOUND'],
        ['/api/oauth_grants/', 'OAUTH_GRANT_NOT_FOUND'],
      ] as const) {
        const r = await call(`${d.url}${path}${encodeURIComponent(`x\n${FORGED}`)}`, { method: 'DELETE', headers: auth });
        assert.equal(r.json?.errorCode, code, `${path}: ${r.text}`);
      }

      // A refusal is noted without holding up its answer: read until all are there.
      type Event = { action: string; outcome: string; target: { id: string } | null };
      let all: Event[] = [];
      const refusals = () => all.filter((e) => e.action === 'scoped_token.revoked' && e.outcome === 'failure');
      for (let i = 0; i < 50 && refusals().length < hostile.length; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        all = JSON.parse((await trawl('audit', '--json', '--limit', '10000')).stdout) as Event[];
      }
      assert.equal(refusals().length, hostile.length, 'each refusal is recorded');
      for (const e of refusals()) assert.equal(e.target, null, 'with no target: the path held no token id');
      assert.ok(!JSON.stringify(all).includes('2026-01-01T00:00:00.000Z'), 'nothing of the forged line is stored');

      const printed = await trawl('audit', '--limit', '10000');
      assert.equal(printed.code, 0, printed.stderr);
      assert.deepEqual(rawControls(printed.stdout), []);
      assert.equal(printed.stdout.trimEnd().split('\n').length, all.length, 'one line per event');
      assert.ok(!printed.stdout.split('\n').some((l) => l.startsWith('2026-01-01T')), 'no forged line');
    });

    await t.test('a forged line an older version recorded prints as part of its one event', async () => {
      const store = openStore(d.dataDir);
      try {
        await store.audit.append({
          at: new Date().toISOString(),
          action: 'scoped_token.revoked',
          outcome: 'failure',
          actor: { credentialKind: 'apiKey', credentialId: 'key_000000000000000000000001' },
          target: { type: 'scoped_token', id: `sat_x\n${FORGED}\u001b[2J` },
          sourceAddress: '127.0.0.1',
          details: { errorCode: 'SCOPED_ACCESS_TOKEN_NOT_FOUND', note: 'b\u202ec\u009b' },
        });
      } finally {
        await store.close();
      }
      const count = (JSON.parse((await trawl('audit', '--json', '--limit', '10000')).stdout) as unknown[]).length;
      const printed = await trawl('audit', '--limit', '10000');
      assert.deepEqual(rawControls(printed.stdout), [], 'no raw control character');
      const lines = printed.stdout.trimEnd().split('\n');
      assert.equal(lines.length, count, 'one line per event');
      assert.ok(!lines.some((l) => l.startsWith('2026-01-01T')), 'no forged line');
      assert.ok(lines[0]!.includes(`on scoped_token sat_x\\n${FORGED}\\x1b[2J  from 127.0.0.1`), lines[0]);
      assert.ok(lines[0]!.includes('"note":"b\\u202ec\\x9b"'), lines[0]);
      const json = await trawl('audit', '--json', '--limit', '1');
      assert.deepEqual(rawControls(json.stdout), [], '--json: no raw control character');
      assert.equal(JSON.parse(json.stdout)[0].target.id, `sat_x\n${FORGED}\u001b[2J`, '--json: the value as stored');
    });
  } finally {
    await d.cleanup();
  }
});
