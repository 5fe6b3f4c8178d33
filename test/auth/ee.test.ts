// Enterprise endpoints over HTTP: organization members for owners with the org-management
// entitlement, scoped access tokens with scoped-access-tokens (docs/http-api.md section 14),
// each with and without a license, entitlement, owner role and API key, every error code,
// a token's reach limited to its repositories, and its end: revocation at once, expiry at
// exactly one hour (injected clock). The license is signed with a key pair made here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { databaseText, logRecorder } from '../helpers/log-recorder.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const licensor = testLicensor('L-test');
const PUBLIC_PEM = licensor.publicPem;

function license(entitlements: string[]): string {
  return licensor.sign(entitlements, '2027-01-01T00:00:00Z');
}

test('enterprise endpoints and scoped access tokens', async (t) => {
  let clock = new Date('2026-11-22T10:00:00Z');
  const logger = logRecorder();
  const d = await startTestDaemon({ config: { license: { publicKeys: [PUBLIC_PEM] } }, daemon: { now: () => clock, logger } });
  const issued: string[] = [];
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => clock };
    const lines: string[] = [];
    const dd = ['--data-dir', d.dataDir];
    await usersCommand(['add', '--email', 'olga@example.com', '--role', 'owner', ...dd], io);
    await usersCommand(['add', '--email', 'max@example.com', ...dd], io);
    await keysCommand(['create', '--user', 'olga@example.com', ...dd], io);
    const owner = lines.at(-1)!;
    await keysCommand(['create', '--user', 'max@example.com', ...dd], io);
    const member = lines.at(-1)!;
    const setLicense = (text: string) => installLicense(d.dataDir, text);
    const req = async (method: string, path: string, key?: string, json?: unknown): Promise<Answer> => {
      const a = await call(`${d.url}${path}`, { method, ...(json !== undefined ? { json } : {}), headers: key ? { authorization: `Bearer ${key}` } : {} });
      checker.check(method, path.split('?')[0]!.replace(/^(\/api\/ee\/scoped_access_token)\/.+$/, '$1/{id}'), a.status, a.json);
      return a;
    };

    await t.test('users: license, entitlement, owner role, credentials, errors', async () => {
      assert.equal((await req('GET', '/api/ee/users', owner)).status, 403, 'no license');
      assert.match((await req('GET', '/api/ee/users', owner)).json.message, /org-management/);
      await setLicense(license(['scoped-access-tokens']));
      assert.match((await req('GET', '/api/ee/users', owner)).json.message, /does not include the "org-management" entitlement/);
      await setLicense(license(['org-management', 'scoped-access-tokens']));
      const users = await req('GET', '/api/ee/users', owner);
      assert.equal(users.status, 200);
      assert.deepEqual(
        users.json.map((u: { email: string }) => u.email),
        ['max@example.com', 'olga@example.com'],
      );
      assert.equal(users.json[0].suspendedAt, null);
      assert.equal(users.json[0].role, 'member');
      assert.match(users.json[1].lastActivityAt, /^2026-11-22T10:00:00/, "the owner's request was recorded");
      const one = await req('GET', `/api/ee/user?userId=${users.json[0].id}`, owner);
      assert.deepEqual(one.json, users.json[0]);
      assert.equal((await req('GET', '/api/ee/user?userId=usr_nope', owner)).json.errorCode, 'USER_NOT_FOUND');
      assert.equal((await req('GET', '/api/ee/user', owner)).json.errorCode, 'MISSING_REQUIRED_QUERY_PARAMETER');
      assert.equal((await req('GET', '/api/ee/users', member)).status, 403, 'members may not');
      assert.equal((await req('GET', '/api/ee/users')).status, 401, 'anonymous: 401 even with anonymous access on');
    });

    await t.test('scoped access tokens: creation rules, reach, revocation, expiry', async () => {
      const repos = (await req('GET', '/api/repos', owner)).json as Array<{ repoId: number; repoName: string }>;
      const widgets = repos.find((r) => r.repoName === 'widgets')!.repoId;
      const secret = repos.find((r) => r.repoName === 'secret')!.repoId;

      const created = await req('POST', '/api/ee/scoped_access_token', member, { repoIds: [widgets] });
      assert.equal(created.status, 201);
      assert.match(created.json.token, /^svst_[0-9a-f]{64}$/);
      assert.equal(Date.parse(created.json.expiresAt) - Date.parse(created.json.createdAt), 3_600_000);
      assert.deepEqual(created.json.repoIds, [widgets]);
      const token = created.json.token as string;
      issued.push(token);

      // Its reach: the one repository, everywhere.
      assert.deepEqual(
        (await req('GET', '/api/repos', token)).json.map((r: { repoName: string }) => r.repoName),
        ['widgets'],
      );
      const search = await req('POST', '/api/search', token, { query: 'widget', matches: 100 });
      assert.ok(search.json.files.length > 0);
      assert.ok(search.json.files.every((f: { repository: string }) => f.repository === 'widgets'));
      assert.deepEqual((await req('POST', '/api/search', token, { query: 'widget_secret_sauce repo:.*', matches: 10 })).json.files, []);
      assert.equal((await req('GET', '/api/source?repo=secret&path=vault.c', token)).json.errorCode, 'REPOSITORY_NOT_FOUND');
      assert.equal((await req('GET', '/api/source?repo=secret&path=vault.c', member)).status, 200, 'the member sees it');

      // Creation rules.
      assert.equal((await req('POST', '/api/ee/scoped_access_token', token, { repoIds: [widgets] })).status, 403, 'a scoped token cannot create tokens');
      assert.equal((await req('POST', '/api/ee/scoped_access_token', member, { repoIds: [widgets, 99999] })).json.errorCode, 'INVALID_REPOSITORY_SCOPE');
      assert.equal((await req('POST', '/api/ee/scoped_access_token', member, { repoIds: [] })).json.errorCode, 'INVALID_REQUEST_BODY');
      assert.equal((await req('POST', '/api/ee/scoped_access_token', undefined, { repoIds: [widgets] })).status, 401);
      const viaHeader = await call(`${d.url}/api/repos`, { headers: { 'x-service-api-key': token } });
      assert.equal(viaHeader.status, 401, 'a scoped token is a bearer token only');

      // Revocation: only with an API key, only one's own, at once.
      const other = await req('POST', '/api/ee/scoped_access_token', owner, { repoIds: [secret] });
      assert.equal((await req('DELETE', `/api/ee/scoped_access_token/${other.json.id}`, member)).json.errorCode, 'SCOPED_ACCESS_TOKEN_NOT_FOUND');
      assert.equal((await req('DELETE', `/api/ee/scoped_access_token/${created.json.id}`, token)).status, 403);
      assert.equal((await req('DELETE', '/api/ee/scoped_access_token/sat_nope', member)).json.errorCode, 'SCOPED_ACCESS_TOKEN_NOT_FOUND');
      assert.equal((await req('DELETE', `/api/ee/scoped_access_token/${created.json.id}`, member)).status, 204);
      assert.equal((await req('GET', '/api/repos', token)).status, 401);

      // Expiry at exactly one hour.
      const born = clock;
      const second = (await req('POST', '/api/ee/scoped_access_token', owner, { repoIds: [secret] })).json.token as string;
      issued.push(second);
      clock = new Date(born.getTime() + 3_600_000 - 1);
      assert.equal((await req('GET', '/api/repos', second)).status, 200);
      clock = new Date(born.getTime() + 3_600_000);
      assert.equal((await req('GET', '/api/repos', second)).status, 401);

      // Without the entitlement no token is created; revocation still works.
      clock = born;
      await setLicense(license(['org-management']));
      assert.match((await req('POST', '/api/ee/scoped_access_token', owner, { repoIds: [widgets] })).json.message, /scoped-access-tokens/);
      assert.equal((await req('DELETE', `/api/ee/scoped_access_token/${other.json.id}`, owner)).status, 204);
    });

    await t.test("no issued token or API key in the database, the audit log's answers or the logs", async () => {
      assert.equal(issued.length, 2);
      // The audit log recorded the tokens (by id), so its rows are among what is searched.
      const audit = await req('GET', '/api/ee/audit?perPage=100&action=scoped_token.', owner);
      assert.equal(audit.status, 200, audit.text);
      assert.deepEqual(
        audit.json
          .filter((e: { outcome: string }) => e.outcome === 'success')
          .map((e: { action: string }) => e.action)
          .sort(),
        ['scoped_token.created', 'scoped_token.created', 'scoped_token.created', 'scoped_token.revoked', 'scoped_token.revoked'],
      );
      const db = databaseText(d.dataDir);
      assert.match(db, /scoped_token\.created/);
      const logs = logger.text();
      assert.match(logs, /scoped_access_token/, 'the requests were logged');
      for (const s of [...issued, ...issued.map((x) => x.slice(5)), owner, member, owner.slice(4), member.slice(4)]) {
        assert.ok(!db.includes(s), 'the database holds no token or key');
        assert.ok(!audit.text.includes(s), "the audit log's answer holds no token or key");
        assert.ok(!logs.includes(s), 'the logs hold no token or key');
      }
    });
  } finally {
    await d.cleanup();
  }
});
