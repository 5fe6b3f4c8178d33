// The configuration's `signIn` section (docs/configuration.md, docs/identity.md "Single
// sign-on"): what valid sections load as, defaults included, and what invalid ones are
// told, each problem at its JSON pointer. Table tests, like config.test.ts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema, ConfigError, defaultConfig, parseConfig } from '../../daemon/config/load.ts';
import type { SignInConfig } from '../../daemon/config/types.ts';

const FILE = '/etc/trawl/trawl.json';
const PUBLIC = { publicUrl: 'https://search.example.com' };
const SECRET = { env: 'SSO_SECRET' };

function signInOf(doc: unknown): SignInConfig {
  return parseConfig(JSON.stringify(doc, null, 2), FILE).signIn;
}

const valid: Array<{ name: string; doc: unknown; expected: SignInConfig }> = [
  { name: 'absent: no providers, members only by API key', doc: {}, expected: { providers: {}, defaultRole: 'member', provision: true } },
  {
    name: 'an OpenID Connect provider: default scopes, the issuer kept exactly as written',
    doc: {
      settings: PUBLIC,
      signIn: {
        providers: {
          corp: { type: 'oidc', issuer: 'https://login.example.com/realms/corp/', clientId: 'trawl', clientSecret: SECRET, displayName: 'Corp SSO' },
        },
      },
    },
    expected: {
      providers: {
        corp: {
          type: 'oidc',
          issuer: 'https://login.example.com/realms/corp/',
          clientId: 'trawl',
          clientSecret: SECRET,
          displayName: 'Corp SSO',
          scopes: ['openid', 'email', 'profile'],
        },
      },
      defaultRole: 'member',
      provision: true,
    },
  },
  {
    name: 'GitHub with its defaults; allowed domains in lower case; owners provisioned',
    doc: {
      settings: PUBLIC,
      signIn: { providers: { gh: { type: 'github', clientId: 'Iv1.abc', clientSecret: SECRET } }, allowedDomains: ['Example.COM'], defaultRole: 'owner' },
    },
    expected: {
      providers: {
        gh: {
          type: 'github',
          url: 'https://github.com',
          clientId: 'Iv1.abc',
          clientSecret: SECRET,
          displayName: 'GitHub',
          scopes: ['read:user', 'user:email'],
        },
      },
      allowedDomains: ['example.com'],
      defaultRole: 'owner',
      provision: true,
    },
  },
  {
    name: 'GitHub linked to a connection asks for the repositories too; GitLab self-hosted, trailing slash dropped',
    doc: {
      settings: PUBLIC,
      connections: { gh: { type: 'github', orgs: ['acme'] }, gl: { type: 'gitlab', url: 'https://gitlab.example.com', groups: ['g'] } },
      signIn: {
        providers: {
          github: { type: 'github', clientId: 'a', clientSecret: SECRET, connection: 'gh' },
          gitlab: { type: 'gitlab', url: 'https://gitlab.example.com/', clientId: 'b', clientSecret: SECRET, connection: 'gl', displayName: 'Our GitLab' },
        },
        provision: false,
      },
    },
    expected: {
      providers: {
        github: {
          type: 'github',
          url: 'https://github.com',
          clientId: 'a',
          clientSecret: SECRET,
          displayName: 'GitHub',
          scopes: ['read:user', 'user:email', 'repo'],
          connection: 'gh',
        },
        gitlab: {
          type: 'gitlab',
          url: 'https://gitlab.example.com',
          clientId: 'b',
          clientSecret: SECRET,
          displayName: 'Our GitLab',
          scopes: ['read_user', 'read_api'],
          connection: 'gl',
        },
      },
      defaultRole: 'member',
      provision: false,
    },
  },
  {
    name: 'scopes as given; http on a loopback address',
    doc: {
      settings: { publicUrl: 'http://127.0.0.1:3000' },
      signIn: {
        providers: {
          dev: {
            type: 'oidc',
            issuer: 'http://127.0.0.1:8080',
            clientId: 'c',
            clientSecret: SECRET,
            displayName: 'Dev',
            scopes: ['openid', 'email', 'groups'],
          },
          gl: { type: 'gitlab', url: 'http://localhost:8929', clientId: 'c', clientSecret: SECRET, scopes: ['read_user', 'openid'] },
        },
      },
    },
    expected: {
      providers: {
        dev: { type: 'oidc', issuer: 'http://127.0.0.1:8080', clientId: 'c', clientSecret: SECRET, displayName: 'Dev', scopes: ['openid', 'email', 'groups'] },
        gl: { type: 'gitlab', url: 'http://localhost:8929', clientId: 'c', clientSecret: SECRET, displayName: 'GitLab', scopes: ['read_user', 'openid'] },
      },
      defaultRole: 'member',
      provision: true,
    },
  },
];

