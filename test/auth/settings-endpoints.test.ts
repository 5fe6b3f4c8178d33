// The endpoints behind the web UI's settings page, over HTTP against a real daemon on
// loopback: POST /api/keys (a key of one's own, shown once, made exactly as `trawl keys
// create` makes one) and PATCH /api/ee/users/{id} (an owner suspends a member, makes them
// active again, sets their daily limit: the rule `trawl users suspend|unsuspend|limit`
// follows too). For each: who may call (API key, browser session with its CSRF header;
// not a scoped token, not anonymous), bad bodies, every error code, the audit events, and
// that the change takes effect on the next request. Every answer is checked against the
// OpenAPI document.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usersCommand } from '../../daemon/cli/users-command.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { ResponseChecker } from '../helpers/openapi.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';

const licensor = testLicensor('L-settings');
const PUBLIC_PEM = licensor.publicPem;
const license = (entitlements: string[]) => licensor.sign(entitlements);

/** Path templates of the document, for the checker: the concrete id back to `{id}`. */
function template(path: string): string {
  return path
    .split('?')[0]!
    .replace(/^\/api\/ee\/users\/[^/]+$/, '/api/ee/users/{id}')
    .replace(/^\/api\/keys\/[^/]+$/, '/api/keys/{id}');
}

