// The OAuth app side of GitHub and of GitLab, faked on 127.0.0.1 (port 0) in each host's
// shapes. GitHub:
//   GET  /login/oauth/authorize     the person (the fake's `nextLogin`) agrees at once: 302 to
//                                   redirect_uri with code and state. client_id and
//                                   redirect_uri must be the app's; PKCE S256 is required.
//   POST /login/oauth/access_token  form-encoded client_id, client_secret, code, redirect_uri,
//                                   code_verifier: {access_token, token_type: "bearer", scope};
//                                   an error as GitHub sends one, HTTP 200 with {"error": ...}.
//                                   A code is good once.
//   GET  /api/v3/user               the token's account: {id, login, name, email (null)}
//   GET  /api/v3/user/emails        [{email, primary, verified, visibility}]
// GitLab: GET /oauth/authorize and POST /oauth/token alike (the token answer with
// token_type "Bearer", expires_in, refresh_token and created_at; an error as HTTP 400
// {error, error_description}), and GET /api/v4/user: {id, username, name, email,
// confirmed_at (null while the address is not confirmed)}.
// The people are the permission data set's accounts (test/hosts/fake-http.ts ACCOUNTS); the
// access token a sign-in gets is the account's own token there.

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACCOUNTS, type FakeAccount } from '../hosts/fake-http.ts';

export interface FakeHostOAuth {
  /** The host's web URL (a provider's and a connection's `url`). */
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The login the next authorization is for. */
  nextLogin: string;
  /** Logins whose primary email is not verified (GitLab: not confirmed). */
  readonly unverified: Set<string>;
  /** Method, path and query of every request; the token requests' form too (client_secret left out). */
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startFakeHostOAuth(options: {
  kind: 'github' | 'gitlab';
  redirectUri: () => string;
  accounts?: readonly FakeAccount[];
}): Promise<FakeHostOAuth> {
  const accounts = options.accounts ?? ACCOUNTS;
  const github = options.kind === 'github';
  const paths = github
    ? { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token', user: '/api/v3/user' }
    : { authorize: '/oauth/authorize', token: '/oauth/token', user: '/api/v4/user' };
  const clientId = github ? 'Iv1.fakeclient' : 'fake-gitlab-application-id';
  const clientSecret = 'fake-github-client-secret';
  const codes = new Map<string, { login: string; challenge: string; redirectUri: string; scope: string }>();
  const requests: string[] = [];
  const state = { nextLogin: 'alice', unverified: new Set<string>() };
  const json = (status: number, body: unknown) => ({ status, body });
  /** A token endpoint error in the host's way. */
  const refusal = (error: string) => (github ? json(200, { error }) : json(400, { error, error_description: `fake: ${error}` }));

  const handle = async (req: IncomingMessage): Promise<{ status: number; body?: unknown; location?: string }> => {
    const u = new URL(req.url ?? '/', 'http://fake');
    if (req.method === 'GET' && u.pathname === paths.authorize) {
      const q = u.searchParams;
      if (q.get('client_id') !== clientId || q.get('redirect_uri') !== options.redirectUri()) return json(400, { error: 'redirect_uri_mismatch' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) return json(400, { error: 'PKCE S256 required' });
      const code = randomBytes(10).toString('hex');
      codes.set(code, { login: state.nextLogin, challenge: q.get('code_challenge')!, redirectUri: q.get('redirect_uri')!, scope: q.get('scope') ?? '' });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      return { status: 302, location: back.href };
    }
    if (req.method === 'POST' && u.pathname === paths.token) {
      const form = new URLSearchParams(await body(req));
      requests.push(`  form ${[...form.keys()].filter((k) => k !== 'client_secret').join(',')}`);
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret)
        return refusal(github ? 'incorrect_client_credentials' : 'invalid_client');
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!grant || grant.redirectUri !== form.get('redirect_uri') || grant.challenge !== challenge)
        return refusal(github ? 'bad_verification_code' : 'invalid_grant');
      const account = accounts.find((a) => a.login === grant.login)!;
      if (github) return json(200, { access_token: account.token, token_type: 'bearer', scope: grant.scope.replaceAll(' ', ',') });
      return json(200, {
        access_token: account.token,
        token_type: 'Bearer',
        expires_in: 7200,
        refresh_token: `r-${account.token}`,
        scope: grant.scope,
        created_at: 1,
      });
    }
    const account = accounts.find((a) => req.headers.authorization === `Bearer ${a.token}`);
    if (!account) return json(401, { message: 'Bad credentials' });
    const verified = !state.unverified.has(account.login);
    if (req.method === 'GET' && u.pathname === paths.user && !github) {
      const confirmed = verified ? '2024-01-01T00:00:00Z' : null;
      return json(200, { id: account.id, username: account.login, name: `${account.login} (GitLab)`, email: account.email, confirmed_at: confirmed });
    }
    if (req.method === 'GET' && u.pathname === paths.user)
      return json(200, { id: account.id, login: account.login, name: `${account.login} (GitHub)`, email: null });
    if (req.method === 'GET' && u.pathname === '/api/v3/user/emails' && github)
      return json(200, [
        { email: `${account.login}@secondary.example`, primary: false, verified: true, visibility: null },
        { email: account.email, primary: true, verified, visibility: 'private' },
      ]);
    return json(404, { message: 'Not Found' });
  };

  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    void handle(req).then(
      (r) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (r.location) headers.location = r.location;
        res.writeHead(r.status, headers).end(r.body === undefined ? '' : JSON.stringify(r.body));
      },
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientId,
    clientSecret,
    get nextLogin() {
      return state.nextLogin;
    },
    set nextLogin(login: string) {
      state.nextLogin = login;
    },
    unverified: state.unverified,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
