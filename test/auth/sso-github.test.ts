// Single sign-on through a GitHub OAuth app (daemon/auth/sso/providers.ts,
// host-accounts.ts), against a fake of GitHub's OAuth and user endpoints
// (test/helpers/fake-github-oauth.ts), over real HTTP: the authorization code with PKCE,
// who signed in from GET /user and /user/emails (the verified primary address), the
// member provisioned, and the account handed to linkHostAccount with the member's token
// (a recording function here; the permission sync's in the daemon).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LinkHostAccount } from '../../daemon/auth/sso/host-link.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeGitHubOAuth, type FakeGitHubOAuth } from '../helpers/fake-github-oauth.ts';
import { freePort } from '../helpers/free-port.ts';
import { logRecorder } from '../helpers/log-recorder.ts';
import { CookieJar, walk } from '../helpers/sign-in-walk.ts';

let gh: FakeGitHubOAuth;
let d: TestDaemon;
let base: string;
const log = logRecorder();
const links: Array<{ userId: string; link: Parameters<LinkHostAccount>[1] }> = [];
let linkFails = false;

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gh = await startFakeGitHubOAuth({ redirectUri: () => `${base}/auth/github/callback` });
  d = await startTestDaemon({
    settings: { anonymousAccess: false, publicUrl: base },
    config: {
      connections: { 'gh-main': { type: 'github', url: gh.url, orgs: ['acme'] } },
      signIn: { providers: { github: { type: 'github', url: gh.url, clientId: gh.clientId, clientSecret: { env: 'GH_APP_SECRET' }, connection: 'gh-main' } } },
    },
    daemon: {
      port,
      env: { GH_APP_SECRET: gh.clientSecret },
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
  await gh?.close();
});

async function signIn(login: string) {
  gh.nextLogin = login;
  const jar = new CookieJar();
  const result = await walk(`${base}/auth/github/start`, jar, { done: (u) => u.startsWith(base) && !new URL(u).pathname.startsWith('/auth/') });
  const refusal = new URL(result.end).searchParams.get('signInError');
  const headers = { cookie: jar.header(`${base}/api/`), 'x-csrf-token': jar.get(base, 'trawl_csrf') ?? '' };
  return { ...result, refusal, headers, session: jar.get(base, 'trawl_session') };
}

describe('single sign-on through a GitHub OAuth app', () => {
  test('the app is asked for the user, their emails and (with a connection) their repositories, with PKCE', async () => {
    const s = await signIn('alice');
    assert.equal(s.refusal, null);
    const authorize = new URL(s.hops.find((h) => h.url.startsWith(`${gh.url}/login/oauth/authorize`))!.url);
    assert.equal(authorize.searchParams.get('scope'), 'read:user user:email repo');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorize.searchParams.get('nonce'), null, 'no nonce: not OpenID Connect');
    assert.ok(
      gh.requests.some((r) => r.includes('form') && r.includes('code_verifier')),
      'the verifier went to the token endpoint',
    );
    assert.ok(gh.requests.includes('GET /api/v3/user') && gh.requests.includes('GET /api/v3/user/emails'));

    const state = await call(`${d.url}/api/session`, { headers: { cookie: s.headers.cookie } });
    assert.equal(state.json.authenticated, true);
    assert.equal(state.json.user.email, 'alice@example.com', 'the verified primary address, not another verified one');
    assert.equal(state.json.user.name, 'alice (GitHub)');
    assert.equal((await call(`${d.url}/api/repos`, { headers: s.headers })).status, 200);

    const store = openStore(d.dataDir);
    try {
      const identity = (await store.findSignInIdentity(`${gh.url}/`, '101'))!;
      assert.equal(identity.userId, state.json.user.id);
      assert.equal(identity.provider, 'github');
    } finally {
      await store.close();
    }
    // The account, linked with the member's own token, for the permission sync.
    assert.deepEqual(links.at(-1), {
      userId: state.json.user.id,
      link: { connection: 'gh-main', account: { id: '101', login: 'alice', email: 'alice@example.com' }, token: 'user-token-alice' },
    });
    assert.ok(!log.text().includes('user-token-alice'), 'the token is never logged');
  });

  test('an unverified primary address is refused, and nothing is linked', async () => {
    gh.unverified.add('bob');
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

  test('the second sign-in finds the member by their GitHub id, and links the account again', async () => {
    const first = links.filter((l) => l.link.account.login === 'alice').length;
    const s = await signIn('alice');
    assert.equal(s.refusal, null);
    const aliceLinks = links.filter((l) => l.link.account.login === 'alice');
    assert.equal(aliceLinks.length, first + 1);
    assert.equal(aliceLinks.at(-1)!.userId, aliceLinks[0]!.userId);
  });
});