for (const { name, doc, expected } of valid) {
  test(`valid signIn: ${name}`, () => {
    assert.deepEqual(signInOf(doc), expected);
  });
}

const oidc = (extra: Record<string, unknown> = {}) => ({
  type: 'oidc',
  issuer: 'https://idp.example.com',
  clientId: 'c',
  clientSecret: SECRET,
  displayName: 'IdP',
  ...extra,
});

const invalid: Array<{ name: string; doc: unknown; problems: string[] }> = [
  {
    name: 'a provider without settings.publicUrl',
    doc: { signIn: { providers: { corp: oidc() } } },
    problems: [
      '/signIn/providers: settings.publicUrl must be set when a sign-in provider is configured: the providers send people back to <publicUrl>/auth/corp/callback, the redirect URI registered with them',
    ],
  },
  {
    name: 'unknown type, missing type, bad provider name',
    doc: { settings: PUBLIC, signIn: { providers: { a: { type: 'saml' }, b: { clientId: 'x' }, 'c d': oidc() } } },
    problems: [
      '/signIn/providers/a/type: unknown sign-in provider type "saml"; allowed types: "oidc", "github", "gitlab"',
      '/signIn/providers/b: missing required property "type", one of "oidc", "github", "gitlab"',
      '/signIn/providers/c d: invalid provider name "c d": must be a letter or digit followed by up to 63 letters, digits, ".", "_" or "-"',
    ],
  },
  {
    name: 'an OpenID Connect provider missing its issuer, client and name',
    doc: { settings: PUBLIC, signIn: { providers: { corp: { type: 'oidc' } } } },
    problems: [
      '/signIn/providers/corp: missing required property "issuer"',
      '/signIn/providers/corp: missing required property "clientId"',
      '/signIn/providers/corp: missing required property "clientSecret"',
      '/signIn/providers/corp: missing required property "displayName"',
    ],
  },
  {
    name: 'a secret written in the file, an unknown key',
    doc: { settings: PUBLIC, signIn: { providers: { corp: oidc({ clientSecret: 'hunter2', clientSecrets: 'x' }) } } },
    problems: [
      '/signIn/providers/corp/clientSecret: must be {"env": "NAME"}: secrets are never written in the file',
      '/signIn/providers/corp/clientSecrets: unknown property "clientSecrets" (did you mean "clientSecret"?)',
    ],
  },
  {
    name: 'plain http to a host that is not loopback',
    doc: {
      settings: PUBLIC,
      signIn: {
        providers: {
          corp: oidc({ issuer: 'http://idp.example.com' }),
          gh: { type: 'github', url: 'http://github.example.com', clientId: 'x', clientSecret: SECRET },
        },
      },
    },
    problems: [
      '/signIn/providers/corp/issuer: must be https:// (http:// only on a loopback address): over plain http anyone on the network path could answer for the provider, and sign in as anybody',
      '/signIn/providers/gh/url: must be https:// (http:// only on a loopback address)',
    ],
  },
  {
    name: 'OpenID Connect scopes without "openid"; a scope with a space; an empty list',
    doc: { settings: PUBLIC, signIn: { providers: { a: oidc({ scopes: ['email'] }), b: oidc({ scopes: ['openid email'] }), c: oidc({ scopes: [] }) } } },
    problems: [
      '/signIn/providers/a/scopes: must include "openid": without it the provider answers with no ID token',
      '/signIn/providers/b/scopes/0: must be an OAuth scope: printable ASCII characters other than space',
      '/signIn/providers/c/scopes: must not be empty',
    ],
  },
  {
    name: 'a host provider whose connection is missing, of another type, or on another host',
    doc: {
      settings: PUBLIC,
      connections: { gl: { type: 'gitlab', groups: ['g'] }, gh: { type: 'github', url: 'https://github.example.com', orgs: ['o'] } },
      signIn: {
        providers: {
          a: { type: 'github', clientId: 'x', clientSecret: SECRET, connection: 'nope' },
          b: { type: 'github', clientId: 'x', clientSecret: SECRET, connection: 'gl' },
          c: { type: 'github', clientId: 'x', clientSecret: SECRET, connection: 'gh' },
          d: oidc({ connection: 'gh' }),
        },
      },
    },
    problems: [
      '/signIn/providers/a/connection: no connection "nope" in /connections',
      '/signIn/providers/b/connection: connection "gl" is of type "gitlab": a github provider links accounts of a github connection',
      '/signIn/providers/c/connection: connection "gh" is on https://github.example.com, this provider on https://github.com: an account on one host says nothing of the other',
      '/signIn/providers/d/connection: unknown property "connection"',
    ],
  },
  {
    name: 'domains, role and provisioning of the wrong form',
    doc: { signIn: { allowedDomains: ['example.com', '@example.org', 'example.com'], defaultRole: 'admin', provision: 'yes' } },
    problems: [
      '/signIn/allowedDomains/1: must be a domain name, the part of an email address after "@" ("example.com"), not "@example.org"',
      '/signIn/allowedDomains/2: "example.com" is listed twice',
      '/signIn/defaultRole: must be one of "member", "owner", not "admin"',
      '/signIn/provision: must be true or false, not "yes"',
    ],
  },
  {
    name: 'an empty list of allowed domains (to provision nobody, provision is false)',
    doc: { signIn: { allowedDomains: [] } },
    problems: ['/signIn/allowedDomains: must not be empty'],
  },
];

