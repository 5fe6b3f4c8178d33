// The audit log end to end (docs/audit-log.md): every audited action that exists, done the
// way an operator or a client does it (the `trawl` commands, the HTTP API, the OAuth
// endpoints, each from an address of its own through a trusted proxy), read back from
// GET /api/ee/audit with its actor, target, address, outcome and details; repeats that
// change nothing record nothing; failed authentications come back counted, one event per
// address and credential kind; the filters, paging and refusals of the endpoint; `trawl
// audit` answering the same; and no key, token, refresh token, code, client secret,
// session token or CSRF token in the database, the audit answers, the CLI output or the
// logs. Then: a change whose event cannot be written does not happen (strict), while a
// sign-out goes through; and the retention prune on an injected clock.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ACTION_NAMES } from '../../daemon/audit/events.ts';
import { signLicense } from '../../daemon/auth/license.ts';
import { auditCommand } from '../../daemon/cli/audit-command.ts';
import { oauthCommand } from '../../daemon/cli/oauth-command.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { TOKEN, startFake } from '../hosts/fake-hosts.ts';
import { databaseText, logRecorder } from '../helpers/log-recorder.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const TRAWL = join(import.meta.dirname, '../..', 'bin', 'trawl.js');
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const DAY = 86_400_000;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CB = 'http://127.0.0.1:5000/cb';
const OS_USER = userInfo().username;

/** A license valid around the real time (the `trawl license install` process checks it against the real clock). */
function license(entitlements: string[], id = 'L-audit'): string {
  const now = Date.now();
  return signLicense(
    { id, licensee: 'Audit Org', entitlements, issuedAt: new Date(now - DAY).toISOString(), expiresAt: new Date(now + 365 * DAY).toISOString() },
    PRIVATE_PEM,
  );
}

/** `trawl ARGS --data-dir DIR` as its own process (the command line's own wiring). */
function trawl(dataDir: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.TRAWL_CONFIG;
  delete env.TRAWL_DATA_DIR;
  const r = spawnSync(process.execPath, [TRAWL, ...args, '--data-dir', dataDir], { encoding: 'utf8', env });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function form(params: Record<string, string | undefined>): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) out.append(k, v);
  return out.toString();
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

