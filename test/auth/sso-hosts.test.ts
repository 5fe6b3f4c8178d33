// Single sign-on through the OAuth apps of GitHub and GitLab (daemon/auth/sso/providers.ts,
// host-accounts.ts), against fakes of each host's OAuth and user endpoints
// (test/helpers/fake-host-oauth.ts), over real HTTP: the authorization code with PKCE, who
// signed in from the host's API (GitHub: GET /user and /user/emails, the verified primary
// address; GitLab: GET /user, its email once confirmed), the member provisioned, and the
// account handed to linkHostAccount with the member's token (a recording function here;
// the permission sync's in the daemon).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LinkHostAccount } from '../../daemon/auth/sso/host-link.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeHostOAuth, type FakeHostOAuth } from '../helpers/fake-host-oauth.ts';
import { freePort } from '../helpers/free-port.ts';
import { logRecorder } from '../helpers/log-recorder.ts';
import { CookieJar, walk } from '../helpers/sign-in-walk.ts';

const HOSTS = [
  { kind: 'github', name: 'GitHub', scope: 'read:user user:email repo', api: ['GET /api/v3/user', 'GET /api/v3/user/emails'] },
  { kind: 'gitlab', name: 'GitLab', scope: 'read_user read_api', api: ['GET /api/v4/user'] },
] as const;

for (const host of HOSTS) {
  describe(`single sign-on through a ${host.name} OAuth app`, () => {
    let fake: FakeHostOAuth;
    let d: TestDaemon;
    let base: string;
    const log = logRecorder();
    const links: Array<{ userId: string; link: Parameters<LinkHostAccount>[1] }> = [];
    let linkFails = false;

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      fake = await startFakeHostOAuth({ kind: host.kind, redirectUri: () => `${base}/auth/${host.kind}/callback` });
      const selects = host.kind === 'github' ? { orgs: ['acme'] } : { groups: ['acme'] };
      d = await startTestDaemon({
        settings: { anonymousAccess: false, publicUrl: base },
        config: {
          connections: { main: { type: host.kind, url: fake.url, ...selects } },
          signIn: {
            providers: { [host.kind]: { type: host.kind, url: fake.url, clientId: fake.clientId, clientSecret: { env: 'APP_SECRET' }, connection: 'main' } },
          },
        },
        daemon: {
          port,
          env: { APP_SECRET: fake.clientSecret },
          logger: log,
          linkHostAccount: async (userId, link) => {
            links.push({ userId, link });
            if (linkFails) throw new Error('the permission sync is down');
          },
        },
      });
    });

    after(async () => {
      await d?.cleanup();
      await fake?.close();
    });

    async function signIn(login: string) {
      fake.nextLogin = login;
      const jar = new CookieJar();
      const result = await walk(`${base}/auth/${host.kind}/start`, jar, { done: (u) => u.startsWith(base) && !new URL(u).pathname.startsWith('/auth/') });
      const refusal = new URL(result.end).searchParams.get('signInError');
      const headers = { cookie: jar.header(`${base}/api/`), 'x-csrf-token': jar.get(base, 'trawl_csrf') ?? '' };
      return { ...result, refusal, headers, session: jar.get(base, 'trawl_session') };
    }

    test('the app is asked for the user, their email and (with a connection) their repositories, with PKCE; the account is linked', async () => {
      const s = await signIn('alice');
      assert.equal(s.refusal, null);
      const authorize = new URL(s.hops.find((h) => h.url.startsWith(`${fake.url}/`) && h.url.includes('authorize'))!.url);
      assert.equal(authorize.searchParams.get('scope'), host.scope);
      assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(authorize.searchParams.get('nonce'), null, 'no nonce: not OpenID Connect');
      assert.ok(
        fake.requests.some((r) => r.includes('form') && r.includes('code_verifier')),
        'the verifier went to the token endpoint',
      );
      for (const request of host.api) assert.ok(fake.requests.includes(request), request);

      const state = await call(`${d.url}/api/session`, { headers: { cookie: s.headers.cookie } });
      assert.equal(state.json.authenticated, true);
      assert.equal(state.json.user.email, 'alice@example.com', 'the primary address, verified');
      assert.equal(state.json.user.name, `alice (${host.name})`);
      assert.equal((await call(`${d.url}/api/repos`, { headers: s.headers })).status, 200);

      const store = openStore(d.dataDir);
      try {
        const identity = (await store.findSignInIdentity(`${fake.url}/`, '101'))!;
        assert.equal(identity.userId, state.json.user.id);
        assert.equal(identity.provider, host.kind);
      } finally {
        await store.close();
      }
      // The account, linked with the member's own token, for the permission sync.
      assert.deepEqual(links.at(-1), {
        userId: state.json.user.id,
        link: { connection: 'main', account: { id: '101', login: 'alice', email: 'alice@example.com' }, token: 'user-token-alice' },
      });
      assert.ok(!log.text().includes('user-token-alice'), 'the token is never logged');
    });

    test('an email the host does not vouch for is refused, and nothing is linked', async () => {
      fake.unverified.add('bob');
      const before = links.length;
      const s = await signIn('bob');
      assert.equal(s.refusal, 'unverified_email');
      assert.equal(s.session, undefined);
      assert.equal(links.length, before);
    });

    test('a link that fails is logged; the member is signed in all the same', async () => {
      linkFails = true;
      try {
        const s = await signIn('carol');
        assert.equal(s.refusal, null);
        assert.equal((await call(`${d.url}/api/repos`, { headers: s.headers })).status, 200);
        assert.equal(links.at(-1)!.link.account.login, 'carol');
        assert.match(log.text(), /"err":"the permission sync is down","msg":"linking the account on the code host failed; signed in all the same"/);
      } finally {
        linkFails = false;
      }
    });

    test('the second sign-in finds the member by their account id, and links the account again', async () => {
      const first = links.filter((l) => l.link.account.login === 'alice').length;
      const s = await signIn('alice');
      assert.equal(s.refusal, null);
      const aliceLinks = links.filter((l) => l.link.account.login === 'alice');
      assert.equal(aliceLinks.length, first + 1);
      assert.equal(aliceLinks.at(-1)!.userId, aliceLinks[0]!.userId);
    });
  });
}
