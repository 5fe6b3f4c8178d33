// Table tests of the OAuth server's pure parts: redirect URIs, client registration, PKCE,
// form parameters, resource indicators, the discovery documents and challenge, the
// consent page's escaping, and the license entitlement that gates the server. Each table
// is one test: every row is checked, and the failing rows are reported together, each
// under its description.

import { test } from 'node:test';
import assert, { AssertionError } from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { Entitlements } from '../../daemon/auth/entitlements.ts';
import { signLicense } from '../../daemon/auth/license.ts';
import { MemoryLicenseStore } from '../../daemon/auth/license-store.ts';
import type { AuthorizationRequest } from '../../daemon/oauth/authorize.ts';
import { consentPage, escapeHtml } from '../../daemon/oauth/consent-page.ts';
import { OAuthError } from '../../daemon/oauth/errors.ts';
import { parseForm, parseParams, required } from '../../daemon/oauth/form.ts';
import { authorizationServerMetadata, challenge, ENDPOINTS } from '../../daemon/oauth/metadata.ts';
import { isChallenge, isVerifier, s256, verifierMatches } from '../../daemon/oauth/pkce.ts';
import { checkRedirectUris, matchRedirectUri, redirectTo, redirectUriProblem } from '../../daemon/oauth/redirect.ts';
import { readRegistration, type Registration } from '../../daemon/oauth/registration.ts';
import { acceptResource } from '../../daemon/oauth/resource.ts';
import type { OAuthClientRecord } from '../../daemon/store/store.ts';

// ---- the table runner ----

interface Row<I, E> {
  name: string;
  input: I;
  expected: E;
}

/** A refusal: the OAuthError code, and words its description must contain. */
interface Refusal {
  error: string;
  says: string[];
}

const refused = (error: string, ...says: string[]): Refusal => ({ error, says });

/** What a call did: `{ ok: value }`, or the OAuthError it threw. Other errors propagate. */
function attempt<T>(fn: () => T): { ok: T } | { error: string; description: string } {
  try {
    return { ok: fn() };
  } catch (err) {
    if (err instanceof OAuthError) return { error: err.error, description: err.description };
    throw err;
  }
}

/**
 * `actual` in the shape of `expected`, so that deepEqual compares what the row pins:
 * a thrown OAuthError against a Refusal keeps the code and, for each expected word,
 * the word if the description has it (or says which description lacks it); a string
 * against a RegExp becomes the RegExp when it matches.
 */