test('settings endpoints: creating keys, changing members', async (t) => {
  const d = await startTestDaemon({ settings: { anonymousAccess: false }, config: { license: { publicKeys: [PUBLIC_PEM] } } });
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const dd = ['--data-dir', d.dataDir];
    const owner = await newUserKey('olga@example.com', dd, 'owner');
    const member = await newUserKey('max@example.com', dd);
    const setLicense = (text: string) => installLicense(d.dataDir, text);
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const req = async (method: string, path: string, headers: Record<string, string> = {}, json?: unknown): Promise<Answer> => {
      const a = await call(`${d.url}${path}`, { method, headers, ...(json !== undefined ? { json } : {}) });
      checker.check(method, template(path), a.status, a.json);
      return a;
    };
    const signIn = async (key: string): Promise<Record<string, string>> => {
      const a = await req('POST', '/api/session', {}, { apiKey: key });
      assert.equal(a.status, 201, a.text);
      const token = /^trawl_session=([^;]+)/.exec(a.headers.getSetCookie()[0]!)![1]!;
      return { cookie: `trawl_session=${token}`, 'x-csrf-token': a.json.csrfToken };
    };
    const events = async (
      filter: string,
    ): Promise<
      Array<{
        action: string;
        actor: { credentialKind: string; userId: string | null };
        target: { id: string };
        sourceAddress: string | null;
        details: Record<string, unknown>;
      }>
    > => {
      const a = await req('GET', `/api/ee/audit?${filter}`, bearer(owner));
      assert.equal(a.status, 200, a.text);
      return a.json;
    };
    const users = async (): Promise<Array<{ id: string; email: string; suspendedAt: string | null; dailyLimit: number | null }>> =>
      (await req('GET', '/api/ee/users', bearer(owner))).json;

    await t.test('POST /api/keys: a key of your own, shown once, that works at once', async () => {
      await setLicense(license(['org-management', 'scoped-access-tokens']));
      const created = await req('POST', '/api/keys', bearer(member), { name: '  laptop  ' });
      assert.equal(created.status, 201, created.text);
      assert.match(created.json.key, /^svk_[0-9a-f]{64}$/);
      assert.equal(created.json.name, 'laptop', 'the name is trimmed');
      assert.equal(created.json.hint, created.json.key.slice(0, 12));
      assert.equal(created.headers.get('cache-control'), 'no-store', 'the key is not kept by a cache');
      const repos = await req('GET', '/api/repos', bearer(created.json.key));
      assert.equal(repos.status, 200, 'the new key authenticates');
      const listed = (await req('GET', '/api/keys', bearer(member))).json as Array<{ id: string; name: string; hint: string }>;
      const mine = listed.find((k) => k.id === created.json.id);
      assert.ok(mine, "the caller's own listing has it");
      assert.equal(mine.hint, created.json.hint);
      assert.ok(!JSON.stringify(listed).includes(created.json.key), 'the listing never shows the key again');
      const [event] = await events(`action=api_key.created&target=${created.json.id}`);
      assert.ok(event);
      assert.equal(event.actor.credentialKind, 'apiKey');
      assert.equal(event.target.id, created.json.id);
      assert.match(event.sourceAddress ?? '', /127\.0\.0\.1/);
      assert.deepEqual(event.details, {
        userId: mine && (await users()).find((u) => u.email === 'max@example.com')!.id,
        email: 'max@example.com',
        name: 'laptop',
      });
      assert.ok(!JSON.stringify(event).includes(created.json.key), 'the event names the key by its id only');
    });

    await t.test('POST /api/keys: a browser session needs its CSRF header; a scoped token and no credential may not', async () => {
      const session = await signIn(member);
      const before = (await req('GET', '/api/keys', bearer(member))).json.length;
      const refused = await req('POST', '/api/keys', { cookie: session.cookie! }, { name: 'forged' });
      assert.equal(refused.status, 403);
      assert.equal(refused.json.errorCode, 'INVALID_CSRF_TOKEN', 'the cookie alone (a cross-site form could send it) is refused');
      assert.equal((await req('GET', '/api/keys', bearer(member))).json.length, before, 'and no key was made');
      const created = await req('POST', '/api/keys', session, { name: 'from the browser' });
      assert.equal(created.status, 201, created.text);
      assert.equal((await req('GET', '/api/repos', bearer(created.json.key))).status, 200);
      const [event] = await events(`action=api_key.created&target=${created.json.id}`);
      assert.equal(event!.actor.credentialKind, 'browserSession');

      const repos = (await req('GET', '/api/repos', bearer(member))).json as Array<{ repoId: number }>;
      const scoped = await req('POST', '/api/ee/scoped_access_token', bearer(member), { repoIds: [repos[0]!.repoId] });
      assert.equal(scoped.status, 201, scoped.text);
      const byToken = await req('POST', '/api/keys', bearer(scoped.json.token), { name: 'escalate' });
      assert.equal(byToken.status, 403);
      assert.equal(byToken.json.errorCode, 'INSUFFICIENT_PERMISSIONS', 'a token limited to some repositories cannot mint a key that is not');
      assert.equal((await req('POST', '/api/keys', {}, { name: 'x' })).status, 401);
    });

    await t.test('POST /api/keys: bad bodies', async () => {
      const bad: Array<[string, unknown, RegExp]> = [
        ['no name', {}, /name is required/],
        ['a blank name', { name: '   ' }, /blank/],
        ['an empty name', { name: '' }, /name must be/],
        ['a name too long', { name: 'k'.repeat(101) }, /at most 100/],
        ['a name that is not a string', { name: 7 }, /name must be/],
        ['an unknown field', { name: 'a', userId: 'usr_x' }, /unknown field "userId"/],
        ['not an object', ['a'], /the request body must be a JSON object/],
      ];
      for (const [what, body, message] of bad) {
        const a = await req('POST', '/api/keys', bearer(member), body);
        assert.equal(a.status, 400, what);
        assert.equal(a.json.errorCode, 'INVALID_REQUEST_BODY', what);
        assert.match(a.json.message, message, what);
      }
    });

    await t.test('PATCH /api/ee/users/{id}: an owner suspends, reactivates and limits a member', async () => {
      const max = (await users()).find((u) => u.email === 'max@example.com')!;
      const memberSession = await signIn(member);
      const suspended = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { suspended: true });
      assert.equal(suspended.status, 200, suspended.text);
      assert.match(suspended.json.suspendedAt, /^\d{4}-/);
      assert.equal(suspended.json.dailyLimit, null, 'the user object shows the limit: null is the default');
      assert.equal((await req('GET', '/api/repos', bearer(member))).status, 401, "the member's key stops working at once");
      assert.equal((await req('GET', '/api/repos', memberSession)).status, 401, 'and so does their browser session');
      const again = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { suspended: true });
      assert.equal(again.json.suspendedAt, suspended.json.suspendedAt, 'suspending again keeps the first time');
      assert.equal((await events(`action=user.suspended&target=${max.id}`)).length, 1, 'and records nothing');

      const active = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { suspended: false });
      assert.equal(active.json.suspendedAt, null);
      assert.equal((await req('GET', '/api/repos', bearer(member))).status, 200, 'active again: the key works');

      const limited = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { dailyLimit: 5 });
      assert.equal(limited.json.dailyLimit, 5);
      assert.equal((await users()).find((u) => u.id === max.id)!.dailyLimit, 5, 'GET /api/ee/users shows it');
      assert.equal((await req('GET', `/api/ee/user?userId=${max.id}`, bearer(owner))).json.dailyLimit, 5);
      assert.equal(
        (await call(`${d.url}/api/repos`, { headers: bearer(member) })).headers.get('x-ratelimit-limit'),
        '5',
        'the limit applies to the next counted request',
      );
      const both = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { dailyLimit: null, suspended: false });
      assert.equal(both.status, 200);
      assert.equal(both.json.dailyLimit, null, 'null: the default again');

      const changes = await events(`target=${max.id}&action=user.`);
      assert.deepEqual(
        changes.map((e) => e.action),
        ['user.limit_changed', 'user.limit_changed', 'user.unsuspended', 'user.suspended', 'user.added'],
        'newest first; nothing for what did not change',
      );
      assert.deepEqual(changes[0]!.details, { email: 'max@example.com', from: 5, to: 'default' });
      assert.deepEqual(changes[1]!.details, { email: 'max@example.com', from: 'default', to: 5 });
      for (const e of changes.slice(0, 4)) {
        assert.equal(e.actor.credentialKind, 'apiKey');
        assert.match(e.sourceAddress ?? '', /127\.0\.0\.1/);
      }
    });

    await t.test('PATCH /api/ee/users/{id}: the CLI follows the same rule and leaves the same events', async () => {
      const max = (await users()).find((u) => u.email === 'max@example.com')!;
      const io = { out: () => {}, err: () => {}, now: () => new Date() };
      assert.equal(await usersCommand(['suspend', 'max@example.com', ...dd], io), 0);
      assert.equal(await usersCommand(['suspend', 'max@example.com', ...dd], io), 0);
      assert.equal(await usersCommand(['limit', 'max@example.com', '9', ...dd], io), 0);
      assert.equal((await req('GET', '/api/repos', bearer(member))).status, 401);
      const changes = await events(`target=${max.id}&action=user.`);
      assert.deepEqual(
        changes.slice(0, 2).map((e) => [e.action, e.actor.credentialKind]),
        [
          ['user.limit_changed', 'cli'],
          ['user.suspended', 'cli'],
        ],
        'one event each: the second suspension changed nothing',
      );
      const restored = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { suspended: false, dailyLimit: null });
      assert.equal(restored.json.suspendedAt, null);
      assert.equal((await req('GET', '/api/repos', bearer(member))).status, 200);
    });

    await t.test('PATCH /api/ee/users/{id}: who may, and every error', async () => {
      const all = await users();
      const max = all.find((u) => u.email === 'max@example.com')!;
      const olga = all.find((u) => u.email === 'olga@example.com')!;
      const self = await req('PATCH', `/api/ee/users/${olga.id}`, bearer(owner), { suspended: true });
      assert.equal(self.status, 403);
      assert.equal(self.json.errorCode, 'CANNOT_SUSPEND_SELF');
      assert.match(self.json.message, /cannot suspend yourself/);
      assert.equal((await users()).find((u) => u.id === olga.id)!.suspendedAt, null, 'nothing changed');
      assert.equal(
        (await req('PATCH', `/api/ee/users/${olga.id}`, bearer(owner), { dailyLimit: 1000 })).json.dailyLimit,
        1000,
        'an owner may set their own limit',
      );
      await req('PATCH', `/api/ee/users/${olga.id}`, bearer(owner), { dailyLimit: null });

      const unknown = await req('PATCH', '/api/ee/users/usr_000000000000000000000000', bearer(owner), { suspended: true });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json.errorCode, 'USER_NOT_FOUND');
      const byMember = await req('PATCH', `/api/ee/users/${olga.id}`, bearer(member), { dailyLimit: 1 });
      assert.equal(byMember.status, 403, 'members may not');
      assert.match(byMember.json.message, /only organization owners may change users/);
      assert.equal((await req('PATCH', `/api/ee/users/${max.id}`, {}, { suspended: true })).status, 401);

      const ownerSession = await signIn(owner);
      const noCsrf = await req('PATCH', `/api/ee/users/${max.id}`, { cookie: ownerSession.cookie! }, { suspended: true });
      assert.equal(noCsrf.json.errorCode, 'INVALID_CSRF_TOKEN');
      assert.equal((await users()).find((u) => u.id === max.id)!.suspendedAt, null, 'a forged request suspends no one');
      const viaSession = await req('PATCH', `/api/ee/users/${max.id}`, ownerSession, { dailyLimit: 7 });
      assert.equal(viaSession.json.dailyLimit, 7, "the web UI's session may");
      assert.equal((await events(`target=${max.id}&action=user.limit_changed`))[0]!.actor.credentialKind, 'browserSession');
      await req('PATCH', `/api/ee/users/${max.id}`, ownerSession, { dailyLimit: null });

      const repos = (await req('GET', '/api/repos', bearer(owner))).json as Array<{ repoId: number }>;
      const scoped = await req('POST', '/api/ee/scoped_access_token', bearer(owner), { repoIds: [repos[0]!.repoId] });
      const byToken = await req('PATCH', `/api/ee/users/${max.id}`, bearer(scoped.json.token), { suspended: true });
      assert.equal(byToken.status, 403);
      assert.match(byToken.json.message, /scoped access token cannot change users/);

      const bad: Array<[string, unknown, RegExp]> = [
        ['nothing to change', {}, /say what changes/],
        ['a negative limit', { dailyLimit: -1 }, /dailyLimit must be/],
        ['a fractional limit', { dailyLimit: 1.5 }, /dailyLimit must be/],
        ['a limit as text', { dailyLimit: '5' }, /dailyLimit must be/],
        ['suspended as text', { suspended: 'yes' }, /suspended must be a boolean/],
        ['an unknown field', { role: 'owner' }, /unknown field "role"/],
      ];
      for (const [what, body, message] of bad) {
        const a = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), body);
        assert.equal(a.status, 400, what);
        assert.equal(a.json.errorCode, 'INVALID_REQUEST_BODY', what);
        assert.match(a.json.message, message, what);
      }
      const wrongMethod = await call(`${d.url}/api/ee/users/${max.id}`, { method: 'GET', headers: bearer(owner) });
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.headers.get('allow'), 'PATCH');

      await setLicense(license(['scoped-access-tokens']));
      const unlicensed = await req('PATCH', `/api/ee/users/${max.id}`, bearer(owner), { suspended: true });
      assert.equal(unlicensed.status, 403);
      assert.match(unlicensed.json.message, /"org-management" entitlement/);
      await setLicense(license(['org-management', 'scoped-access-tokens']));
    });
  } finally {
    await d.cleanup();
  }
});