for (const { name, doc, problems } of invalid) {
  test(`invalid signIn: ${name}`, () => {
    let error: unknown;
    try {
      signInOf(doc);
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    const lines = error.message.split('\n');
    for (const problem of problems)
      assert.ok(
        lines.some((l) => l.startsWith(`${FILE}: ${problem}`)),
        `missing ${JSON.stringify(problem)} in:\n${error.message}`,
      );
    assert.equal(lines.length, problems.length, `expected ${problems.length} problem(s):\n${error.message}`);
  });
}

test("defaultConfig's signIn has no provider, and the schema's default annotations are the loader's defaults", () => {
  const defs = configSchema.$defs as Record<string, { properties: Record<string, { default?: unknown }> }>;
  const section = defs.signIn!.properties;
  assert.deepEqual(defaultConfig().signIn, {
    providers: section.providers!.default,
    defaultRole: section.defaultRole!.default,
    provision: section.provision!.default,
  });
  const loaded = signInOf({
    settings: PUBLIC,
    signIn: { providers: { gh: { type: 'github', clientId: 'x', clientSecret: SECRET }, gl: { type: 'gitlab', clientId: 'x', clientSecret: SECRET } } },
  });
  for (const type of ['github', 'gitlab'] as const) {
    const props = defs[`${type}SignInProvider`]!.properties;
    const p = loaded.providers[type === 'github' ? 'gh' : 'gl'] as { url: string; displayName: string };
    assert.equal(p.url, props.url!.default);
    assert.equal(p.displayName, props.displayName!.default);
  }
});