function conform(actual: unknown, expected: unknown): unknown {
  if (expected instanceof RegExp) return typeof actual === 'string' && expected.test(actual) ? expected : actual;
  if (isObject(expected) && isObject(actual) && 'says' in expected && 'description' in actual) {
    const description = String(actual.description);
    return { error: actual.error, says: (expected.says as string[]).map((w) => (description.includes(w) ? w : `(not in "${description}") ${w}`)) };
  }
  return actual;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks every row and fails once, naming every failing row. */
function table<I, E>(rows: ReadonlyArray<Row<I, E>>, run: (input: I) => unknown): void {
  const failures: string[] = [];
  for (const row of rows) {
    try {
      assert.deepEqual(conform(run(row.input), row.expected), row.expected, row.name);
    } catch (err) {
      failures.push(failure(row.name, err));
    }
  }
  failAll(rows.length, failures);
}

/** table() for a run that answers with a promise: the rows run one after another, in order. */
async function tableInTurn<I, E>(rows: ReadonlyArray<Row<I, E>>, run: (input: I) => Promise<unknown>): Promise<void> {
  const failures: string[] = [];
  for (const row of rows) {
    try {
      assert.deepEqual(conform(await run(row.input), row.expected), row.expected, row.name);
    } catch (err) {
      failures.push(failure(row.name, err));
    }
  }
  failAll(rows.length, failures);
}

function failure(name: string, err: unknown): string {
  return err instanceof AssertionError ? `- ${name}\n${err.message}` : `- ${name}: threw ${String(err)}`;
}

function failAll(rows: number, failures: string[]): void {
  assert.ok(rows > 0, 'an empty table tests nothing');
  if (failures.length > 0) throw new AssertionError({ message: `${failures.length} of ${rows} rows failed:\n${failures.join('\n\n')}` });
}

test('the table runner reports every failing row by name', () => {
  const rows: Array<Row<number, unknown>> = [
    { name: 'row one passes', input: 1, expected: 2 },
    { name: 'row two fails', input: 2, expected: 5 },
    { name: 'row three fails', input: 3, expected: refused('invalid_request', 'word') },
  ];
  assert.throws(
    () => table(rows, (n) => (n === 3 ? attempt(() => required(new Map(), 'other')) : n * 2)),
    (err: Error) =>
      /2 of 3 rows failed/.test(err.message) &&
      err.message.includes('row two fails') &&
      err.message.includes('row three fails') &&
      !err.message.includes('row one'),
  );
});

// ---- redirect.ts ----

test('redirectUriProblem: which redirect URIs can be registered', () => {
  const ok = undefined;
  const prefix = 'https://example.com/';
  const rows: Array<Row<string, RegExp | undefined>> = [
    { name: 'https to any host', input: 'https://app.example.com/oauth/callback', expected: ok },
    { name: 'https with a port and a query', input: 'https://app.example.com:8443/cb?tenant=1', expected: ok },
    { name: 'http to localhost', input: 'http://localhost/cb', expected: ok },
    { name: 'http to localhost on a port', input: 'http://localhost:53682/callback', expected: ok },
    { name: 'http to 127.0.0.1', input: 'http://127.0.0.1:8080/cb', expected: ok },
    { name: 'http to [::1]', input: 'http://[::1]:8080/cb', expected: ok },
    { name: 'http, scheme and host in capitals', input: 'HTTP://LOCALHOST/cb', expected: ok },
    { name: 'custom scheme cursor://', input: 'cursor://x/cb', expected: ok },
    { name: 'custom scheme vscode://', input: 'vscode://a.b/c', expected: ok },
    { name: 'reverse-domain scheme without authority (RFC 8252 section 7.1)', input: 'com.example.app:/oauth2redirect', expected: ok },
    { name: 'exactly 2000 characters', input: prefix + 'a'.repeat(2000 - prefix.length), expected: ok },

    { name: 'http to a public host', input: 'http://example.com/cb', expected: /http to a host that is not loopback/ },
    { name: 'http to a host that begins with "localhost"', input: 'http://localhost.evil.example/cb', expected: /not loopback/ },
    { name: 'http to a private address', input: 'http://192.168.1.10/cb', expected: /not loopback/ },
    { name: 'http to 0.0.0.0', input: 'http://0.0.0.0:3000/cb', expected: /not loopback/ },
    { name: 'javascript:', input: 'javascript:alert(1)', expected: /the javascript: scheme/ },
    { name: 'JavaScript: in mixed case', input: 'JavaScript:alert(1)', expected: /the javascript: scheme/ },
    { name: 'javascript: split by a newline (which the URL parser drops)', input: 'java\nscript:alert(1)', expected: /white space or control characters/ },
    { name: 'a tab in the path (stored as sent, followed without it)', input: 'https://example.com/c\tb', expected: /white space or control characters/ },
    { name: 'a leading space', input: ' https://example.com/cb', expected: /white space or control characters/ },
    { name: 'user information on an app scheme', input: 'cursor://u:p@x/cb', expected: /user information/ },
    { name: 'data:', input: 'data:text/html,<script>alert(1)</script>', expected: /the data: scheme/ },
    { name: 'file:', input: 'file:///etc/passwd', expected: /the file: scheme/ },
    { name: 'vbscript:', input: 'vbscript:msgbox(1)', expected: /the vbscript: scheme/ },
    { name: 'about:', input: 'about:blank', expected: /the about: scheme/ },
    { name: 'blob:', input: 'blob:https://example.com/0f0f', expected: /the blob: scheme/ },
    { name: 'a fragment', input: 'https://app.example.com/cb#frag', expected: /fragment/ },
    { name: 'an empty fragment', input: 'https://app.example.com/cb#', expected: /fragment/ },
    { name: 'a fragment on a loopback URI', input: 'http://127.0.0.1/cb#x', expected: /fragment/ },
    { name: 'a fragment on a custom scheme', input: 'cursor://x/cb#x', expected: /fragment/ },
    { name: 'user and password on https', input: 'https://user:pass@app.example.com/cb', expected: /user information/ },
    { name: 'a user name alone on https', input: 'https://user@app.example.com/cb', expected: /user information/ },
    { name: 'a password alone on http loopback', input: 'http://:pw@localhost/cb', expected: /user information/ },
    { name: 'userinfo that makes a loopback-looking URI point elsewhere', input: 'http://127.0.0.1@evil.example/cb', expected: /user information/ },
    { name: 'one character over 2000', input: prefix + 'a'.repeat(2001 - prefix.length), expected: /longer than 2000/ },
    { name: 'a relative path', input: '/oauth/callback', expected: /not an absolute URI/ },
    { name: 'a host without a scheme', input: 'app.example.com/cb', expected: /not an absolute URI/ },
    { name: 'an empty string', input: '', expected: /not an absolute URI/ },
    { name: 'a scheme with nothing after it', input: 'https://', expected: /not an absolute URI/ },
    { name: 'a port out of range', input: 'https://example.com:99999/cb', expected: /not an absolute URI/ },
    { name: 'a space in the host', input: 'https://exa mple.com/cb', expected: /not an absolute URI/ },
  ];
  table(rows, redirectUriProblem);
});

test('matchRedirectUri: exact comparison, except the port of a loopback http URI', () => {
  const REGISTERED = ['https://app.example.com/cb', 'http://127.0.0.1/callback', 'http://localhost:3000/cb', 'http://[::1]/cb', 'cursor://x/cb'];
  const rows: Array<Row<{ registered?: string[]; requested: string }, string | undefined>> = [
    { name: 'https, exact', input: { requested: 'https://app.example.com/cb' }, expected: 'https://app.example.com/cb' },
    { name: 'loopback, exact', input: { requested: 'http://127.0.0.1/callback' }, expected: 'http://127.0.0.1/callback' },
    {
      name: 'loopback 127.0.0.1 with a port (registered without)',
      input: { requested: 'http://127.0.0.1:53682/callback' },
      expected: 'http://127.0.0.1:53682/callback',
    },
    { name: 'loopback localhost on another port', input: { requested: 'http://localhost:4000/cb' }, expected: 'http://localhost:4000/cb' },
    { name: 'loopback localhost without a port (registered with one)', input: { requested: 'http://localhost/cb' }, expected: 'http://localhost/cb' },
    { name: 'loopback [::1] with a port', input: { requested: 'http://[::1]:9999/cb' }, expected: 'http://[::1]:9999/cb' },
    { name: 'custom scheme, exact', input: { requested: 'cursor://x/cb' }, expected: 'cursor://x/cb' },

    { name: 'https on another port', input: { requested: 'https://app.example.com:8443/cb' }, expected: undefined },
    { name: 'https with the default port written out', input: { requested: 'https://app.example.com:443/cb' }, expected: undefined },
    { name: 'https, another path', input: { requested: 'https://app.example.com/cb2' }, expected: undefined },
    { name: 'https, a trailing slash', input: { requested: 'https://app.example.com/cb/' }, expected: undefined },
    { name: 'https, an added query', input: { requested: 'https://app.example.com/cb?x=1' }, expected: undefined },
    { name: 'https, another host', input: { requested: 'https://evil.example.com/cb' }, expected: undefined },
    { name: 'https, host in capitals', input: { requested: 'https://APP.example.com/cb' }, expected: undefined },
    { name: 'https, path in capitals', input: { requested: 'https://app.example.com/CB' }, expected: undefined },
    { name: 'http instead of the registered https', input: { requested: 'http://app.example.com/cb' }, expected: undefined },
    { name: 'loopback, another path', input: { requested: 'http://127.0.0.1:53682/other' }, expected: undefined },
    { name: 'loopback, path in capitals', input: { requested: 'http://127.0.0.1:53682/CALLBACK' }, expected: undefined },
    { name: 'loopback, another loopback host than the registered one', input: { requested: 'http://localhost:53682/callback' }, expected: undefined },
    { name: 'loopback, https instead of http', input: { requested: 'https://127.0.0.1:53682/callback' }, expected: undefined },
    { name: 'loopback with userinfo', input: { requested: 'http://evil@127.0.0.1:53682/callback' }, expected: undefined },
    { name: 'loopback with a fragment', input: { requested: 'http://127.0.0.1:53682/callback#x' }, expected: undefined },
    { name: 'loopback with an added query', input: { requested: 'http://127.0.0.1:53682/callback?x=1' }, expected: undefined },
    { name: 'custom scheme, another path', input: { requested: 'cursor://x/other' }, expected: undefined },
    { name: 'custom scheme with a port', input: { requested: 'cursor://x:1234/cb' }, expected: undefined },
    { name: 'custom scheme in capitals', input: { requested: 'CURSOR://x/cb' }, expected: undefined },
    { name: 'garbage', input: { requested: 'not a uri' }, expected: undefined },
    { name: 'empty', input: { requested: '' }, expected: undefined },
    { name: 'nothing registered', input: { registered: [], requested: 'http://127.0.0.1/callback' }, expected: undefined },
    {
      name: 'https to localhost is not port-insensitive',
      input: { registered: ['https://localhost/cb'], requested: 'https://localhost:1234/cb' },
      expected: undefined,
    },
    {
      name: 'http to a public host is not port-insensitive',
      input: { registered: ['http://example.com/cb'], requested: 'http://example.com:8080/cb' },
      expected: undefined,
    },
  ];
  table(rows, ({ registered = REGISTERED, requested }) => matchRedirectUri(registered, requested));
});

test('redirectTo: adds parameters to the query, keeps the one there, skips undefined, encodes', () => {
  /** `href` is left out where only the decoded query is pinned. */
  type Out = { href?: string; query: Array<[string, string]> };
  const rows: Array<Row<{ uri: string; params: Record<string, string | undefined>; queryOnly?: true }, Out>> = [
    {
      name: 'no query yet',
      input: { uri: 'https://app.example.com/cb', params: { code: 'abc', state: 's1' } },
      expected: {
        href: 'https://app.example.com/cb?code=abc&state=s1',
        query: [
          ['code', 'abc'],
          ['state', 's1'],
        ],
      },
    },
    {
      name: 'an existing query is kept, in front',
      input: { uri: 'https://app.example.com/cb?tenant=7&x=y', params: { code: 'abc' } },
      expected: {
        href: 'https://app.example.com/cb?tenant=7&x=y&code=abc',
        query: [
          ['tenant', '7'],
          ['x', 'y'],
          ['code', 'abc'],
        ],
      },
    },
    {
      // Retained as form data (RFC 6749 section 3.1.2); its bytes may be re-encoded.
      name: 'an existing query keeps its names and values',
      input: { uri: 'https://app.example.com/cb?x=a%20b&y=%2B&flag&t=~', params: { code: 'c' }, queryOnly: true },
      expected: {
        query: [
          ['x', 'a b'],
          ['y', '+'],
          ['flag', ''],
          ['t', '~'],
          ['code', 'c'],
        ],
      },
    },
    {
      name: 'undefined values are left out',
      input: { uri: 'http://127.0.0.1:5000/cb', params: { code: 'abc', state: undefined, iss: 'http://127.0.0.1:3000' } },
      expected: {
        href: 'http://127.0.0.1:5000/cb?code=abc&iss=http%3A%2F%2F127.0.0.1%3A3000',
        query: [
          ['code', 'abc'],
          ['iss', 'http://127.0.0.1:3000'],
        ],
      },
    },
    {
      name: 'only undefined values: the URI as it was',
      input: { uri: 'https://app.example.com/cb?a=1', params: { state: undefined } },
      expected: { href: 'https://app.example.com/cb?a=1', query: [['a', '1']] },
    },
    {
      name: 'reserved and non-ASCII characters are encoded and read back unchanged',
      input: { uri: 'https://app.example.com/cb', params: { state: 'a b&c=d/é?#+' } },
      expected: { href: 'https://app.example.com/cb?state=a+b%26c%3Dd%2F%C3%A9%3F%23%2B', query: [['state', 'a b&c=d/é?#+']] },
    },
    {
      name: 'an error description with quotes and angle brackets',
      input: { uri: 'https://app.example.com/cb', params: { error: 'invalid_request', error_description: 'bad "x" <y>' } },
      expected: {
        href: 'https://app.example.com/cb?error=invalid_request&error_description=bad+%22x%22+%3Cy%3E',
        query: [
          ['error', 'invalid_request'],
          ['error_description', 'bad "x" <y>'],
        ],
      },
    },
    {
      name: 'a custom scheme keeps its query too',
      input: { uri: 'cursor://x/cb?keep=1', params: { code: 'c' } },
      expected: {
        href: 'cursor://x/cb?keep=1&code=c',
        query: [
          ['keep', '1'],
          ['code', 'c'],
        ],
      },
    },
    {
      name: 'a scheme without an authority',
      input: { uri: 'com.example.app:/cb', params: { code: 'c' } },
      expected: { href: 'com.example.app:/cb?code=c', query: [['code', 'c']] },
    },
    {
      name: 'a parameter the query already has is replaced, not sent twice',
      input: { uri: 'https://app.example.com/cb?state=old', params: { state: 'new' } },
      expected: { href: 'https://app.example.com/cb?state=new', query: [['state', 'new']] },
    },
  ];
  table(rows, ({ uri, params, queryOnly }): Out => {
    const href = redirectTo(uri, params);
    const query: Array<[string, string]> = [...new URL(href).searchParams];
    return queryOnly ? { query } : { href, query };
  });
});

test('checkRedirectUris: the list as a whole; errors name the index', () => {
  const good = 'https://app.example.com/cb';
  const many = (n: number): string[] => Array.from({ length: n }, (_, i) => `${good}${i}`);
  const rows: Array<Row<unknown, { ok: string[] } | Refusal>> = [
    { name: 'one URI', input: [good], expected: { ok: [good] } },
    {
      name: 'several, in their order',
      input: [good, 'http://127.0.0.1/cb', 'cursor://x/cb'],
      expected: { ok: [good, 'http://127.0.0.1/cb', 'cursor://x/cb'] },
    },
    { name: 'exactly 20', input: many(20), expected: { ok: many(20) } },
    { name: 'missing', input: undefined, expected: refused('invalid_redirect_uri', 'redirect_uris must be a non-empty array') },
    { name: 'null', input: null, expected: refused('invalid_redirect_uri', 'non-empty array') },
    { name: 'a string instead of an array', input: good, expected: refused('invalid_redirect_uri', 'non-empty array') },
    { name: 'an object', input: { 0: good }, expected: refused('invalid_redirect_uri', 'non-empty array') },
    { name: 'an empty array', input: [], expected: refused('invalid_redirect_uri', 'non-empty array') },
    { name: '21 URIs', input: many(21), expected: refused('invalid_redirect_uri', 'at most 20') },
    { name: 'a number at index 1', input: [good, 42], expected: refused('invalid_redirect_uri', 'redirect_uris[1] is not a string') },
    { name: 'null at index 0', input: [null], expected: refused('invalid_redirect_uri', 'redirect_uris[0] is not a string') },
    { name: 'an array at index 0', input: [[good]], expected: refused('invalid_redirect_uri', 'redirect_uris[0] is not a string') },
    {
      name: 'a bad URI at index 2: index, problem and URI named',
      input: [good, good, 'http://example.com/cb'],
      expected: refused('invalid_redirect_uri', 'redirect_uris[2] ', 'not loopback', 'http://example.com/cb'),
    },
    { name: 'javascript: at index 0', input: ['javascript:alert(1)'], expected: refused('invalid_redirect_uri', 'redirect_uris[0] ', 'javascript:') },
    { name: 'a fragment at index 3', input: [good, good, good, `${good}#x`], expected: refused('invalid_redirect_uri', 'redirect_uris[3] ', 'fragment') },
  ];
  table(rows, (value) => attempt(() => checkRedirectUris(value)));

  // A long bad URI is quoted in part only.
  const long = attempt(() => checkRedirectUris([`http://example.com/${'x'.repeat(1000)}`]));
  assert.ok('error' in long && long.description.length < 400, `description of ${'error' in long ? long.description.length : 0} characters`);
});

// ---- registration.ts ----

test('readRegistration: defaults, refusals and the metadata stored', () => {
  const uris = ['http://127.0.0.1:53682/callback'];
  /** The registration expected for `redirect_uris: uris` and these differences. */
  const registration = (
    o: { name?: string; authMethod?: Registration['authMethod']; grantTypes?: string[]; responseTypes?: string[] } = {},
  ): { ok: Registration } => {
    const name = o.name ?? 'Unnamed client';
    const authMethod = o.authMethod ?? 'client_secret_basic';
    return {
      ok: {
        redirectUris: uris,
        name,
        authMethod,
        metadata: {
          client_name: name,
          redirect_uris: uris,
          token_endpoint_auth_method: authMethod,
          grant_types: o.grantTypes ?? ['authorization_code', 'refresh_token'],
          response_types: o.responseTypes ?? ['code'],
          scope: 'search',
        },
      },
    };
  };
  const body = (extra: Record<string, unknown>): Record<string, unknown> => ({ redirect_uris: uris, ...extra });
  const META = 'invalid_client_metadata';

  const rows: Array<Row<unknown, { ok: Registration } | Refusal>> = [
    { name: 'only redirect_uris: every default', input: body({}), expected: registration() },
    { name: 'a public client', input: body({ token_endpoint_auth_method: 'none' }), expected: registration({ authMethod: 'none' }) },
    {
      name: 'client_secret_post',
      input: body({ token_endpoint_auth_method: 'client_secret_post' }),
      expected: registration({ authMethod: 'client_secret_post' }),
    },
    { name: 'client_secret_basic given', input: body({ token_endpoint_auth_method: 'client_secret_basic' }), expected: registration() },
    { name: 'client_name kept', input: body({ client_name: 'Cursor' }), expected: registration({ name: 'Cursor' }) },
    { name: 'client_name trimmed', input: body({ client_name: '  Claude Code \n' }), expected: registration({ name: 'Claude Code' }) },
    { name: 'client_name of 200 characters', input: body({ client_name: 'n'.repeat(200) }), expected: registration({ name: 'n'.repeat(200) }) },
    {
      name: 'client_name with markup is kept as text (escaped where shown)',
      input: body({ client_name: '<b>Me</b>' }),
      expected: registration({ name: '<b>Me</b>' }),
    },
    {
      name: 'grant_types authorization_code only',
      input: body({ grant_types: ['authorization_code'] }),
      expected: registration({ grantTypes: ['authorization_code'] }),
    },
    {
      name: 'grant_types in another order',
      input: body({ grant_types: ['refresh_token', 'authorization_code'] }),
      expected: registration({ grantTypes: ['refresh_token', 'authorization_code'] }),
    },
    {
      name: 'duplicate grant_types removed',
      input: body({ grant_types: ['authorization_code', 'refresh_token', 'authorization_code', 'refresh_token'] }),
      expected: registration({ grantTypes: ['authorization_code', 'refresh_token'] }),
    },
    { name: 'duplicate response_types removed', input: body({ response_types: ['code', 'code'] }), expected: registration({ responseTypes: ['code'] }) },
    { name: 'scope "search"', input: body({ scope: 'search' }), expected: registration() },
    { name: 'unknown scopes are not an error; "search" is what is granted', input: body({ scope: 'search admin openid' }), expected: registration() },
    {
      name: 'unknown fields dropped from the metadata',
      // As JSON.parse reads a body: "__proto__" is an own key there.
      input: JSON.parse(
        JSON.stringify(
          body({
            client_uri: 'https://evil.example',
            logo_uri: 'https://evil.example/logo.png',
            jwks_uri: 'https://evil.example/jwks',
            client_secret: 'chosen-by-client',
            client_id: 'oac_chosen',
            software_statement: 'x.y.z',
            extra: { nested: 1 },
          }),
        ).replace('{', '{"__proto__":{"polluted":true},'),
      ),
      expected: registration(),
    },

    { name: 'null body', input: null, expected: refused(META, 'JSON object') },
    { name: 'an array body', input: [body({})], expected: refused(META, 'JSON object') },
    { name: 'a string body', input: 'redirect_uris', expected: refused(META, 'JSON object') },
    { name: 'no redirect_uris', input: {}, expected: refused('invalid_redirect_uri', 'redirect_uris') },
    { name: 'a bad redirect URI', input: { redirect_uris: ['http://example.com/cb'] }, expected: refused('invalid_redirect_uri', 'redirect_uris[0]') },
    { name: 'client_name empty', input: body({ client_name: '' }), expected: refused(META, 'client_name must be a non-empty string') },
    { name: 'client_name blank', input: body({ client_name: '   ' }), expected: refused(META, 'client_name') },
    { name: 'client_name a number', input: body({ client_name: 7 }), expected: refused(META, 'client_name') },
    { name: 'client_name null', input: body({ client_name: null }), expected: refused(META, 'client_name') },
    { name: 'client_name of 201 characters', input: body({ client_name: 'n'.repeat(201) }), expected: refused(META, 'client_name is longer than 200') },
    {
      name: 'client_name of 200 characters after trimming',
      input: body({ client_name: ` ${'n'.repeat(200)} ` }),
      expected: registration({ name: 'n'.repeat(200) }),
    },
    { name: 'client_name with a right-to-left override', input: body({ client_name: 'Good\u202eevil' }), expected: refused(META, 'bidirectional-override') },
    { name: 'client_name with a control character', input: body({ client_name: 'Good\u0007app' }), expected: refused(META, 'control') },
    { name: 'token_endpoint_auth_method null', input: body({ token_endpoint_auth_method: null }), expected: refused(META, 'token_endpoint_auth_method') },
    {
      name: 'token_endpoint_auth_method private_key_jwt',
      input: body({ token_endpoint_auth_method: 'private_key_jwt' }),
      expected: refused(META, 'token_endpoint_auth_method must be one of none, client_secret_basic, client_secret_post'),
    },
    { name: 'token_endpoint_auth_method a number', input: body({ token_endpoint_auth_method: 1 }), expected: refused(META, 'token_endpoint_auth_method') },
    {
      name: 'token_endpoint_auth_method in capitals',
      input: body({ token_endpoint_auth_method: 'NONE' }),
      expected: refused(META, 'token_endpoint_auth_method'),
    },
    {
      name: 'grant_types without authorization_code',
      input: body({ grant_types: ['refresh_token'] }),
      expected: refused(META, 'grant_types must include authorization_code'),
    },
    {
      name: 'grant_types with client_credentials',
      input: body({ grant_types: ['authorization_code', 'client_credentials'] }),
      expected: refused(META, 'grant_types may hold only', 'client_credentials'),
    },
    { name: 'grant_types with implicit', input: body({ grant_types: ['implicit'] }), expected: refused(META, 'implicit') },
    { name: 'grant_types empty', input: body({ grant_types: [] }), expected: refused(META, 'grant_types must be a non-empty array of strings') },
    { name: 'grant_types a string', input: body({ grant_types: 'authorization_code' }), expected: refused(META, 'grant_types must be a non-empty array') },
    {
      name: 'grant_types holding a number',
      input: body({ grant_types: ['authorization_code', 1] }),
      expected: refused(META, 'grant_types must be a non-empty array of strings'),
    },
    { name: 'response_types token', input: body({ response_types: ['token'] }), expected: refused(META, 'response_types may hold only code', 'token') },
    { name: 'response_types code and token', input: body({ response_types: ['code', 'token'] }), expected: refused(META, 'response_types') },
    { name: 'response_types empty', input: body({ response_types: [] }), expected: refused(META, 'response_types must be a non-empty array') },
    { name: 'scope an array', input: body({ scope: ['search'] }), expected: refused(META, 'scope must be a string') },
  ];
  table(rows, (input) => attempt(() => readRegistration(input)));
});

// ---- pkce.ts ----

test('s256: base64url SHA-256, RFC 7636 Appendix B', () => {
  const rows: Array<Row<string, string>> = [
    { name: 'RFC 7636 Appendix B', input: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', expected: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' },
    { name: '43 times "a"', input: 'a'.repeat(43), expected: 'ZtNPunH49FD35FWYhT5Tv8I7vRKQJ8uxMaL0_9eHjNA' },
    { name: 'empty (no padding, base64url alphabet)', input: '', expected: '47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU' },
  ];
  table(rows, s256);
});

test('isVerifier: 43 to 128 unreserved characters', () => {
  const unreserved = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
  const rows: Array<Row<string, boolean>> = [
    { name: '42 characters', input: 'a'.repeat(42), expected: false },
    { name: '43 characters', input: 'a'.repeat(43), expected: true },
    { name: '128 characters', input: 'a'.repeat(128), expected: true },
    { name: '129 characters', input: 'a'.repeat(129), expected: false },
    { name: 'empty', input: '', expected: false },
    { name: 'every unreserved character', input: unreserved, expected: true },
    { name: 'the RFC 7636 example', input: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', expected: true },
    ...['+', '/', '=', ' ', '%', '!', '*', '#', '\n', 'é', '\u0000'].map((c) => ({
      name: `with ${JSON.stringify(c)}`,
      input: `${'a'.repeat(42)}${c}`,
      expected: false,
    })),
    { name: 'a trailing newline after 43 good characters', input: `${'a'.repeat(43)}\n`, expected: false },
  ];
  table(rows, isVerifier);
});

test('isChallenge: 43 base64url characters', () => {
  const rfc = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
  const rows: Array<Row<string, boolean>> = [
    { name: 'the RFC 7636 example', input: rfc, expected: true },
    { name: 'with - and _', input: `${'-_'.repeat(21)}A`, expected: true },
    { name: '42 characters', input: rfc.slice(0, 42), expected: false },
    { name: '44 characters', input: `${rfc}A`, expected: false },
    { name: 'with padding', input: `${rfc}=`, expected: false },
    { name: 'standard base64 "+"', input: `${rfc.slice(0, 42)}+`, expected: false },
    { name: 'standard base64 "/"', input: `${rfc.slice(0, 42)}/`, expected: false },
    { name: 'a "." (allowed in verifiers, not in challenges)', input: `${rfc.slice(0, 42)}.`, expected: false },
    { name: 'a "~"', input: `${rfc.slice(0, 42)}~`, expected: false },
    { name: 'a "plain" challenge of 64 characters', input: 'a'.repeat(64), expected: false },
    { name: 'a trailing newline', input: `${rfc}\n`, expected: false },
    { name: 'empty', input: '', expected: false },
  ];
  table(rows, isChallenge);
});

test('verifierMatches: the verifier whose S256 is the challenge, and only that', () => {
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challengeOf = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
  const rows: Array<Row<{ verifier: string; challenge: string }, boolean>> = [
    { name: 'RFC 7636 pair', input: { verifier, challenge: challengeOf }, expected: true },
    { name: 'a long verifier and its challenge', input: { verifier: 'z'.repeat(128), challenge: s256('z'.repeat(128)) }, expected: true },
    { name: 'another verifier', input: { verifier: `${verifier.slice(0, -1)}Y`, challenge: challengeOf }, expected: false },
    { name: 'the challenge as its own verifier ("plain")', input: { verifier: challengeOf, challenge: challengeOf }, expected: false },
    { name: 'a plain verifier equal to the challenge', input: { verifier: 'a'.repeat(43), challenge: 'a'.repeat(43) }, expected: false },
    { name: 'challenge with one character changed', input: { verifier, challenge: `${challengeOf.slice(0, -1)}N` }, expected: false },
    { name: 'challenge with padding', input: { verifier, challenge: `${challengeOf}=` }, expected: false },
    { name: 'challenge cut short', input: { verifier, challenge: challengeOf.slice(0, 42) }, expected: false },
    { name: 'empty challenge', input: { verifier, challenge: '' }, expected: false },
    { name: 'a verifier that is too short, even with its own S256', input: { verifier: 'a'.repeat(42), challenge: s256('a'.repeat(42)) }, expected: false },
    {
      name: 'a verifier with a bad character, even with its own S256',
      input: { verifier: `${'a'.repeat(42)}+`, challenge: s256(`${'a'.repeat(42)}+`) },
      expected: false,
    },
    { name: 'empty verifier with its own S256', input: { verifier: '', challenge: s256('') }, expected: false },
  ];
  table(rows, ({ verifier: v, challenge: c }) => verifierMatches(v, c));
});

// ---- form.ts ----

test('parseParams: one value per parameter, empty values absent, form decoding', () => {
  const rows: Array<Row<string, { ok: Record<string, string> } | Refusal>> = [
    { name: 'empty', input: '', expected: { ok: {} } },
    { name: 'two parameters', input: 'grant_type=authorization_code&code=abc', expected: { ok: { grant_type: 'authorization_code', code: 'abc' } } },
    { name: 'a leading "?" is ignored', input: '?client_id=x', expected: { ok: { client_id: 'x' } } },
    { name: '+ decodes to a space', input: 'state=a+b', expected: { ok: { state: 'a b' } } },
    { name: '%20 decodes to a space', input: 'state=a%20b', expected: { ok: { state: 'a b' } } },
    { name: '%2B decodes to +', input: 'state=a%2Bb', expected: { ok: { state: 'a+b' } } },
    {
      name: 'encoded reserved characters and UTF-8',
      input: 'redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb%3Fx%3D1%26y&name=%C3%A9',
      expected: { ok: { redirect_uri: 'http://127.0.0.1:1/cb?x=1&y', name: 'é' } },
    },
    { name: 'an encoded parameter name', input: 'code%5Fverifier=v', expected: { ok: { code_verifier: 'v' } } },
    { name: 'an empty value is absent', input: 'state=&code=abc', expected: { ok: { code: 'abc' } } },
    { name: 'a name without "=" is absent', input: 'state&code=abc', expected: { ok: { code: 'abc' } } },
    { name: 'empty pairs are skipped', input: '&&code=abc&&', expected: { ok: { code: 'abc' } } },
    { name: 'names are case-sensitive: two different parameters', input: 'State=a&state=b', expected: { ok: { State: 'a', state: 'b' } } },
    { name: 'a value with "="', input: 'state=a=b', expected: { ok: { state: 'a=b' } } },

    { name: 'a parameter twice', input: 'code=a&code=b', expected: refused('invalid_request', 'the parameter "code" is sent more than once') },
    { name: 'a parameter twice with the same value', input: 'scope=search&scope=search', expected: refused('invalid_request', '"scope"') },
    { name: 'a second copy empty', input: 'state=a&state=', expected: refused('invalid_request', '"state"') },
    { name: 'a second copy written differently (encoded name)', input: 'client_id=a&client%5Fid=b', expected: refused('invalid_request', '"client_id"') },
    // An empty copy counts as sent: "redirect_uri=&redirect_uri=X" is not redirect_uri=X,
    // or a reader taking the first value would see none where this one sees X.
    {
      name: 'an empty copy, then a value',
      input: 'redirect_uri=&redirect_uri=https%3A%2F%2Fevil.example%2F',
      expected: refused('invalid_request', '"redirect_uri"'),
    },
    { name: 'a copy without "=", then a value', input: 'code&code=abc', expected: refused('invalid_request', '"code"') },
    { name: 'two empty copies', input: 'state=&state=', expected: refused('invalid_request', '"state"') },
  ];
  table(rows, (text) => attempt(() => Object.fromEntries(parseParams(text))));
});

test('parseForm: only application/x-www-form-urlencoded bodies', () => {
  const FORM = 'application/x-www-form-urlencoded';
  const body = Buffer.from('grant_type=refresh_token&refresh_token=r%2Bt');
  const parsed = { ok: { grant_type: 'refresh_token', refresh_token: 'r+t' } };
  const rows: Array<Row<{ body?: Buffer; type: string }, { ok: Record<string, string> } | Refusal>> = [
    { name: 'the form type', input: { body, type: FORM }, expected: parsed },
    { name: 'with a charset', input: { body, type: `${FORM}; charset=UTF-8` }, expected: parsed },
    { name: 'with a charset and no space', input: { body, type: `${FORM};charset=utf-8` }, expected: parsed },
    { name: 'in capitals', input: { body, type: 'Application/X-WWW-Form-URLEncoded' }, expected: parsed },
    { name: 'with spaces around', input: { body, type: `  ${FORM}  ` }, expected: parsed },
    { name: 'no body', input: { type: FORM }, expected: { ok: {} } },
    { name: 'an empty body', input: { body: Buffer.alloc(0), type: FORM }, expected: { ok: {} } },
    { name: 'UTF-8 in the body', input: { body: Buffer.from('client_name=%C3%A9t%C3%A9'), type: FORM }, expected: { ok: { client_name: 'été' } } },
    { name: 'a duplicate in the body', input: { body: Buffer.from('code=a&code=b'), type: FORM }, expected: refused('invalid_request', '"code"') },

    {
      name: 'JSON',
      input: { body: Buffer.from('{"grant_type":"refresh_token"}'), type: 'application/json' },
      expected: refused('invalid_request', 'must be application/x-www-form-urlencoded', 'not application/json'),
    },
    { name: 'multipart', input: { body, type: 'multipart/form-data; boundary=x' }, expected: refused('invalid_request', 'not multipart/form-data') },
    { name: 'text/plain', input: { body, type: 'text/plain' }, expected: refused('invalid_request', 'not text/plain') },
    { name: 'no content type', input: { body, type: '' }, expected: refused('invalid_request', 'the body must be application/x-www-form-urlencoded') },
    { name: 'only a parameter', input: { body, type: '; charset=utf-8' }, expected: refused('invalid_request', 'x-www-form-urlencoded') },
    { name: 'a longer type that begins with the form type', input: { body, type: `${FORM}x` }, expected: refused('invalid_request', 'x-www-form-urlencodedx') },
  ];
  table(rows, ({ body: b, type }) => attempt(() => Object.fromEntries(parseForm(b, type))));
});

test('required: a present parameter, or invalid_request naming it', () => {
  const p = parseParams('code=abc&state=&redirect_uri=x');
  const rows: Array<Row<string, { ok: string } | Refusal>> = [
    { name: 'present', input: 'code', expected: { ok: 'abc' } },
    { name: 'present, another', input: 'redirect_uri', expected: { ok: 'x' } },
    { name: 'sent empty counts as absent', input: 'state', expected: refused('invalid_request', 'the parameter "state" is required') },
    { name: 'absent', input: 'code_verifier', expected: refused('invalid_request', 'the parameter "code_verifier" is required') },
    { name: 'names are case-sensitive', input: 'CODE', expected: refused('invalid_request', '"CODE"') },
  ];
  table(rows, (name) => attempt(() => required(p, name)));
});

// ---- resource.ts ----

test('acceptResource: URLs at or under the issuer', () => {
  const LOCAL = 'http://127.0.0.1:3000';
  const PATHED = 'https://code.example.com/trawl';
  const bad = refused('invalid_target');
  const rows: Array<Row<{ issuer: string; value: string }, { ok: string } | Refusal>> = [
    { name: 'local: the issuer itself', input: { issuer: LOCAL, value: LOCAL }, expected: { ok: LOCAL } },
    { name: 'local: with a trailing slash', input: { issuer: LOCAL, value: `${LOCAL}/` }, expected: { ok: `${LOCAL}/` } },
    { name: 'local: /api/mcp', input: { issuer: LOCAL, value: `${LOCAL}/api/mcp` }, expected: { ok: `${LOCAL}/api/mcp` } },
    { name: 'local: /api/mcp/ (echoed as given)', input: { issuer: LOCAL, value: `${LOCAL}/api/mcp/` }, expected: { ok: `${LOCAL}/api/mcp/` } },
    { name: 'local: /api', input: { issuer: LOCAL, value: `${LOCAL}/api` }, expected: { ok: `${LOCAL}/api` } },
    {
      name: 'local: scheme and host in capitals',
      input: { issuer: LOCAL, value: 'HTTP://127.0.0.1:3000/api/mcp' },
      expected: { ok: 'HTTP://127.0.0.1:3000/api/mcp' },
    },
    { name: 'local: localhost is another origin', input: { issuer: LOCAL, value: 'http://localhost:3000/api/mcp' }, expected: bad },
    { name: 'local: another port', input: { issuer: LOCAL, value: 'http://127.0.0.1:3001/api/mcp' }, expected: bad },
    { name: 'local: no port', input: { issuer: LOCAL, value: 'http://127.0.0.1/api/mcp' }, expected: bad },
    { name: 'local: https', input: { issuer: LOCAL, value: 'https://127.0.0.1:3000/api/mcp' }, expected: bad },
    {
      name: 'local: another server',
      input: { issuer: LOCAL, value: 'https://mcp.example.com/api/mcp' },
      expected: refused('invalid_target', 'its own API', 'https://mcp.example.com/api/mcp'),
    },
    { name: 'local: a fragment', input: { issuer: LOCAL, value: `${LOCAL}/api/mcp#x` }, expected: refused('invalid_target', 'fragment') },
    { name: 'local: an empty fragment', input: { issuer: LOCAL, value: `${LOCAL}/api/mcp#` }, expected: refused('invalid_target', 'fragment') },
    { name: 'local: a relative path', input: { issuer: LOCAL, value: '/api/mcp' }, expected: refused('invalid_target', 'absolute URL') },
    { name: 'local: garbage', input: { issuer: LOCAL, value: 'not a url' }, expected: refused('invalid_target', 'absolute URL') },
    { name: 'local: empty', input: { issuer: LOCAL, value: '' }, expected: refused('invalid_target', 'absolute URL') },
    { name: 'local: a URN', input: { issuer: LOCAL, value: 'urn:trawl:api' }, expected: bad },
    { name: 'local: a query', input: { issuer: LOCAL, value: `${LOCAL}/api/mcp?x=1` }, expected: refused('invalid_target', 'query') },
    {
      name: 'local: user information',
      input: { issuer: LOCAL, value: 'http://user@127.0.0.1:3000/' },
      expected: refused('invalid_target', 'user information'),
    },

    { name: 'pathed: the issuer itself', input: { issuer: PATHED, value: PATHED }, expected: { ok: PATHED } },
    { name: 'pathed: with a trailing slash', input: { issuer: PATHED, value: `${PATHED}/` }, expected: { ok: `${PATHED}/` } },
    { name: 'pathed: /api/mcp under it', input: { issuer: PATHED, value: `${PATHED}/api/mcp` }, expected: { ok: `${PATHED}/api/mcp` } },
    {
      name: 'pathed: the default port written out',
      input: { issuer: PATHED, value: 'https://code.example.com:443/trawl/api/mcp' },
      expected: { ok: 'https://code.example.com:443/trawl/api/mcp' },
    },
    { name: 'pathed: the origin without the path', input: { issuer: PATHED, value: 'https://code.example.com' }, expected: bad },
    { name: 'pathed: the origin root', input: { issuer: PATHED, value: 'https://code.example.com/' }, expected: bad },
    { name: 'pathed: /api/mcp at the root, not under the issuer', input: { issuer: PATHED, value: 'https://code.example.com/api/mcp' }, expected: bad },
    { name: 'pathed: a sibling path /trawlx', input: { issuer: PATHED, value: 'https://code.example.com/trawlx' }, expected: bad },
    { name: 'pathed: a sibling path /trawl-other/api/mcp', input: { issuer: PATHED, value: 'https://code.example.com/trawl-other/api/mcp' }, expected: bad },
    { name: 'pathed: /trawl/../other climbs out', input: { issuer: PATHED, value: 'https://code.example.com/trawl/../other' }, expected: bad },
    { name: 'pathed: /trawl/%2e%2e/other climbs out', input: { issuer: PATHED, value: 'https://code.example.com/trawl/%2e%2e/other' }, expected: bad },
    { name: 'pathed: /TRAWL (paths are case-sensitive)', input: { issuer: PATHED, value: 'https://code.example.com/TRAWL' }, expected: bad },
    { name: 'pathed: http instead of https', input: { issuer: PATHED, value: 'http://code.example.com/trawl' }, expected: bad },
    { name: 'pathed: another port', input: { issuer: PATHED, value: 'https://code.example.com:8443/trawl' }, expected: bad },
    { name: 'pathed: another host', input: { issuer: PATHED, value: 'https://evil.example.com/trawl' }, expected: bad },
    { name: 'pathed: a subdomain', input: { issuer: PATHED, value: 'https://x.code.example.com/trawl' }, expected: bad },
    { name: 'pathed: a fragment', input: { issuer: PATHED, value: `${PATHED}#api` }, expected: refused('invalid_target', 'fragment') },
    { name: 'pathed: garbage', input: { issuer: PATHED, value: '::::' }, expected: refused('invalid_target', 'absolute URL') },
  ];
  table(rows, ({ issuer, value }) => attempt(() => acceptResource(issuer, value)));
});

// ---- metadata.ts ----

test('challenge: the WWW-Authenticate value of a 401', () => {
  const ISSUER = 'https://code.example.com/trawl';
  const AS_API = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource"`;
  const AS_MCP = `resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/api/mcp"`;
  const rows: Array<Row<{ path: string; oauth: boolean; sent: boolean }, string>> = [
    { name: 'no OAuth, no credential: the realm only', input: { path: '/api/search', oauth: false, sent: false }, expected: 'Bearer realm="trawl"' },
    { name: 'no OAuth, at /api/mcp: still the realm only', input: { path: '/api/mcp', oauth: false, sent: false }, expected: 'Bearer realm="trawl"' },
    { name: 'no OAuth, a credential sent', input: { path: '/api/search', oauth: false, sent: true }, expected: 'Bearer realm="trawl", error="invalid_token"' },
    {
      name: 'OAuth at /api/mcp: the tool server metadata',
      input: { path: '/api/mcp', oauth: true, sent: false },
      expected: `Bearer realm="trawl", ${AS_MCP}, scope="search"`,
    },
    {
      name: 'OAuth under /api/mcp/',
      input: { path: '/api/mcp/session', oauth: true, sent: false },
      expected: `Bearer realm="trawl", ${AS_MCP}, scope="search"`,
    },
    {
      name: 'OAuth at /api/mcpx: the API metadata',
      input: { path: '/api/mcpx', oauth: true, sent: false },
      expected: `Bearer realm="trawl", ${AS_API}, scope="search"`,
    },
    {
      name: 'OAuth at another API path',
      input: { path: '/api/search', oauth: true, sent: false },
      expected: `Bearer realm="trawl", ${AS_API}, scope="search"`,
    },
    { name: 'OAuth at the root', input: { path: '/', oauth: true, sent: false }, expected: `Bearer realm="trawl", ${AS_API}, scope="search"` },
    {
      name: 'OAuth at /api/mcp with a credential sent',
      input: { path: '/api/mcp', oauth: true, sent: true },
      expected: `Bearer realm="trawl", ${AS_MCP}, scope="search", error="invalid_token"`,
    },
    {
      name: 'OAuth elsewhere with a credential sent',
      input: { path: '/api/repos', oauth: true, sent: true },
      expected: `Bearer realm="trawl", ${AS_API}, scope="search", error="invalid_token"`,
    },
  ];
  table(rows, ({ path, oauth, sent }) => challenge(ISSUER, path, oauth, sent));
});

test('authorizationServerMetadata: the issuer and every endpoint under it', () => {
  const issuers = ['http://127.0.0.1:3000', 'https://code.example.com/trawl'];
  const fields = {
    authorization_endpoint: ENDPOINTS.authorize,
    token_endpoint: ENDPOINTS.token,
    registration_endpoint: ENDPOINTS.register,
    revocation_endpoint: ENDPOINTS.revoke,
  } as const;
  const rows: Array<Row<{ issuer: string; field: string }, { value: string; under: boolean }>> = issuers.flatMap((issuer) => [
    { name: `${issuer}: issuer`, input: { issuer, field: 'issuer' }, expected: { value: issuer, under: false } },
    ...Object.entries(fields).map(([field, path]) => ({
      name: `${issuer}: ${field}`,
      input: { issuer, field },
      expected: { value: `${issuer}${path}`, under: true },
    })),
  ]);
  table(rows, ({ issuer, field }) => {
    const value = String(authorizationServerMetadata(issuer)[field]);
    return { value, under: value.startsWith(`${issuer}/`) };
  });
  const m = authorizationServerMetadata('https://code.example.com/trawl');
  assert.deepEqual(m.code_challenge_methods_supported, ['S256'], 'S256 only: no "plain"');
  assert.deepEqual(m.response_types_supported, ['code']);
  assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
  assert.equal(m.authorization_response_iss_parameter_supported, true);
});

// ---- consent-page.ts ----

test('escapeHtml', () => {
  const rows: Array<Row<string, string>> = [
    { name: 'plain text unchanged', input: 'Claude Code 1.0', expected: 'Claude Code 1.0' },
    { name: 'empty', input: '', expected: '' },
    { name: '&', input: 'a & b', expected: 'a &amp; b' },
    { name: '< and >', input: '<script>', expected: '&lt;script&gt;' },
    { name: 'double quote', input: '"x"', expected: '&quot;x&quot;' },
    { name: 'single quote', input: "it's", expected: 'it&#39;s' },
    { name: 'an entity is escaped again, not kept', input: '&amp;', expected: '&amp;amp;' },
    {
      name: 'every special character at once',
      input: `<a href="x" onclick='y'>&</a>`,
      expected: '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    },
    { name: 'non-ASCII unchanged', input: 'Ünïcødé ✓', expected: 'Ünïcødé ✓' },
  ];
  table(rows, escapeHtml);
});

test('consentPage: nothing the client sent appears unescaped', () => {
  const client = (name: string): OAuthClientRecord => ({
    id: 'oac_0123456789abcdef01234567',
    name,
    redirectUris: ['http://127.0.0.1:53682/callback'],
    metadata: { client_name: name },
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  const request = (name: string, sent: Record<string, string>, redirectUri = 'http://127.0.0.1:53682/callback'): AuthorizationRequest => ({
    client: client(name),
    redirectUri,
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    scope: 'search',
    params: new Map(Object.entries({ client_id: 'oac_0123456789abcdef01234567', response_type: 'code', ...sent })),
  });
  const XSS = '<script>alert(1)</script>';
  const BREAKOUT = '"><img src=x onerror=alert(1)>';
  const QUOTE = "' autofocus onfocus='alert(1)";

  interface Case {
    request: AuthorizationRequest;
    error?: string;
    /** Strings that must not appear as such in the page. */
    hostile: string[];
  }
  interface Seen {
    /** Hostile strings found as they are. */
    raw: string[];
    /** Hostile strings whose escaped form is missing. */
    escapedMissing: string[];
    scripts: number;
  }
  const clean: Seen = { raw: [], escapedMissing: [], scripts: 0 };
  const rows: Array<Row<Case, Seen>> = [
    { name: 'a script in the client name', input: { request: request(XSS, {}), hostile: [XSS] }, expected: clean },
    { name: 'an attribute breakout in the client name', input: { request: request(BREAKOUT, {}), hostile: [BREAKOUT] }, expected: clean },
    { name: 'a single-quote breakout in the client name', input: { request: request(QUOTE, {}), hostile: [QUOTE] }, expected: clean },
    { name: 'an ampersand entity in the client name', input: { request: request('A &lt;b&gt;', {}), hostile: ['A &lt;b&gt;'] }, expected: clean },
    { name: 'a breakout in the state value', input: { request: request('App', { state: BREAKOUT }), hostile: [BREAKOUT] }, expected: clean },
    {
      name: 'a script in the redirect_uri value',
      input: { request: request('App', { redirect_uri: `http://127.0.0.1:1/cb?x=${XSS}` }), hostile: [XSS] },
      expected: clean,
    },
    { name: 'a breakout in a parameter name', input: { request: request('App', { [BREAKOUT]: 'v' }), hostile: [BREAKOUT] }, expected: clean },
    { name: 'a single-quote breakout in resource', input: { request: request('App', { resource: QUOTE }), hostile: [QUOTE] }, expected: clean },
    { name: 'a script in the error message', input: { request: request('App', {}), error: `bad key ${XSS}`, hostile: [XSS] }, expected: clean },
    {
      name: 'everything hostile at once',
      input: { request: request(XSS, { state: BREAKOUT, scope: QUOTE, [XSS]: BREAKOUT }), error: BREAKOUT, hostile: [XSS, BREAKOUT, QUOTE] },
      expected: clean,
    },
  ];
  table(rows, ({ request: r, error, hostile }): Seen => {
    const page = consentPage(r, 'https://code.example.com/trawl', 90 * 86_400_000, error);
    return {
      raw: hostile.filter((h) => page.includes(h)),
      escapedMissing: hostile.filter((h) => !page.includes(escapeHtml(h))),
      scripts: page.match(/<script/gi)?.length ?? 0,
    };
  });

  // The API key and the decision are not carried in hidden fields (a re-shown page after a
  // wrong key would otherwise put the key into the HTML).
  const page = consentPage(
    request('App', { api_key: 'svk_secret_value', decision: 'allow', state: 's' }),
    'http://127.0.0.1:3000',
    45 * 86_400_000,
    'wrong key',
  );
  assert.ok(
    page.includes('renewed for up to 30 days after its last use, for at most 45 days. It ends sooner when you revoke it, or the API key you enter here.'),
    'how long the consent lasts, and what ends it',
  );
  assert.ok(!page.includes('svk_secret_value'), 'the API key is not echoed');
  assert.ok(!/<input type="hidden" name="decision"/.test(page), 'the decision is not a hidden field');
  assert.ok(page.includes('<input type="hidden" name="state" value="s">'), 'other parameters are');
  assert.ok(page.includes('<code>127.0.0.1:53682</code>'), 'the destination host is shown');
  assert.ok(
    consentPage(request('App', {}, 'cursor://x/cb'), 'http://127.0.0.1:3000', 90 * 86_400_000).includes('<code>cursor://</code>'),
    "an app's scheme is shown",
  );
});

// ---- auth/entitlements.ts ----

test('Entitlements.missing("oauth"): the installed license, read at every call', async () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const other = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const license = (entitlements: string[], o: { id?: string; issuedAt?: string; key?: string } = {}): string =>
    signLicense(
      { id: o.id ?? 'L-1', licensee: 'Test Org', entitlements, issuedAt: o.issuedAt ?? '2026-01-01T00:00:00Z', expiresAt: '2027-01-01T00:00:00Z' },
      o.key ?? PRIVATE_PEM,
    );

  const store = new MemoryLicenseStore();
  let clock = new Date('2026-06-01T00:00:00Z');
  const entitlements = new Entitlements(store, [PUBLIC_PEM], () => clock);

  // One Entitlements, one store: each row first changes the store or the clock, then asks.
  type Step = { install?: string; at?: string };
  const rows: Array<Row<Step, RegExp | undefined>> = [
    { name: 'no license installed', input: {}, expected: /^no license installed$/ },
    {
      name: 'a license without "oauth"',
      input: { install: license(['org-management', 'scoped-access-tokens']) },
      expected: /does not include the "oauth" entitlement/,
    },
    { name: 'the same text asked again', input: {}, expected: /does not include the "oauth"/ },
    { name: 'replaced by one with "oauth": granted at once', input: { install: license(['oauth'], { id: 'L-2' }) }, expected: undefined },
    { name: 'one millisecond before expiry', input: { at: '2026-12-31T23:59:59.999Z' }, expected: undefined },
    { name: 'at the expiry instant', input: { at: '2027-01-01T00:00:00.000Z' }, expected: /license L-2 expired at 2027-01-01T00:00:00Z/ },
    { name: 'long after expiry', input: { at: '2030-01-01T00:00:00Z' }, expected: /expired/ },
    { name: 'the clock set back: granted again', input: { at: '2026-06-01T00:00:00Z' }, expected: undefined },
    {
      name: 'replaced by one signed with an untrusted key',
      input: { install: license(['oauth'], { key: other }) },
      expected: /^installed license is invalid: .*signature is not valid/,
    },
    { name: 'replaced by text that is not a license', input: { install: 'not json' }, expected: /^installed license is invalid: license file is not JSON/ },
    { name: 'replaced by a good one with more entitlements', input: { install: license(['org-management', 'oauth'], { id: 'L-3' }) }, expected: undefined },
    {
      name: 'replaced by one issued in the future',
      input: { install: license(['oauth'], { id: 'L-4', issuedAt: '2026-09-01T00:00:00Z' }) },
      expected: /license L-4 is not valid until/,
    },
    { name: 'the clock reaches its issue time', input: { at: '2026-09-01T00:00:00Z' }, expected: undefined },
    {
      name: 'replaced by one without "oauth" again: refused at once',
      input: { install: license(['scoped-access-tokens'], { id: 'L-5' }) },
      expected: /does not include the "oauth"/,
    },
  ];
  await tableInTurn(rows, async ({ install, at }) => {
    if (install !== undefined) await store.putLicense(install);
    if (at !== undefined) clock = new Date(at);
    return entitlements.missing('oauth');
  });
  assert.match((await entitlements.missing('no-such-entitlement')) ?? '', /does not include the "no-such-entitlement"/);
  assert.equal((await new Entitlements(store, [], () => clock).missing('oauth'))?.startsWith('installed license is invalid'), true, 'no trusted keys');
});