interface Event {
  id: number;
  at: string;
  action: string;
  outcome: 'success' | 'failure';
  actor: { userId: string | null; email: string | null; credentialKind: string; credentialId: string | null };
  target: { type: string; id: string } | null;
  sourceAddress: string | null;
  details: Record<string, unknown> | null;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('every audited action is read back from GET /api/ee/audit with its actor, target, address and outcome; no secret anywhere', async (t) => {
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  const tick = () => void (clock = new Date(clock.getTime() + 1000));
  const logger = logRecorder();
  // A code host whose accounts members are linked to (the permission sync's events).
  const host = await startFake('github');
  const d = await startTestDaemon({
    settings: { anonymousAccess: false, http: { trustedProxies: ['127.0.0.1'] } },
    config: {
      license: { publicKeys: [PUBLIC_PEM] },
      connections: {
        gh: { type: 'github', url: host.url, token: { env: 'AUDIT_HOST_TOKEN' }, webhookSecret: { env: 'AUDIT_HOOK_SECRET' }, orgs: ['acme'] },
      },
    },
    daemon: { now: () => clock, logger, maintenanceIntervalMs: 25, env: { ...process.env, AUDIT_HOST_TOKEN: TOKEN, AUDIT_HOOK_SECRET: 'a-webhook-secret' } },
  });
  const dir = tempDir('audit');
  /** Every secret handed out, searched for at the end. */
  const secrets: string[] = ['a-webhook-secret'];
  /** Every answer of the audit endpoint and every CLI output, searched too. */
  const answers: string[] = [];
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const dd = ['--data-dir', d.dataDir];
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now: () => clock };
    const newKey = async (email: string, name: string): Promise<{ key: string; id: string }> => {
      tick();
      await keysCommand(['create', '--user', email, '--name', name, ...dd], io);
      secrets.push(out.at(-1)!);
      return { key: out.at(-1)!, id: /key (\S+) /.exec(err.at(-1)!)![1]! };
    };
    const users = async (...args: string[]) => {
      tick();
      assert.equal(await usersCommand([...args, ...dd], io), 0);
    };

    // ---- the command line -------------------------------------------------------------
    await users('add', '--email', 'olga@example.com', '--role', 'owner');
    await users('add', '--email', 'max@example.com');
    await users('add', '--email', 'sue@example.com');
    const olga = await newKey('olga@example.com', 'laptop');
    const max = await newKey('max@example.com', 'ci');
    const old = await newKey('max@example.com', 'old');
    await users('suspend', 'sue@example.com');
    await users('suspend', 'sue@example.com'); // changes nothing: not recorded
    await users('unsuspend', 'sue@example.com');
    await users('limit', 'max@example.com', '500');
    await users('limit', 'max@example.com', '500'); // the same: not recorded
    await users('limit', 'max@example.com', 'default');
    tick();
    await keysCommand(['revoke', old.id, ...dd], io);
    tick();
    await keysCommand(['revoke', old.id, ...dd], io); // revoked already: not recorded
    const file = join(dir.path, 'license.json');
    const config = join(dir.path, 'trawl.json');
    writeFileSync(file, license(['org-management', 'scoped-access-tokens', 'oauth']));
    writeFileSync(config, JSON.stringify({ license: { publicKeys: [PUBLIC_PEM] } }));
    const installed = trawl(d.dataDir, 'license', 'install', file, '--config', config);
    assert.equal(installed.status, 0, installed.stderr);

    const ids = await (async () => {
      const store = openStore(d.dataDir);
      try {
        return Object.fromEntries(await Promise.all(['olga', 'max', 'sue'].map(async (n) => [n, (await store.getUserByEmail(`${n}@example.com`))!.id])));
      } finally {
        await store.close();
      }
    })();

    // ---- the HTTP API, each caller from an address of its own --------------------------
    const as = (key: string | undefined, from?: string, extra: Record<string, string> = {}) => ({
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(from ? { 'x-forwarded-for': from } : {}),
      ...extra,
    });
    const repos = (await call(`${d.url}/api/repos`, { headers: as(olga.key) })).json as Array<{ repoId: number; repoName: string }>;
    const widgets = repos.find((r) => r.repoName === 'widgets')!.repoId;
    const secretRepo = repos.find((r) => r.repoName === 'secret')!.repoId;

    tick();
    const created = await call(`${d.url}/api/ee/scoped_access_token`, { headers: as(max.key, '203.0.113.5'), json: { repoIds: [widgets, widgets] } });
    assert.equal(created.status, 201, created.text);
    secrets.push(created.json.token);
    tick();
    assert.equal(
      (await call(`${d.url}/api/ee/scoped_access_token`, { headers: as(max.key, '203.0.113.5'), json: { repoIds: [widgets, 99999] } })).json.errorCode,
      'INVALID_REPOSITORY_SCOPE',
    );
    tick();
    const ownerToken = await call(`${d.url}/api/ee/scoped_access_token`, { headers: as(olga.key), json: { repoIds: [secretRepo] } });
    secrets.push(ownerToken.json.token);
    tick();
    assert.equal((await call(`${d.url}/api/ee/scoped_access_token/${created.json.id}`, { method: 'DELETE', headers: as(max.key, '203.0.113.5') })).status, 204);
    tick();
    assert.equal(
      (await call(`${d.url}/api/ee/scoped_access_token/${created.json.id}`, { method: 'DELETE', headers: as(max.key, '203.0.113.5') })).status,
      204,
      'again: changes nothing',
    );
    tick();
    assert.equal(
      (await call(`${d.url}/api/ee/scoped_access_token/${ownerToken.json.id}`, { method: 'DELETE', headers: as(max.key, '203.0.113.6') })).json.errorCode,
      'SCOPED_ACCESS_TOKEN_NOT_FOUND',
    );

    // A browser session: signed in and out.
    tick();
    const signIn = await call(`${d.url}/api/session`, { headers: as(undefined, '203.0.113.7'), json: { apiKey: olga.key } });
    assert.equal(signIn.status, 201, signIn.text);
    const session = /^trawl_session=([^;]+)/.exec(signIn.headers.getSetCookie()[0]!)![1]!;
    secrets.push(session, signIn.json.csrfToken);
    tick();
    const signOut = await call(`${d.url}/api/session`, {
      method: 'DELETE',
      headers: as(undefined, '203.0.113.7', { cookie: `trawl_session=${session}`, 'x-csrf-token': signIn.json.csrfToken }),
    });
    assert.equal(signOut.status, 204);
    tick();
    assert.equal(
      (await call(`${d.url}/api/session`, { method: 'DELETE', headers: as(undefined, '203.0.113.7') })).status,
      204,
      'no session: nothing to record',
    );
    const sessionId = JSON.parse(Buffer.from(session.split('.')[1]!, 'base64url').toString('utf8')).s as string;

    // Signed out everywhere: a scoped token of max's ends (his keys stay).
    tick();
    const doomed = await call(`${d.url}/api/ee/scoped_access_token`, { headers: as(max.key, '203.0.113.5'), json: { repoIds: [widgets] } });
    secrets.push(doomed.json.token);
    tick();
    await users('sign-out', 'max@example.com');
    await users('sign-out', 'max@example.com'); // nothing left to end: not recorded

    // OAuth: registration, consent, exchange and three ways a grant ends.
    const OAUTH = '192.0.2.10';
    const register = async (meta: Record<string, unknown>) => {
      tick();
      const r = await call(`${d.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': OAUTH },
        body: JSON.stringify({ client_name: 'Agent', redirect_uris: [CB], ...meta }),
      });
      assert.equal(r.status, 201, r.text);
      if (r.json.client_secret) secrets.push(r.json.client_secret);
      return r.json as { client_id: string; client_secret?: string };
    };
    const client = await register({ token_endpoint_auth_method: 'none' });
    const confidential = await register({ client_name: 'Vault', token_endpoint_auth_method: 'client_secret_post' });
    const oauthForm = (path: string, body: Record<string, string | undefined>) =>
      call(`${d.url}${path}`, { method: 'POST', headers: { ...FORM, 'x-forwarded-for': OAUTH }, body: form(body) });
    const signInOAuth = async (key: string): Promise<{ access: string; refresh: string }> => {
      const p = pkce();
      tick();
      const consent = await fetch(`${d.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...FORM, 'x-forwarded-for': OAUTH },
        body: form({
          response_type: 'code',
          client_id: client.client_id,
          redirect_uri: CB,
          code_challenge: p.challenge,
          code_challenge_method: 'S256',
          decision: 'allow',
          api_key: key,
        }),
      });
      assert.equal(consent.status, 303, await consent.text());
      const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
      secrets.push(code);
      tick();
      const tokens = await oauthForm('/oauth/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: p.verifier,
        redirect_uri: CB,
        client_id: client.client_id,
      });
      assert.equal(tokens.status, 200, tokens.text);
      secrets.push(tokens.json.access_token, tokens.json.refresh_token);
      return { access: tokens.json.access_token, refresh: tokens.json.refresh_token };
    };
    const first = await signInOAuth(max.key);
    tick();
    assert.equal((await oauthForm('/oauth/revoke', { token: first.refresh, client_id: client.client_id })).status, 200);
    tick();
    assert.equal((await oauthForm('/oauth/revoke', { token: first.refresh, client_id: client.client_id })).status, 200, 'again: changes nothing');
    const second = await signInOAuth(max.key);
    tick();
    const rotated = await oauthForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: second.refresh, client_id: client.client_id });
    assert.equal(rotated.status, 200);
    secrets.push(rotated.json.access_token, rotated.json.refresh_token);
    tick();
    assert.equal(
      (await oauthForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: second.refresh, client_id: client.client_id })).json.error,
      'invalid_grant',
      'reuse revokes the grant',
    );
    tick();
    assert.equal(
      (await oauthForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: second.refresh, client_id: client.client_id })).json.error,
      'invalid_grant',
      'a replay: revoked already',
    );
    const third = await signInOAuth(olga.key);
    tick();
    assert.equal((await oauthForm('/oauth/revoke', { token: third.access, client_id: client.client_id })).status, 200);
    const grants = await (async () => {
      const store = openStore(d.dataDir);
      try {
        return await store.oauth.listLiveGrants(clock.toISOString());
      } finally {
        await store.close();
      }
    })();
    assert.equal(grants.length, 1, 'the third grant lives on (only its access token was revoked)');
    tick();
    assert.equal(await oauthCommand(['revoke', grants[0]!.id, ...dd], io), 0);

    // Failed authentications: counted per address and credential kind.
    const BAD_KEY = `svk_${'0'.repeat(64)}`;
    const BAD_TOKEN = `svst_${'0'.repeat(64)}`;
    tick();
    for (let i = 0; i < 4; i++) assert.equal((await call(`${d.url}/api/repos`, { headers: as(BAD_KEY, '198.51.100.7') })).status, 401);
    for (let i = 0; i < 3; i++) assert.equal((await call(`${d.url}/api/repos`, { headers: as(BAD_TOKEN, '198.51.100.7') })).status, 401);
    for (let i = 0; i < 2; i++) assert.equal((await call(`${d.url}/api/repos`, { headers: as(old.key, '198.51.100.8') })).status, 401, 'a revoked key');
    assert.equal(
      (await call(`${d.url}/api/session`, { headers: as(undefined, '198.51.100.8'), json: { apiKey: BAD_KEY } })).status,
      401,
      'a sign-in with a bad key',
    );
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await oauthForm('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: confidential.client_id, client_secret: 'svcs_wrong' }))
          .json.error,
        'invalid_client',
      );
    }
    const stale = await call(`${d.url}/api/session`, { headers: { cookie: 'trawl_session=v1.stale.sig', 'x-forwarded-for': '198.51.100.9' } });
    assert.equal(stale.json.authenticated, false, 'asking about a stale cookie is no attempt to get in: not counted');
    // Code-host accounts: an owner links max to his login and unlinks it; a permission sync now.
    tick();
    const linked = await call(`${d.url}/api/ee/users/${ids.max}/accounts`, {
      headers: as(olga.key, '198.51.100.20'),
      json: { connection: 'gh', login: 'alice' },
    });
    assert.equal(linked.status, 201, linked.text);
    tick();
    const unlinked = await call(`${d.url}/api/ee/users/${ids.max}/accounts/gh`, { method: 'DELETE', headers: as(olga.key, '198.51.100.20') });
    assert.equal(unlinked.status, 204, unlinked.text);
    tick();
    const synced = await call(`${d.url}/api/ee/permissions/sync`, { headers: as(olga.key, '198.51.100.20'), json: { wait: true } });
    assert.equal(synced.status, 200, synced.text);

    // A search context made, replaced and deleted by the owner.
    for (const [method, json, status] of [
      ['PUT', { include: { repos: ['widgets'] } }, 201],
      ['PUT', { include: { repos: ['widg*'] } }, 200],
      ['DELETE', undefined, 204],
    ] as const) {
      tick();
      const r = await call(`${d.url}/api/contexts/tools`, { method, headers: as(olga.key, '198.51.100.21'), ...(json ? { json } : {}) });
      assert.equal(r.status, status, r.text);
    }

    // Webhook deliveries refused: a forged signature (the GitHub connection has a secret),
    // and deliveries for a host no connection takes webhooks from. Counted per address,
    // host and reason.
    tick();
    const delivery = (hostType: string, headers: Record<string, string>) =>
      call(`${d.url}/api/webhooks/${hostType}`, {
        method: 'POST',
        headers: { 'x-forwarded-for': '198.51.100.30', 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    for (let i = 0; i < 3; i++)
      assert.equal((await delivery('github', { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` })).status, 401);
    for (let i = 0; i < 2; i++) assert.equal((await delivery('gitlab', { 'x-gitlab-token': 'a-webhook-secret' })).status, 404);

    // A minute on, the daemon's maintenance tick records the windows.
    clock = new Date(clock.getTime() + 61_000);

    // ---- read back ------------------------------------------------------------------
    const audit = async (query = '', key = olga.key): Promise<Answer> => {
      const a = await call(`${d.url}/api/ee/audit${query}`, { headers: as(key) });
      checker.check('GET', '/api/ee/audit', a.status, a.json);
      answers.push(a.text);
      return a;
    };
    const failed = await until('the auth.failed events', async () => {
      const a = await audit('?action=auth.failed');
      return a.json.length === 4 ? (a.json as Event[]) : undefined;
    });
    const refusals = await until('the webhook.refused events', async () => {
      const a = await audit('?action=webhook.refused');
      return a.json.length === 2 ? (a.json as Event[]) : undefined;
    });
    const all = (await audit('?perPage=100')).json as Event[];
    assert.equal((await audit('?perPage=100')).headers.get('x-total-count'), String(all.length));

    const one = (action: string, pred: (e: Event) => boolean = () => true): Event => {
      const found = all.filter((e) => e.action === action && pred(e));
      assert.equal(found.length, 1, `one ${action} event: ${JSON.stringify(found)}`);
      return found[0]!;
    };
    const cli = { userId: null, email: null, credentialKind: 'cli', credentialId: OS_USER };
    const by = (who: 'olga' | 'max', key: { id: string }, kind = 'apiKey') => ({
      userId: ids[who]!,
      email: `${who}@example.com`,
      credentialKind: kind,
      credentialId: key.id,
    });

    await t.test('the command line: users, keys, the license, an OAuth grant; as the OS account, without an address', () => {
      for (const n of ['olga', 'max', 'sue']) {
        const e = one('user.added', (e) => e.target?.id === ids[n]);
        assert.deepEqual(
          { ...e, id: 0, at: '' },
          {
            id: 0,
            at: '',
            action: 'user.added',
            outcome: 'success',
            actor: cli,
            target: { type: 'user', id: ids[n]! },
            sourceAddress: null,
            details: { email: `${n}@example.com`, role: n === 'olga' ? 'owner' : 'member' },
          },
        );
      }
      assert.deepEqual(one('user.suspended').target, { type: 'user', id: ids.sue! }, 'suspending twice: one event');
      assert.deepEqual(one('user.unsuspended').details, { email: 'sue@example.com' });
      assert.deepEqual(
        all
          .filter((e) => e.action === 'user.limit_changed')
          .map((e) => e.details)
          .reverse(),
        [
          { email: 'max@example.com', from: 'default', to: 500 },
          { email: 'max@example.com', from: 500, to: 'default' },
        ],
        'the same limit twice: one event',
      );
      for (const [who, key, name] of [
        ['olga', olga, 'laptop'],
        ['max', max, 'ci'],
        ['max', old, 'old'],
      ] as const) {
        const e = one('api_key.created', (e) => e.target?.id === key.id);
        assert.deepEqual(e.actor, cli);
        assert.deepEqual(e.details, { userId: ids[who], email: `${who}@example.com`, name });
      }
      const revoked = one('api_key.revoked');
      assert.deepEqual(
        [revoked.actor, revoked.target, revoked.details],
        [cli, { type: 'api_key', id: old.id }, { userId: ids.max, name: 'old', ended: { scopedTokens: 0, oauthGrants: 0, sessions: 0 } }],
        'revoking twice: one event',
      );
      const out = one('user.signed_out');
      assert.deepEqual(
        [out.actor, out.target, out.details],
        [cli, { type: 'user', id: ids.max }, { email: 'max@example.com', ended: { scopedTokens: 1, oauthGrants: 0, sessions: 0 } }],
        'signing out twice: one event',
      );
      const lic = one('license.installed');
      assert.deepEqual([lic.actor, lic.target, lic.sourceAddress], [cli, { type: 'license', id: 'L-audit' }, null], 'the real trawl license install');
      assert.deepEqual(lic.details!.entitlements, ['org-management', 'scoped-access-tokens', 'oauth']);
      const operator = one('oauth_grant.revoked', (e) => e.details?.reason === 'operator');
      assert.deepEqual(
        [operator.actor, operator.target, operator.details],
        [cli, { type: 'oauth_grant', id: grants[0]!.id }, { reason: 'operator', userId: ids.olga, clientId: client.client_id }],
      );
    });

    await t.test('scoped tokens: created and revoked with the key and address; refusals as failures with the error code', () => {
      const c = one('scoped_token.created', (e) => e.outcome === 'success' && e.target?.id === created.json.id);
      assert.deepEqual([c.actor, c.sourceAddress], [by('max', max), '203.0.113.5']);
      assert.deepEqual(c.details, { repoIds: [widgets], repoCount: 1, expiresAt: created.json.expiresAt });
      const refused = one('scoped_token.created', (e) => e.outcome === 'failure');
      assert.deepEqual(
        [refused.actor, refused.target, refused.sourceAddress, refused.details],
        [by('max', max), null, '203.0.113.5', { errorCode: 'INVALID_REPOSITORY_SCOPE' }],
      );
      const r = one('scoped_token.revoked', (e) => e.outcome === 'success');
      assert.deepEqual(
        [r.actor, r.target, r.sourceAddress],
        [by('max', max), { type: 'scoped_token', id: created.json.id }, '203.0.113.5'],
        'revoking twice: one event',
      );
      const probe = one('scoped_token.revoked', (e) => e.outcome === 'failure');
      assert.deepEqual(
        [probe.actor, probe.target, probe.sourceAddress, probe.details],
        [by('max', max), { type: 'scoped_token', id: ownerToken.json.id }, '203.0.113.6', { errorCode: 'SCOPED_ACCESS_TOKEN_NOT_FOUND' }],
      );
    });

    await t.test('browser sessions: opened with the key, ended by signing out', () => {
      const opened = one('session.opened');
      assert.deepEqual(
        [opened.actor, opened.target, opened.sourceAddress, opened.details],
        [by('olga', olga), { type: 'session', id: sessionId }, '203.0.113.7', { expiresAt: signIn.json.expiresAt }],
      );
      const ended = one('session.ended');
      assert.deepEqual(
        [ended.actor, ended.target, ended.sourceAddress, ended.details],
        [by('olga', olga, 'browserSession'), { type: 'session', id: sessionId }, '203.0.113.7', { reason: 'signed_out' }],
      );
    });

    await t.test('OAuth: registered, consented, created, and revoked by the client, by reuse and by the operator', () => {
      const reg = one('oauth_client.registered', (e) => e.target?.id === client.client_id);
      assert.deepEqual(
        [reg.actor, reg.sourceAddress, reg.details],
        [
          { userId: null, email: null, credentialKind: 'anonymous', credentialId: null },
          OAUTH,
          { clientName: 'Agent', authMethod: 'none', redirectUris: [CB], redirectUriCount: 1 },
        ],
      );
      assert.equal(one('oauth_client.registered', (e) => e.target?.id === confidential.client_id).details!.authMethod, 'client_secret_post');
      const consents = all.filter((e) => e.action === 'oauth_grant.consented').reverse();
      assert.deepEqual(
        consents.map((e) => [e.actor, e.target, e.sourceAddress]),
        [max, max, olga].map((k, i) => [by(i < 2 ? 'max' : 'olga', k), { type: 'oauth_client', id: client.client_id }, OAUTH]),
      );
      assert.deepEqual(consents[0]!.details, { clientName: 'Agent', scope: 'search' });
      const createdGrants = all.filter((e) => e.action === 'oauth_grant.created').reverse();
      assert.equal(createdGrants.length, 3);
      const clientActor = (who: 'olga' | 'max') => ({
        userId: ids[who]!,
        email: `${who}@example.com`,
        credentialKind: 'oauthClient',
        credentialId: client.client_id,
      });
      assert.deepEqual(
        createdGrants.map((e) => [e.actor, e.sourceAddress, e.details]),
        ['max', 'max', 'olga'].map((w) => [clientActor(w as 'max'), OAUTH, { clientId: client.client_id, clientName: 'Agent', scope: 'search' }]),
      );
      const [g1, g2, g3] = createdGrants.map((e) => e.target!.id);
      const byClient = one('oauth_grant.revoked', (e) => e.details?.reason === 'client');
      assert.deepEqual(
        [byClient.actor, byClient.target, byClient.sourceAddress],
        [clientActor('max'), { type: 'oauth_grant', id: g1! }, OAUTH],
        'revoking twice: one event',
      );
      const reuse = one('oauth_grant.revoked', (e) => e.details?.reason === 'refresh_token_reused');
      assert.deepEqual(
        [reuse.actor, reuse.target, reuse.sourceAddress],
        [clientActor('max'), { type: 'oauth_grant', id: g2! }, OAUTH],
        'the replay after it: nothing more',
      );
      assert.equal(grants[0]!.id, g3);
      const access = one('oauth_token.revoked');
      assert.deepEqual(
        [access.actor, access.target, access.details],
        [clientActor('olga'), { type: 'oauth_grant', id: g3! }, { kind: 'access', clientId: client.client_id }],
      );
    });

    await t.test('failed authentications: one event per address and credential kind, with the count', () => {
      const seen = failed.map((e) => [e.sourceAddress, e.actor.credentialKind, e.details!.count, e.outcome]).sort((a, b) => String(a).localeCompare(String(b)));
      assert.deepEqual(seen, [
        [OAUTH, 'oauthClient', 2, 'failure'],
        ['198.51.100.7', 'apiKey', 4, 'failure'],
        ['198.51.100.7', 'scopedToken', 3, 'failure'],
        ['198.51.100.8', 'apiKey', 3, 'failure'],
      ]);
      for (const e of failed) {
        assert.equal(e.target, null);
        assert.equal(e.actor.userId, null, 'who failed is not known');
        assert.equal(e.details!.windowSeconds, 60);
        assert.ok(e.at <= (e.details!.lastAt as string), 'at: the first failure; lastAt: the last');
      }
    });

    await t.test('refused webhook deliveries: one event per address, host and reason, with the count', () => {
      const seen = refusals.map((e) => [e.sourceAddress, e.actor.credentialKind, e.details!.subject, e.details!.count, e.outcome]).sort();
      assert.deepEqual(seen, [
        ['198.51.100.30', 'webhook', 'github unverified', 3, 'failure'],
        ['198.51.100.30', 'webhook', 'gitlab unknown', 2, 'failure'],
      ]);
      for (const e of refusals) assert.deepEqual([e.target, e.actor.userId], [null, null]);
    });

    await t.test("code-host accounts: linked and unlinked by the owner from their address; the sync's passes by the daemon", () => {
      const link = one('host_account.linked');
      assert.deepEqual(
        [link.actor, link.target, link.sourceAddress, link.details],
        [by('olga', olga), { type: 'user', id: ids.max }, '198.51.100.20', { connection: 'gh', login: 'alice', linkedBy: 'owner' }],
      );
      const unlink = one('host_account.unlinked');
      assert.deepEqual([unlink.actor, unlink.target, unlink.details], [by('olga', olga), { type: 'user', id: ids.max }, { connection: 'gh' }]);
      const passes = all.filter((e) => e.action === 'permissions.synced');
      assert.ok(passes.length >= 1, 'the pass asked for, at least');
      for (const e of passes) assert.deepEqual([e.actor.credentialKind, e.actor.userId, e.target], ['system', null, null]);
    });

    await t.test('search contexts: saved twice and deleted by the owner, from their address', () => {
      const saved = all.filter((e) => e.action === 'search_context.saved').reverse();
      assert.deepEqual(
        saved.map((e) => [e.actor, e.target, e.sourceAddress, e.details]),
        [
          [by('olga', olga), { type: 'search_context', id: 'tools' }, '198.51.100.21', { created: true }],
          [by('olga', olga), { type: 'search_context', id: 'tools' }, '198.51.100.21', { created: false }],
        ],
      );
      const gone = one('search_context.deleted');
      assert.deepEqual([gone.actor, gone.target, gone.details], [by('olga', olga), { type: 'search_context', id: 'tools' }, { clearedDefaults: 0 }]);
    });

    await t.test('the whole log: newest first, every action that exists today, ids unique', () => {
      for (let i = 1; i < all.length; i++) {
        const [a, b] = [all[i - 1]!, all[i]!];
        assert.ok(a.at > b.at || (a.at === b.at && a.id > b.id), `newest first at ${i}: ${a.at} #${a.id}, ${b.at} #${b.id}`);
      }
      assert.deepEqual([...new Set(all.map((e) => e.action))].sort(), [...ACTION_NAMES].sort(), 'every action of the vocabulary was driven');
      assert.equal(new Set(all.map((e) => e.id)).size, all.length);
    });

    await t.test('filters: actor by email, user id, key id or OS account; action and prefix; target; since/until', async () => {
      const list = async (q: string) => (await audit(`?perPage=100&${q}`)).json as Event[];
      const expect = (q: string, pred: (e: Event) => boolean) => async () =>
        assert.deepEqual(
          (await list(q)).map((e) => e.id),
          all.filter(pred).map((e) => e.id),
          q,
        );
      await expect('actor=max@example.com', (e) => e.actor.userId === ids.max)();
      await expect(`actor=${ids.max}`, (e) => e.actor.userId === ids.max)();
      await expect(`actor=${max.id}`, (e) => e.actor.credentialId === max.id)();
      await expect(`actor=${encodeURIComponent(OS_USER)}`, (e) => e.actor.credentialKind === 'cli')();
      await expect(`actor=${client.client_id}`, (e) => e.actor.credentialId === client.client_id)();
      await expect('action=api_key.', (e) => e.action.startsWith('api_key.'))();
      assert.equal((await list('action=api_key.')).length, 4);
      await expect('action=oauth_grant.revoked', (e) => e.action === 'oauth_grant.revoked')();
      await expect(`target=${old.id}`, (e) => e.target?.id === old.id)();
      const middle = all[Math.floor(all.length / 2)]!.at;
      await expect(`since=${middle}`, (e) => e.at >= middle)();
      await expect(`until=${middle}`, (e) => e.at <= middle)();
      await expect(`since=${middle}&until=${middle}&actor=max@example.com`, (e) => e.at === middle && e.actor.userId === ids.max)();
      assert.equal((await list('since=1 day ago')).length, all.length, "relative dates, counted back from the daemon's clock");
      for (const [q, re] of [
        ['action=api_key', /not an audited action/],
        ['action=nope.', /not an audited action/],
        ['since=someday', /since must be an ISO 8601 date/],
        ['actor=nobody@example.com', /no user has the email/],
        ['perPage=101', /perPage/],
        ['color=red', /color/],
      ] as const) {
        const a = await audit(`?${q}`);
        assert.equal(a.status, 400, q);
        assert.equal(a.json.errorCode, 'INVALID_QUERY_PARAMS', q);
        assert.match(a.json.message, re, q);
      }
    });

    await t.test('paging: page and perPage, X-Total-Count and Link', async () => {
      const a = await audit('?perPage=3&page=2&action=oauth_grant.');
      const every = all.filter((e) => e.action.startsWith('oauth_grant.'));
      assert.deepEqual(a.json, every.slice(3, 6));
      assert.equal(a.headers.get('x-total-count'), String(every.length));
      const link = a.headers.get('link')!;
      assert.match(link, /[?&]page=1[^>]*>; rel="first"/);
      assert.match(link, /[?&]page=3[^>]*>; rel="next"/);
      assert.match(link, /action=oauth_grant\.[^>]*>; rel="prev"/);
      assert.deepEqual((await audit(`?perPage=3&page=${Math.ceil(every.length / 3) + 1}&action=oauth_grant.`)).json, [], 'past the end: empty');
    });

    await t.test('who may read it: owners, with an API key or a session, under org-management', async () => {
      const refused = async (key: string | undefined, status: number, re: RegExp) => {
        const a = await call(`${d.url}/api/ee/audit`, { headers: as(key) });
        checker.check('GET', '/api/ee/audit', a.status, a.json);
        assert.equal(a.status, status, a.text);
        assert.match(a.json.message, re);
      };
      await refused(max.key, 403, /only organization owners may read the audit log/);
      await refused(undefined, 401, /credentials are required/);
      const token = await call(`${d.url}/api/ee/scoped_access_token`, { headers: as(olga.key), json: { repoIds: [widgets] } });
      secrets.push(token.json.token);
      await refused(token.json.token, 403, /not with a scoped access token or an OAuth token/);
      const oauthToken = await signInOAuth(olga.key);
      await refused(oauthToken.access, 403, /not with a scoped access token or an OAuth token/);
      // A browser session of the owner reads it.
      const s = await call(`${d.url}/api/session`, { json: { apiKey: olga.key } });
      const cookie = /^trawl_session=([^;]+)/.exec(s.headers.getSetCookie()[0]!)![1]!;
      secrets.push(cookie, s.json.csrfToken);
      const viaSession = await call(`${d.url}/api/ee/audit?perPage=1`, { headers: { cookie: `trawl_session=${cookie}`, 'x-csrf-token': s.json.csrfToken } });
      assert.equal(viaSession.status, 200, viaSession.text);
      answers.push(viaSession.text);
      // Without the entitlement: 403 naming it.
      const store = openStore(d.dataDir);
      try {
        await store.putLicense(license(['scoped-access-tokens', 'oauth']));
        await refused(olga.key, 403, /"org-management" entitlement/);
        await store.putLicense(license(['org-management', 'scoped-access-tokens', 'oauth']));
      } finally {
        await store.close();
      }
      assert.equal((await audit('?perPage=1')).status, 200);
    });

    await t.test('trawl audit: the same events, as lines or JSON; its filters and limit', async () => {
      const cliOut = async (...args: string[]): Promise<string[]> => {
        const before = out.length;
        assert.equal(await auditCommand([...args, ...dd], io), 0);
        const lines = out.slice(before);
        answers.push(lines.join('\n'));
        return lines;
      };
      const json = JSON.parse((await cliOut('--json', '--limit', '10000', '--until', clock.toISOString()))[0]!) as Event[];
      const api = (await audit(`?perPage=100&until=${encodeURIComponent(clock.toISOString())}`)).json as Event[];
      assert.deepEqual(json.slice(0, api.length), api, 'what the API answers, newest first');
      const lines = await cliOut('--action', 'api_key.revoked');
      assert.deepEqual(lines, [
        `${one('api_key.revoked').at}  api_key.revoked  by cli ${OS_USER}  on api_key ${old.id}  {"userId":"${ids.max}","name":"old","ended":{"scopedTokens":0,"oauthGrants":0,"sessions":0}}`,
      ]);
      const refusal = one('scoped_token.created', (e) => e.outcome === 'failure');
      assert.deepEqual(await cliOut('--actor', 'max@example.com', '--action', 'scoped_token.created', '--until', refusal.at, '--since', refusal.at), [
        `${refusal.at}  scoped_token.created FAILURE  by max@example.com apiKey ${max.id}  from 203.0.113.5  {"errorCode":"INVALID_REPOSITORY_SCOPE"}`,
      ]);
      const errBefore = err.length;
      assert.equal((await cliOut('--limit', '2')).length, 2);
      assert.match(err.slice(errBefore).join('\n'), /the newest 2 of \d+ events/);
      assert.deepEqual(await cliOut('--target', 'key_nothing'), ['no audit events']);
      await assert.rejects(auditCommand(['--action', 'keys.', ...dd], io), /--action: "keys\." is not an audited action/);
      await assert.rejects(auditCommand(['--since', 'soon', ...dd], io), /--since must be/);
      await assert.rejects(auditCommand(['--limit', '0', ...dd], io), /--limit must be a whole number/);
      await assert.rejects(auditCommand(['extra', ...dd], io), /takes no arguments/);
      // The real command line (main.ts's wiring): the license install it recorded.
      const r = trawl(d.dataDir, 'audit', '--action', 'license.');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^\\S+  license\\.installed  by cli ${OS_USER}  on license L-audit  \\{"licensee":"Audit Org"`));
    });

    await t.test(
      'no key, token, refresh token, code, client secret, session or CSRF token in the database, the audit answers, the CLI output or the logs',
      async () => {
        await d.daemon.close(); // flushes, and lets the log and the database settle
        const kinds = ['svk_', 'svst_', 'svoa_', 'svor_', 'svoc_', 'svcs_', 'v2.'].map((p) => secrets.filter((s) => s.startsWith(p)).length);
        assert.ok(
          kinds.every((n) => n > 0),
          `every kind was issued: ${kinds.join(' ')}`,
        );
        const db = databaseText(d.dataDir);
        assert.ok(db.includes('oauth_grant.revoked') && db.includes(OS_USER), 'the audit rows are in the text searched');
        const logs = logger.text();
        assert.match(logs, /\/api\/ee\/audit/, 'the requests were logged');
        const read = answers.join('\n');
        for (const s of new Set(secrets)) {
          // A prefixed credential's random part, a session token's signature; a CSRF token whole.
          const prefix = ['svk_', 'svst_', 'svoa_', 'svor_', 'svoc_', 'svcs_'].find((p) => s.startsWith(p));
          const random = prefix ? s.slice(prefix.length) : s.startsWith('v1.') ? s.split('.')[2]! : s;
          for (const [where, text] of [
            ['the database', db],
            ['the audit answers and CLI output', read],
            ['the logs', logs],
          ] as const) {
            assert.ok(!text.includes(s) && !text.includes(random), `${s.slice(0, 9)}... is not in ${where}`);
          }
        }
      },
    );
  } finally {
    await d.cleanup();
    await host.close();
    dir.cleanup();
  }
});

test('strict: a change whose event cannot be written does not happen; a sign-out and the failure counts go on, logged', async (t) => {
  let clock = new Date(Math.floor(Date.now() / 1000) * 1000);
  const logger = logRecorder();
  const d = await startTestDaemon({
    settings: { anonymousAccess: false },
    config: { license: { publicKeys: [PUBLIC_PEM] } },
    daemon: { now: () => clock, logger, maintenanceIntervalMs: 25 },
  });
  const dir = tempDir('audit-strict');
  const db = new Database(join(d.dataDir, 'trawl.db'));
  try {
    const dd = ['--data-dir', d.dataDir];
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => {}, now: () => clock };
    await usersCommand(['add', '--email', 'olga@example.com', '--role', 'owner', ...dd], io);
    await keysCommand(['create', '--user', 'olga@example.com', ...dd], io);
    const key = out.at(-1)!;
    const keyId = db.prepare('SELECT id FROM api_keys').pluck().get() as string;
    const store = d.daemon.services.store;
    await store.putLicense(license(['org-management', 'scoped-access-tokens', 'oauth']));
    const signIn = await call(`${d.url}/api/session`, { json: { apiKey: key } });
    const session = /^trawl_session=([^;]+)/.exec(signIn.headers.getSetCookie()[0]!)![1]!;
    const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    const as = { authorization: `Bearer ${key}` };
    const client = (
      await call(`${d.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none' }),
      })
    ).json.client_id as string;
    const events = count('audit_events');

    // The log cannot be written from now on (as on a full disk, but for the log alone).
    db.exec(`CREATE TRIGGER audit_broken BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'the audit log cannot be written'); END`);

    await t.test('the command line: nothing is added, created, revoked, suspended or installed', async () => {
      const printed = out.length;
      await assert.rejects(usersCommand(['add', '--email', 'max@example.com', ...dd], io), /the audit log cannot be written/);
      await assert.rejects(keysCommand(['create', '--user', 'olga@example.com', ...dd], io), /the audit log cannot be written/);
      assert.equal(out.length, printed, 'no key was printed');
      await assert.rejects(keysCommand(['revoke', keyId, ...dd], io), /cannot be written/);
      await assert.rejects(usersCommand(['suspend', 'olga@example.com', ...dd], io), /cannot be written/);
      await assert.rejects(usersCommand(['limit', 'olga@example.com', '7', ...dd], io), /cannot be written/);
      const file = join(dir.path, 'other.json');
      writeFileSync(file, license(['oauth'], 'L-other'));
      const config = join(dir.path, 'trawl.json');
      writeFileSync(config, JSON.stringify({ license: { publicKeys: [PUBLIC_PEM] } }));
      const r = trawl(d.dataDir, 'license', 'install', file, '--config', config);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /^trawl: the audit log cannot be written\n$/);
      assert.deepEqual([count('users'), count('api_keys')], [1, 1]);
      const user = db.prepare('SELECT suspended_at, daily_limit FROM users').get() as { suspended_at: string | null; daily_limit: number | null };
      assert.deepEqual(user, { suspended_at: null, daily_limit: null });
      assert.equal(db.prepare('SELECT revoked_at FROM api_keys').pluck().get(), null);
      assert.notEqual(db.prepare('SELECT text FROM license').pluck().get(), readFileSync(file, 'utf8'), 'the old license stays');
      assert.equal((await call(`${d.url}/api/repos`, { headers: as })).status, 200, 'the key works on');
    });

    await t.test('HTTP: no scoped token, session, OAuth client or code is handed out', async () => {
      const scoped = await call(`${d.url}/api/ee/scoped_access_token`, { headers: as, json: { repoIds: [1] } });
      assert.equal(scoped.status, 500, scoped.text);
      assert.doesNotMatch(scoped.text, /svst_/);
      assert.equal(count('scoped_tokens'), 0);
      const again = await call(`${d.url}/api/session`, { json: { apiKey: key } });
      assert.equal(again.status, 500);
      assert.deepEqual(again.headers.getSetCookie(), [], 'no cookie');
      const reg = await call(`${d.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [CB], token_endpoint_auth_method: 'none' }),
      });
      assert.equal(reg.status, 500);
      assert.equal(count('oauth_clients'), 1, 'only the one registered before');
      const consent = await fetch(`${d.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: FORM,
        body: form({
          response_type: 'code',
          client_id: client,
          redirect_uri: CB,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
          decision: 'allow',
          api_key: key,
        }),
      });
      assert.equal(consent.status, 500);
      assert.equal(consent.headers.get('location'), null, 'no code goes back to the client');
      assert.equal(count('oauth_codes'), 0);
    });

    await t.test('best-effort events go on: a sign-out answers, failed authentications are answered; the lost events are logged once a minute', async () => {
      const before = (logger.text().match(/an audit event could not be written/g) ?? []).length;
      const out = await call(`${d.url}/api/session`, {
        method: 'DELETE',
        headers: { cookie: `trawl_session=${session}`, 'x-csrf-token': signIn.json.csrfToken },
      });
      assert.equal(out.status, 204);
      for (let i = 0; i < 3; i++) assert.equal((await call(`${d.url}/api/repos`, { headers: { authorization: `Bearer svk_${'1'.repeat(64)}` } })).status, 401);
      clock = new Date(clock.getTime() + 30_000);
      const lines = () =>
        logger
          .text()
          .split('\n')
          .filter((l) => l.includes('an audit event could not be written'));
      assert.equal(lines().length, before + 1, "the sign-out's event, logged");
      assert.match(lines().at(-1)!, /"action":"session.ended"/);
      assert.equal(
        (await call(`${d.url}/api/session`, { method: 'DELETE', headers: { cookie: `trawl_session=${session}`, 'x-csrf-token': signIn.json.csrfToken } }))
          .status,
        204,
      );
      assert.equal(lines().length, before + 1, 'another lost event within the minute: not logged again');
      clock = new Date(clock.getTime() + 31_000);
      // The failure count's window closes at the next tick: its event is lost too, and
      // logged, a minute after the last report.
      await until('the lost failure count logged', async () => (lines().length === before + 2 ? true : undefined));
      assert.match(lines().at(-1)!, /"action":"auth.failed"/);
      assert.equal(count('audit_events'), events, 'nothing was recorded while the log was broken');
    });

    await t.test('the log repaired: the same changes go through, with their events', async () => {
      db.exec('DROP TRIGGER audit_broken');
      await usersCommand(['add', '--email', 'max@example.com', ...dd], io);
      assert.equal((await call(`${d.url}/api/ee/scoped_access_token`, { headers: as, json: { repoIds: [1] } })).status, 201);
      const actions = db.prepare('SELECT action FROM audit_events WHERE id > (SELECT max(id) - 2 FROM audit_events) ORDER BY id').pluck().all();
      assert.deepEqual(actions, ['user.added', 'scoped_token.created']);
    });
  } finally {
    db.close();
    await d.cleanup();
    dir.cleanup();
  }
});

test('retention: the daemon prunes events older than settings.audit.retentionDays, once an hour, on its clock', async () => {
  const T0 = Date.parse('2026-06-01T00:00:00Z');
  const HOUR = 3_600_000;
  let clock = new Date(T0);
  const logger = logRecorder();
  const d = await startTestDaemon({
    settings: { anonymousAccess: false, audit: { retentionDays: 30 } },
    daemon: { now: () => clock, logger, maintenanceIntervalMs: 20 },
  });
  try {
    const store = d.daemon.services.store;
    const at = (ms: number) => new Date(ms).toISOString();
    const put = async (ms: number) =>
      (await store.audit.append({ at: at(ms), action: 'user.added', outcome: 'success', actor: { credentialKind: 'cli', credentialId: 'root' } })).id;
    const left = async () => new Set((await store.audit.list({ offset: 0, limit: 1000, action: 'user.added' })).events.map((e) => e.id));
    const failures = async () => (await store.audit.list({ offset: 0, limit: 1000, action: 'auth.failed' })).total;
    // A failed authentication whose window closes at the next tick tells that a tick ran
    // (in one tick the prune check comes first).
    const badRequest = () => call(`${d.url}/api/repos`, { headers: { authorization: `Bearer svk_${'2'.repeat(64)}` } });
    const T1 = T0 + HOUR;
    await put(T0 - 40 * DAY);
    const edge = await put(T1 - 30 * DAY);
    const recent = await put(T0 - 29 * DAY);
    const today = await put(T0);
    await badRequest();
    clock = new Date(T1);
    await until('a tick at T1', async () => ((await failures()) === 1 ? true : undefined));
    assert.deepEqual(await left(), new Set([edge, recent, today]), '40 days old: gone; 30 days to the millisecond: kept');
    assert.match(logger.text(), /"retentionDays":30,"msg":"removed audit events older than the retention"/);

    const stale = await put(T1 - 30 * DAY - 10 * 60_000);
    await badRequest();
    clock = new Date(T1 + 30 * 60_000);
    await until('a tick half an hour on', async () => ((await failures()) === 2 ? true : undefined));
    assert.ok((await left()).has(stale), 'within the hour: not pruned again');
    await badRequest();
    clock = new Date(T1 + 61 * 60_000);
    await until('a tick an hour on', async () => ((await failures()) === 3 ? true : undefined));
    assert.deepEqual(await left(), new Set([recent, today]), 'an hour on: pruned by the clock of then');
  } finally {
    await d.cleanup();
  }
});
