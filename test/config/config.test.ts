// The configuration file (docs/configuration.md, "The configuration file" and
// "Connections"): what a valid file loads as, defaults included, and what an invalid one is
// told, every problem at once with its JSON pointer. The schema documents itself: every
// property has a description, and its default annotations are the loader's defaults.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_MAX_BYTES, ConfigError, configSchema, DEFAULT_CLUSTER, defaultConfig, loadConfig, parseConfig } from '../../daemon/config/load.ts';
import type { Config, Connection, Excludes, Revisions } from '../../daemon/config/types.ts';
import { CONTEXT_DESCRIPTION_MAX, CONTEXT_GLOB_MAX, CONTEXT_NAME, CONTEXT_TOPIC_MAX } from '../../daemon/config/contexts.ts';

const FILE = '/etc/trawl/trawl.json';

const noRevisions = (): Revisions => ({ branches: [], tags: [] });
const noExcludes = (): Excludes => ({ forks: false, archived: false, repos: [] });

function load(doc: unknown): Config {
  return parseConfig(typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2), FILE);
}

function withConnections(connections: Record<string, Connection>): Config {
  return { ...defaultConfig(), path: FILE, connections };
}

// ---------------------------------------------------------------------------------------
// Valid files

const valid: Array<{ name: string; doc: unknown; expected: Config }> = [
  { name: 'empty object: every default', doc: {}, expected: { ...defaultConfig(), path: FILE } },
  {
    name: 'partial settings are merged with the defaults',
    doc: {
      $schema: './trawl.schema.json',
      settings: { anonymousAccess: true, search: { timeoutMs: 5000 }, rateLimit: { store: 'redis://cache:6379' }, symbols: false },
    },
    expected: {
      ...defaultConfig(),
      path: FILE,
      settings: {
        ...defaultConfig().settings,
        anonymousAccess: true,
        search: { maxMatches: 100000, timeoutMs: 5000, maxConcurrent: 4, maxConcurrentPerCaller: 4, maxQueued: 100, maxQueuedPerCaller: 50 },
        rateLimit: { requestsPerDay: 10000, store: 'redis://cache:6379' },
        symbols: false,
      },
    },
  },
  {
    name: 'the OAuth grant lifetime',
    doc: { settings: { oauth: { grantLifetimeDays: 30 } } },
    expected: { ...defaultConfig(), path: FILE, settings: { ...defaultConfig().settings, oauth: { grantLifetimeDays: 30 } } },
  },
  {
    name: 'a cluster: the store and Redis given, the rest defaults',
    doc: { cluster: { store: 'postgresql://trawl@db.internal:5432/trawl', redis: 'redis://cache:6379/2' } },
    expected: {
      ...defaultConfig(),
      path: FILE,
      cluster: {
        store: 'postgresql://trawl@db.internal:5432/trawl',
        redis: 'redis://cache:6379/2',
        replicationFactor: 2,
        name: 'trawl',
        heartbeatMs: 1000,
        nodeTimeoutMs: 5000,
      },
    },
  },
  {
    name: 'a cluster with every setting',
    doc: {
      cluster: {
        store: 'postgres://db/search?sslmode=require',
        redis: 'rediss://cache:6380',
        replicationFactor: 3,
        name: 'eu-1',
        heartbeatMs: 200,
        nodeTimeoutMs: 600,
      },
    },
    expected: {
      ...defaultConfig(),
      path: FILE,
      cluster: {
        store: 'postgres://db/search?sslmode=require',
        redis: 'rediss://cache:6380',
        replicationFactor: 3,
        name: 'eu-1',
        heartbeatMs: 200,
        nodeTimeoutMs: 600,
      },
    },
  },
  {
    name: 'permissions from the code host, with groups and grants (emails in lower case)',
    doc: {
      settings: { permissions: 'code-host' },
      permissions: { groups: { 'team-a': ['A@Example.com'] }, grants: [{ groups: ['team-a'], users: ['b@example.com'], repos: ['team-a-*', 'tools/**'] }] },
    },
    expected: {
      ...defaultConfig(),
      path: FILE,
      settings: { ...defaultConfig().settings, permissions: 'code-host' },
      permissions: { groups: { 'team-a': ['a@example.com'] }, grants: [{ groups: ['team-a'], users: ['b@example.com'], repos: ['team-a-*', 'tools/**'] }] },
    },
  },
  {
    name: 'search contexts: include and exclude by repository glob, connection and topic (topics in lower case); absent lists are empty',
    doc: {
      connections: { gh: { type: 'github', orgs: ['acme'] } },
      contexts: {
        backend: {
          description: 'The services',
          include: { repos: ['github.com/acme/api-*'], connections: ['gh'], topics: ['Backend', 'backend'] },
          exclude: { repos: ['**/legacy-*'] },
        },
        'all-but-forks.2': { exclude: { topics: ['fork'] } },
        everything: {},
      },
    },
    expected: {
      ...defaultConfig(),
      path: FILE,
      connections: {
        gh: { type: 'github', url: 'https://github.com', exclude: noExcludes(), revisions: noRevisions(), orgs: ['acme'], users: [], repos: [] },
      },
      contexts: {
        backend: {
          description: 'The services',
          include: { repos: ['github.com/acme/api-*'], connections: ['gh'], topics: ['backend'] },
          exclude: { repos: ['**/legacy-*'], connections: [], topics: [] },
        },
        'all-but-forks.2': { exclude: { repos: [], connections: [], topics: ['fork'] } },
        everything: {},
      },
    },
  },
  {
    name: 'license keys',
    doc: { license: { publicKeys: ['-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n'] } },
    expected: {
      ...defaultConfig(),
      path: FILE,
      license: { publicKeys: ['-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n'] },
    },
  },
  {
    name: "git, minimal: a relative path resolves against the file's directory",
    doc: { connections: { app: { type: 'git', url: 'repos/app' } } },
    expected: withConnections({ app: { type: 'git', url: '/etc/trawl/repos/app', revisions: noRevisions(), visibility: 'public' } }),
  },
  {
    name: 'git: a private connection (no host to ask who may read: grants decide)',
    doc: { connections: { app: { type: 'git', url: '/srv/app', visibility: 'private' } } },
    expected: withConnections({ app: { type: 'git', url: '/srv/app', revisions: noRevisions(), visibility: 'private' } }),
  },
  {
    name: 'git: globs keep their glob part, URLs and absolute paths are kept, ~ is the home directory',
    doc: {
      connections: {
        glob: { type: 'git', url: '../srv/*/x/../**', revisions: { branches: ['main', 'release/*'], tags: ['v*'] } },
        abs: { type: 'git', url: '/srv/repos/*' },
        file: { type: 'git', url: 'file:///srv/repos/app' },
        http: { type: 'git', url: 'https://git.example.com/app.git' },
        scp: { type: 'git', url: 'git@git.example.com:team/app.git' },
        home: { type: 'git', url: '~/src/app' },
      },
    },
    expected: withConnections({
      glob: { type: 'git', url: '/etc/srv/*/x/../**', revisions: { branches: ['main', 'release/*'], tags: ['v*'] }, visibility: 'public' },
      abs: { type: 'git', url: '/srv/repos/*', revisions: noRevisions(), visibility: 'public' },
      file: { type: 'git', url: 'file:///srv/repos/app', revisions: noRevisions(), visibility: 'public' },
      http: { type: 'git', url: 'https://git.example.com/app.git', revisions: noRevisions(), visibility: 'public' },
      scp: { type: 'git', url: 'git@git.example.com:team/app.git', revisions: noRevisions(), visibility: 'public' },
      home: { type: 'git', url: join(homedir(), 'src/app'), revisions: noRevisions(), visibility: 'public' },
    }),
  },
  {
    name: 'github, minimal: github.com',
    doc: { connections: { gh: { type: 'github', orgs: ['platform'] } } },
    expected: withConnections({
      gh: { type: 'github', url: 'https://github.com', exclude: noExcludes(), revisions: noRevisions(), orgs: ['platform'], users: [], repos: [] },
    }),
  },
  {
    name: 'github, full (the example of docs/configuration.md); a trailing "/" of the url is dropped',
    doc: {
      connections: {
        gh: {
          type: 'github',
          url: 'https://github.example.com/',
          token: { env: 'GH_TOKEN' },
          orgs: ['platform'],
          users: ['octocat'],
          repos: ['tools/cli'],
          exclude: { forks: true, archived: true, repos: ['platform/legacy-*'] },
          revisions: { branches: ['release/**'], tags: [] },
        },
      },
    },
    expected: withConnections({
      gh: {
        type: 'github',
        url: 'https://github.example.com',
        token: { env: 'GH_TOKEN' },
        exclude: { forks: true, archived: true, repos: ['platform/legacy-*'] },
        revisions: { branches: ['release/**'], tags: [] },
        orgs: ['platform'],
        users: ['octocat'],
        repos: ['tools/cli'],
      },
    }),
  },
  {
    name: 'cloneOrigins are kept as origins: the host lower-cased, a default port and a trailing "/" dropped',
    doc: {
      connections: {
        gl: { type: 'gitlab', url: 'http://gitlab.internal', cloneOrigins: ['https://GitLab.Example.com:443/', 'https://git.example.com:8443'], groups: ['g'] },
      },
    },
    expected: withConnections({
      gl: {
        type: 'gitlab',
        url: 'http://gitlab.internal',
        exclude: noExcludes(),
        cloneOrigins: ['https://gitlab.example.com', 'https://git.example.com:8443'],
        revisions: noRevisions(),
        groups: ['g'],
        users: [],
        projects: [],
      },
    }),
  },
  {
    name: 'gitlab, minimal: gitlab.com',
    doc: { connections: { gl: { type: 'gitlab', groups: ['backend/api'] } } },
    expected: withConnections({
      gl: { type: 'gitlab', url: 'https://gitlab.com', exclude: noExcludes(), revisions: noRevisions(), groups: ['backend/api'], users: [], projects: [] },
    }),
  },
  {
    name: 'gitlab, full',
    doc: {
      connections: {
        gl: {
          type: 'gitlab',
          url: 'http://gitlab.internal:8080',
          token: { env: 'GL' },
          groups: ['a'],
          users: ['u'],
          projects: ['a/b/c'],
          exclude: { archived: true },
          revisions: { tags: ['v*'] },
        },
      },
    },
    expected: withConnections({
      gl: {
        type: 'gitlab',
        url: 'http://gitlab.internal:8080',
        token: { env: 'GL' },
        exclude: { forks: false, archived: true, repos: [] },
        revisions: { branches: [], tags: ['v*'] },
        groups: ['a'],
        users: ['u'],
        projects: ['a/b/c'],
      },
    }),
  },
  {
    name: 'gitea, minimal: gitea.com',
    doc: { connections: { gt: { type: 'gitea', users: ['alice'] } } },
    expected: withConnections({
      gt: { type: 'gitea', url: 'https://gitea.com', exclude: noExcludes(), revisions: noRevisions(), orgs: [], users: ['alice'], repos: [] },
    }),
  },
  {
    name: 'gerrit, minimal: url only, nothing selected means every project',
    doc: { connections: { review: { type: 'gerrit', url: 'https://review.example.com' } } },
    expected: withConnections({
      review: { type: 'gerrit', url: 'https://review.example.com', exclude: noExcludes(), revisions: noRevisions(), projects: [] },
    }),
  },
  {
    name: 'gerrit, full',
    doc: {
      connections: {
        review: { type: 'gerrit', url: 'https://review.example.com/r', user: 'bot', token: { env: 'GERRIT_PASSWORD' }, projects: ['chromium/*'] },
      },
    },
    expected: withConnections({
      review: {
        type: 'gerrit',
        url: 'https://review.example.com/r',
        token: { env: 'GERRIT_PASSWORD' },
        exclude: noExcludes(),
        revisions: noRevisions(),
        user: 'bot',
        projects: ['chromium/*'],
      },
    }),
  },
  {
    name: 'bitbucket, minimal: cloud at bitbucket.org',
    doc: { connections: { bb: { type: 'bitbucket', workspaces: ['acme'] } } },
    expected: withConnections({
      bb: {
        type: 'bitbucket',
        url: 'https://bitbucket.org',
        deploymentType: 'cloud',
        exclude: noExcludes(),
        revisions: noRevisions(),
        workspaces: ['acme'],
        projects: [],
        repos: [],
      },
    }),
  },
  {
    name: 'bitbucket server with url, user and token',
    doc: {
      connections: {
        bbs: {
          type: 'bitbucket',
          deploymentType: 'server',
          url: 'https://bitbucket.example.com',
          user: 'ci',
          token: { env: 'BB' },
          projects: ['PROJ'],
          repos: ['OPS/deploy'],
        },
      },
    },
    expected: withConnections({
      bbs: {
        type: 'bitbucket',
        url: 'https://bitbucket.example.com',
        token: { env: 'BB' },
        deploymentType: 'server',
        user: 'ci',
        exclude: noExcludes(),
        revisions: noRevisions(),
        workspaces: [],
        projects: ['PROJ'],
        repos: ['OPS/deploy'],
      },
    }),
  },
  {
    name: 'azuredevops, minimal: dev.azure.com',
    doc: { connections: { ado: { type: 'azuredevops', orgs: ['contoso'] } } },
    expected: withConnections({
      ado: { type: 'azuredevops', url: 'https://dev.azure.com', exclude: noExcludes(), revisions: noRevisions(), orgs: ['contoso'], projects: [], repos: [] },
    }),
  },
  {
    name: 'azuredevops, full: project names may contain spaces',
    doc: {
      connections: {
        ado: {
          type: 'azuredevops',
          url: 'https://ado.example.com/tfs',
          token: { env: 'PAT' },
          projects: ['contoso/Fabrikam Fiber'],
          repos: ['contoso/Fabrikam Fiber/web'],
        },
      },
    },
    expected: withConnections({
      ado: {
        type: 'azuredevops',
        url: 'https://ado.example.com/tfs',
        token: { env: 'PAT' },
        exclude: noExcludes(),
        revisions: noRevisions(),
        orgs: [],
        projects: ['contoso/Fabrikam Fiber'],
        repos: ['contoso/Fabrikam Fiber/web'],
      },
    }),
  },
  {
    name: 'metrics access and trusted proxies',
    doc: { settings: { metrics: { auth: { env: 'TRAWL_METRICS_TOKEN' } }, http: { trustedProxies: ['10.0.0.5', '10.1.0.0/16', '::1', 'fd00::/8'] } } },
    expected: {
      ...defaultConfig(),
      path: FILE,
      settings: {
        ...defaultConfig().settings,
        metrics: { auth: { env: 'TRAWL_METRICS_TOKEN' } },
        http: { ...defaultConfig().settings.http, trustedProxies: ['10.0.0.5', '10.1.0.0/16', '::1', 'fd00::/8'] },
      },
    },
  },
  {
    name: 'metrics open to anyone, or to owners',
    doc: { settings: { metrics: { auth: 'owner' } } },
    expected: { ...defaultConfig(), path: FILE, settings: { ...defaultConfig().settings, metrics: { auth: 'owner' } } },
  },
  {
    name: 'a byte-order mark is ignored',
    doc: '\uFEFF{"settings": {"maxFileSize": 1024}}',
    expected: { ...defaultConfig(), path: FILE, settings: { ...defaultConfig().settings, maxFileSize: 1024 } },
  },
];

for (const { name, doc, expected } of valid) {
  test(`valid: ${name}`, () => {
    assert.deepEqual(load(doc), expected);
  });
}

// ---------------------------------------------------------------------------------------
// Invalid files: the message names each problem by file, pointer and reason

const invalid: Array<{ name: string; doc: unknown; fragments: string[]; lines?: number }> = [
  {
    name: 'syntax error: line and column of the missing comma',
    doc: '{\n  "settings": {\n    "maxFileSize": 10\n    "symbols": true\n  }\n}\n',
    fragments: ['trawl.json: line 3, column 22: invalid JSON: missing "," after the value of "maxFileSize"'],
    lines: 1,
  },
  {
    name: 'syntax error: trailing comma',
    doc: '{\n  "connections": {},\n}',
    fragments: ['trawl.json: line 3, column 1: invalid JSON: trailing comma'],
    lines: 1,
  },
  { name: 'syntax error: comment', doc: '{\n  // no\n}', fragments: ['line 2, column 3: invalid JSON: comments are not allowed'] },
  { name: 'syntax error: unquoted word', doc: '{"settings": {"symbols": yes}}', fragments: ['line 1, column 26: invalid JSON: unexpected word "yes"'] },
  {
    name: 'syntax error: unterminated',
    doc: '{"settings": {',
    fragments: ['line 1, column 15: invalid JSON: expected a property name in double quotes, found the end of the file'],
  },
  { name: 'empty file', doc: '', fragments: ['line 1, column 1: invalid JSON: the file is empty'] },
  { name: 'not an object', doc: '[]', fragments: ['trawl.json: /: must be an object, not a list'] },
  {
    name: 'metrics.auth: neither a choice nor a secret',
    doc: { settings: { metrics: { auth: 'public' } } },
    fragments: ['trawl.json: /settings/metrics/auth: must be "none", "owner" or {"env": "NAME"}, not "public"'],
    lines: 1,
  },
  {
    name: 'metrics.auth: a token written in the file',
    doc: { settings: { metrics: { auth: { token: 'hunter2hunter2hunter2' } } } },
    fragments: ['trawl.json: /settings/metrics/auth: must be "none", "owner" or {"env": "NAME"}, not an object'],
    lines: 1,
  },
  {
    name: 'trusted proxies that are not addresses or ranges',
    doc: { settings: { http: { trustedProxies: ['10.0.0.5', 'proxy.local', '10.0.0.0/33', '1:2:3::4::5', '::1/129'] } } },
    fragments: [
      'trawl.json: /settings/http/trustedProxies/1: "proxy.local" is not an IP address or CIDR range (e.g. "10.0.0.5", "10.0.0.0/8", "fd00::/8")',
      'trawl.json: /settings/http/trustedProxies/2: "10.0.0.0/33" is not an IP address or CIDR range',
      'trawl.json: /settings/http/trustedProxies/3: "1:2:3::4::5" is not an IP address or CIDR range',
      'trawl.json: /settings/http/trustedProxies/4: "::1/129" is not an IP address or CIDR range',
    ],
    lines: 4,
  },
  {
    name: 'cluster: a store that is not PostgreSQL, no redis, a heartbeat the timeout does not cover thrice',
    doc: { cluster: { store: 'mysql://db/trawl', redis: 'redis://cache:6379', replicationFactor: 0 } },
    fragments: ['trawl.json: /cluster/store', 'trawl.json: /cluster/replicationFactor'],
    lines: 2,
  },
  {
    name: 'cluster: the node timeout must cover three heartbeats',
    doc: { cluster: { store: 'postgresql://db/trawl', redis: 'redis://cache:6379', heartbeatMs: 2000 } },
    fragments: ['trawl.json: /cluster/heartbeatMs: nodeTimeoutMs (5000) must be at least three heartbeats (3 × heartbeatMs = 6000)'],
    lines: 1,
  },
  {
    name: 'permissions: a grant naming a group that is not defined',
    doc: { permissions: { groups: { ops: ['o@example.com'] }, grants: [{ groups: ['ops', 'devs'], repos: ['*'] }] } },
    fragments: ['trawl.json: /permissions/grants/0/groups/1: no group "devs" in /permissions/groups'],
    lines: 1,
  },
  {
    name: 'permissions: a grant naming nobody, or no repository',
    doc: { permissions: { grants: [{ repos: ['*'] }, { users: ['u@example.com'], repos: [] }] } },
    fragments: ['trawl.json: /permissions/grants/0', 'trawl.json: /permissions/grants/1/repos'],
  },
  {
    name: 'permissions: an unknown mode, a member that is not an email',
    doc: { settings: { permissions: 'host' }, permissions: { groups: { ops: ['root'] } } },
    fragments: ['trawl.json: /settings/permissions', 'trawl.json: /permissions/groups/ops/0'],
  },
  {
    name: 'contexts: a connection the file does not define, in include and in exclude',
    doc: {
      connections: { gh: { type: 'github', orgs: ['acme'] } },
      contexts: { web: { include: { connections: ['gh', 'gl'] }, exclude: { connections: ['old'] } } },
    },
    fragments: [
      'trawl.json: /contexts/web/include/connections/1: no connection "gl" in /connections',
      'trawl.json: /contexts/web/exclude/connections/0: no connection "old" in /connections',
    ],
    lines: 2,
  },
  {
    name: 'contexts: "global" is reserved',
    doc: { contexts: { global: { include: { topics: ['x'] } } } },
    fragments: ['trawl.json: /contexts/global: "global" is reserved: context:global searches every repository; choose another name'],
    lines: 1,
  },
  {
    name: 'contexts: names are lower case, start with a letter or digit, at most 64 characters',
    doc: { contexts: { Backend: {}, '-x': {}, [`a${'b'.repeat(64)}`]: {}, 'a b': {} } },
    fragments: [
      'trawl.json: /contexts/Backend: invalid property name "Backend": must be a lower-case letter or digit followed by up to 63 lower-case letters',
      'trawl.json: /contexts/-x: invalid property name "-x"',
      `trawl.json: /contexts/a${'b'.repeat(64)}: invalid property name`,
      'trawl.json: /contexts/a b: invalid property name "a b"',
    ],
    lines: 4,
  },
  {
    name: 'contexts: an empty selection, an empty list, an unknown key, a topic with a space, a repeated glob',
    doc: {
      contexts: {
        a: { include: {} },
        b: { include: { repos: [] } },
        c: { include: { repo: ['x'] } },
        d: { exclude: { topics: ['two words'] } },
        e: { include: { repos: ['x', 'x'] } },
      },
    },
    fragments: [
      'trawl.json: /contexts/a/include: must not be empty: give at least one of "repos", "connections", "topics"',
      'trawl.json: /contexts/b/include/repos: must not be empty',
      'trawl.json: /contexts/c/include/repo: unknown property "repo" (did you mean "repos"?)',
      'trawl.json: /contexts/d/exclude/topics/0: must be a code-host topic',
      'trawl.json: /contexts/e/include/repos/1: "x" is listed twice',
    ],
    lines: 5,
  },
  {
    name: 'unknown top-level key',
    doc: { setting: {} },
    fragments: ['trawl.json: /setting: unknown property "setting" (did you mean "settings"?)'],
    lines: 1,
  },
  {
    name: 'unknown top-level key without a near match lists the allowed ones',
    doc: { repositories: [] },
    fragments: [
      'trawl.json: /repositories: unknown property "repositories"; allowed here: "$schema", "settings", "connections", "permissions", "contexts", "signIn", "license", "cluster"',
    ],
  },
  {
    name: 'unknown connection type names the allowed types',
    doc: { connections: { x: { type: 'gitbucket', url: 'x' } } },
    fragments: [
      'trawl.json: /connections/x/type: unknown connection type "gitbucket"',
      'allowed types: "git", "github", "gitlab", "gitea", "gerrit", "bitbucket", "azuredevops"',
    ],
    lines: 1,
  },
  {
    name: 'connection without type',
    doc: { connections: { x: { url: 'x' } } },
    fragments: ['trawl.json: /connections/x: missing required property "type", one of "git", "github"'],
    lines: 1,
  },
  {
    name: 'plain-string token',
    doc: { connections: { gh: { type: 'github', orgs: ['o'], token: 'ghp_secret' } } },
    fragments: ['trawl.json: /connections/gh/token: must be {"env": "NAME"}: secrets are never written in the file; name the environment variable'],
    lines: 1,
  },
  {
    name: 'token object with the secret in it',
    doc: { connections: { gh: { type: 'github', orgs: ['o'], token: { value: 'ghp_secret' } } } },
    fragments: ['/connections/gh/token: must be {"env": "NAME"}', '/connections/gh/token/value: unknown property "value": a secret is only {"env": "NAME"}'],
    lines: 2,
  },
  {
    name: 'bad environment variable name',
    doc: { connections: { gh: { type: 'github', orgs: ['o'], token: { env: 'GH-TOKEN' } } } },
    fragments: ['/connections/gh/token/env: must be an environment variable name', 'not "GH-TOKEN"'],
  },
  {
    name: 'bad URL scheme',
    doc: { connections: { gl: { type: 'gitlab', url: 'ftp://gitlab.example.com', groups: ['g'] } } },
    fragments: ['trawl.json: /connections/gl/url: must be an http:// or https:// URL', 'not "ftp://gitlab.example.com"'],
    lines: 1,
  },
  {
    name: 'credentials in a URL',
    doc: { connections: { gl: { type: 'gitlab', url: 'https://me:pw@gitlab.example.com', groups: ['g'] } } },
    fragments: ['/connections/gl/url: must be an http:// or https:// URL', 'credentials go in "token": {"env": "NAME"}'],
  },
  {
    name: 'negative interval',
    doc: { settings: { reindexIntervalMs: -5 } },
    fragments: ['trawl.json: /settings/reindexIntervalMs: must be at least 60000, not -5'],
    lines: 1,
  },
  {
    name: 'out-of-range and mistyped numbers',
    doc: { settings: { search: { maxMatches: 2000000 }, syncConcurrency: 0, maxFileSize: '2MB', rateLimit: { requestsPerDay: 1.5 } } },
    fragments: [
      '/settings/search/maxMatches: must be at most 1000000, not 2000000',
      '/settings/syncConcurrency: must be at least 1, not 0',
      '/settings/maxFileSize: must be an integer, not "2MB"',
      '/settings/rateLimit/requestsPerDay: must be an integer, not 1.5',
    ],
    lines: 4,
  },
  {
    name: 'an OAuth grant lifetime out of range',
    doc: { settings: { oauth: { grantLifetimeDays: 0, refreshDays: 3 } } },
    fragments: ['/settings/oauth/grantLifetimeDays: must be at least 1, not 0', '/settings/oauth/refreshDays: unknown property "refreshDays"'],
    lines: 2,
  },
  {
    name: 'audit retention of no days',
    doc: { settings: { audit: { retentionDays: 0 } } },
    fragments: ['/settings/audit/retentionDays: must be at least 1, not 0'],
    lines: 1,
  },
  {
    name: 'audit retention mistyped',
    doc: { settings: { audit: { retentionDays: 7.5, keep: true } } },
    fragments: ['/settings/audit/retentionDays: must be an integer, not 7.5', '/settings/audit/keep: unknown property "keep"'],
  },
  {
    name: 'rate-limit store neither embedded nor redis',
    doc: { settings: { rateLimit: { store: 'memcached://x' } } },
    fragments: ['/settings/rateLimit/store: must be "embedded", or redis://host:port'],
  },
  {
    name: 'retryMaxMs below retryBaseMs',
    doc: { settings: { retryBaseMs: 1000, retryMaxMs: 500 } },
    fragments: ['/settings/retryMaxMs: retryMaxMs (500) must not be less than retryBaseMs (1000)'],
  },
  {
    name: 'missing url for gerrit',
    doc: { connections: { review: { type: 'gerrit' } } },
    fragments: ['trawl.json: /connections/review: missing required property "url"'],
    lines: 1,
  },
  {
    name: 'missing url for Bitbucket Server, and workspaces are cloud-only',
    doc: { connections: { bbs: { type: 'bitbucket', deploymentType: 'server', workspaces: ['w'] } } },
    fragments: [
      '/connections/bbs: nothing selected to index: add a non-empty "projects" or "repos" list (since "deploymentType" is "server")',
      '/connections/bbs: missing required property "url" (required when "deploymentType" is "server")',
      '/connections/bbs/workspaces: not allowed when "deploymentType" is "server"',
    ],
    lines: 3,
  },
  {
    name: 'bitbucket deploymentType outside the enum lists the allowed values',
    doc: { connections: { bb: { type: 'bitbucket', deploymentType: 'Server', workspaces: ['w'] } } },
    fragments: ['/connections/bb/deploymentType: must be one of "cloud", "server", not "Server" (did you mean "server"?)'],
  },
  {
    name: 'github with nothing selected',
    doc: { connections: { gh: { type: 'github', token: { env: 'GH' } } } },
    fragments: ['trawl.json: /connections/gh: nothing selected to index: add a non-empty "orgs", "users" or "repos" list'],
    lines: 1,
  },
  {
    name: 'gitlab with only empty lists selects nothing',
    doc: { connections: { gl: { type: 'gitlab', groups: [], projects: [] } } },
    fragments: ['/connections/gl: nothing selected to index: add a non-empty "groups", "users" or "projects" list'],
    lines: 1,
  },
  {
    name: 'gitea and azuredevops with nothing selected',
    doc: { connections: { gt: { type: 'gitea' }, ado: { type: 'azuredevops' } } },
    fragments: [
      '/connections/gt: nothing selected to index: add a non-empty "orgs", "users" or "repos" list',
      '/connections/ado: nothing selected to index: add a non-empty "orgs", "projects" or "repos" list',
    ],
    lines: 2,
  },
  {
    name: "typo'd property",
    doc: { connections: { app: { type: 'git', url: '.', revisions: { brances: ['main'] } } } },
    fragments: ['trawl.json: /connections/app/revisions/brances: unknown property "brances" (did you mean "branches"?)'],
    lines: 1,
  },
  {
    name: 'property of another connection type',
    doc: { connections: { gh: { type: 'github', groups: ['g'] } } },
    fragments: [
      '/connections/gh/groups: unknown property "groups"; allowed here: "type", "url", "token", "webhookSecret", "cloneOrigins", "orgs", "users", "repos", "exclude", "history", "revisions"',
    ],
  },
  {
    name: 'cloneOrigins that are not origins',
    doc: {
      connections: {
        gt: {
          type: 'gitea',
          orgs: ['o'],
          cloneOrigins: [
            'https://git.example.com/repos',
            'git.example.com',
            'ssh://git.example.com',
            'file:///srv',
            'https://user:pw@git.example.com',
            'https://git.example.com:99999',
            'https://[zz]',
          ],
        },
        review: { type: 'gerrit', url: 'https://review.example.com', cloneOrigins: ['https://other.example.com'] },
      },
    },
    fragments: [
      '/connections/gt/cloneOrigins/0: must be an http:// or https:// origin: scheme, host and optional port, nothing after them',
      '/connections/gt/cloneOrigins/1: must be an http:// or https:// origin',
      '/connections/gt/cloneOrigins/2: must be an http:// or https:// origin',
      '/connections/gt/cloneOrigins/3: must be an http:// or https:// origin',
      '/connections/gt/cloneOrigins/4: must be an http:// or https:// origin',
      '/connections/gt/cloneOrigins/5: "https://git.example.com:99999" is not a valid origin',
      '/connections/gt/cloneOrigins/6: "https://[zz]" is not a valid origin',
      '/connections/review/cloneOrigins: unknown property "cloneOrigins"',
    ],
    lines: 8,
  },
  {
    name: 'bad connection name',
    doc: { connections: { 'my repos': { type: 'git', url: '.' }, '-x': { type: 'git', url: '.' } } },
    fragments: [
      'trawl.json: /connections/my repos: invalid connection name "my repos": must be a letter or digit followed by up to 63 letters',
      'trawl.json: /connections/-x: invalid connection name "-x"',
    ],
    lines: 2,
  },
  {
    name: 'a connection name given twice',
    doc: '{"connections": {\n  "a": {"type": "git", "url": "."},\n  "a": {"type": "git", "url": ".."}\n}}',
    fragments: ['trawl.json: /connections/a: "a" is given twice (first on line 2)'],
    lines: 1,
  },
  {
    name: 'repository names in the wrong form',
    doc: { connections: { gh: { type: 'github', orgs: ['a/b'], repos: ['cli'] } } },
    fragments: [
      '/connections/gh/orgs/0: must be a single name (no "/"), not "a/b"',
      '/connections/gh/repos/0: must be a path of two names, "owner/name", not "cli"',
    ],
    lines: 2,
  },
  {
    name: 'git url empty',
    doc: { connections: { app: { type: 'git', url: '' } } },
    fragments: ['/connections/app/url: must not be empty'],
  },
  {
    name: 'several problems at once, all listed in file order',
    doc: {
      settings: { reindexIntervalMs: 1000, colour: 'blue' },
      connections: {
        gh: { type: 'github', token: 'ghp_x', orgs: ['o'] },
        review: { type: 'gerrit' },
        'bad name': { type: 'git', url: '.' },
        x: { type: 'svn' },
      },
      licence: {},
    },
    fragments: [
      '/settings/reindexIntervalMs: must be at least 60000',
      '/settings/colour: unknown property "colour"',
      '/connections/gh/token: must be {"env": "NAME"}',
      '/connections/review: missing required property "url"',
      '/connections/bad name: invalid connection name',
      '/connections/x/type: unknown connection type "svn"',
      '/licence: unknown property "licence" (did you mean "license"?)',
    ],
    lines: 7,
  },
];

for (const { name, doc, fragments, lines } of invalid) {
  test(`invalid: ${name}`, () => {
    let error: unknown;
    try {
      load(doc);
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    const messageLines = error.message.split('\n');
    for (const line of messageLines) assert.ok(line.startsWith(`${FILE}: `), `every line names the file: ${line}`);
    let last = -1;
    for (const fragment of fragments) {
      const at = messageLines.findIndex((l) => l.includes(fragment));
      assert.ok(at >= 0, `missing ${JSON.stringify(fragment)} in:\n${error.message}`);
      // Fragments are listed in file order, as the problems are.
      assert.ok(at >= last, `${JSON.stringify(fragment)} out of file order in:\n${error.message}`);
      last = at;
    }
    if (lines !== undefined) assert.equal(messageLines.length, lines, `expected ${lines} problem line(s):\n${error.message}`);
    assert.equal(error.problems.length, messageLines.length);
  });
}

test('problems carry their pointer and position for tools', () => {
  const text = '{\n  "settings": {\n    "maxFileSize": 0\n  }\n}';
  assert.throws(
    () => parseConfig(text, 'trawl.json'),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.file, 'trawl.json');
      assert.deepEqual(err.problems, [{ pointer: '/settings/maxFileSize', line: 3, column: 5, message: 'must be at least 1, not 0' }]);
      assert.equal(err.message, 'trawl.json: /settings/maxFileSize: must be at least 1, not 0');
      return true;
    },
  );
});

// ---------------------------------------------------------------------------------------
// Files on disk

test('loadConfig reads a file, resolves git paths against its directory and records its absolute path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-config-'));
  try {
    const file = join(dir, 'trawl.json');
    writeFileSync(file, JSON.stringify({ connections: { here: { type: 'git', url: './repos/app' } } }));
    const config = loadConfig(file);
    assert.equal(config.path, file);
    assert.deepEqual(config.connections.here, { type: 'git', url: join(dir, 'repos/app'), revisions: noRevisions(), visibility: 'public' });
    assert.throws(
      () => loadConfig(join(dir, 'absent.json')),
      (err: unknown) => err instanceof ConfigError && /absent\.json: cannot read the configuration file: no such file/.test(err.message),
    );
    assert.throws(
      () => loadConfig(dir),
      (err: unknown) => err instanceof ConfigError && err.message === `${dir}: the configuration file is not a regular file (a directory)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('loadConfig refuses a file over its bound without reading it, and one that is not a regular file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-config-'));
  try {
    const cases: Array<[string, (path: string) => void, string]> = [
      [
        'over the bound (sparse)',
        (p) => (writeFileSync(p, ''), truncateSync(p, CONFIG_MAX_BYTES + 1)),
        `is ${(CONFIG_MAX_BYTES + 1).toLocaleString('en-US')} bytes, over the ${CONFIG_MAX_BYTES.toLocaleString('en-US')} bytes a file of its kind may hold`,
      ],
      // What else stands at a path (devices, FIFOs): test/runtime/bounded-read.test.ts.
      ['a link to a directory', (p) => symlinkSync(dir, p), 'is not a regular file (a symbolic link to a directory)'],
    ];
    for (const [i, [name, make, reason]] of cases.entries()) {
      const file = join(dir, `case-${i}.json`);
      make(file);
      assert.throws(
        () => loadConfig(file),
        (err: unknown) => err instanceof ConfigError && err.message === `${file}: the configuration file ${reason}`,
        name,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the shipped example validates and shows every connection type', () => {
  const url = new URL('../../daemon/config/example.trawl.json', import.meta.url);
  const config = loadConfig(url.pathname);
  const types = new Set(Object.values(config.connections).map((c) => c.type));
  assert.deepEqual([...types].sort(), ['azuredevops', 'bitbucket', 'gerrit', 'git', 'gitea', 'github', 'gitlab']);
  assert.equal(JSON.parse(readFileSync(url, 'utf8')).$schema, './trawl.schema.json');
});

test('defaultConfig has the documented defaults and is a fresh object each time', () => {
  const config = defaultConfig();
  assert.equal(config.path, undefined);
  assert.deepEqual(config.settings, {
    anonymousAccess: false,
    permissions: 'all',
    http: { maxBodyBytes: 1048576, shutdownTimeoutMs: 10000, keepAliveMs: 15000, maxSourceBytes: 10485760, trustedProxies: [] },
    metrics: {},
    rateLimit: { requestsPerDay: 10000, store: 'embedded' },
    oauth: { grantLifetimeDays: 90 },
    audit: { retentionDays: 180 },
    watches: {
      maxPerUser: 100,
      maxMatches: 10000,
      deliveryAttempts: 10,
      retryBaseMs: 1000,
      retryMaxMs: 600000,
      allowPrivateUrls: false,
      eventRetentionDays: 7,
    },
    search: { maxMatches: 100000, timeoutMs: 20000, maxConcurrent: 4, maxConcurrentPerCaller: 4, maxQueued: 100, maxQueuedPerCaller: 50 },
    maxFileSize: 2097152,
    historyMaxCommits: 20000,
    reindexIntervalMs: 3600000,
    permissionSyncIntervalMs: 1800000,
    syncConcurrency: 2,
    retryBaseMs: 60000,
    retryMaxMs: 21600000,
    symbols: true,
  });
  assert.deepEqual(config.connections, {});
  assert.deepEqual(config.permissions, { groups: {}, grants: [] });
  assert.deepEqual(config.contexts, {});
  assert.deepEqual(config.license, { publicKeys: [] });
  config.settings.search.maxMatches = 1;
  assert.equal(defaultConfig().settings.search.maxMatches, 100000);
});

// ---------------------------------------------------------------------------------------
// The schema itself

type Schema = { [key: string]: unknown };
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every schema object inside `schema`, with its location. */
function* walk(schema: unknown, at = '#'): Generator<[string, Schema]> {
  if (!isSchema(schema)) return;
  yield [at, schema];
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' || key === '$defs') {
      for (const [name, sub] of Object.entries(value as Schema)) yield* walk(sub, `${at}/${key}/${name}`);
    } else if (key === 'items' || key === 'additionalProperties' || key === 'propertyNames' || key === 'if' || key === 'then' || key === 'else') {
      yield* walk(value, `${at}/${key}`);
    } else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') {
      for (const [i, sub] of (value as unknown[]).entries()) yield* walk(sub, `${at}/${key}/${i}`);
    }
  }
}

test('every property and definition in the schema has a description', () => {
  const missing: string[] = [];
  let properties = 0;
  for (const [at, schema] of walk(configSchema)) {
    for (const [name, sub] of Object.entries((schema.properties as Schema | undefined) ?? {})) {
      // Properties inside the anyOf/if/then rules only restate a property declared beside them.
      if (/\/(anyOf|if|then|else)(\/|$)/.test(at)) continue;
      properties++;
      if (!isSchema(sub) || typeof sub.description !== 'string' || sub.description.length < 10) missing.push(`${at}/properties/${name}`);
    }
  }
  for (const [name, def] of Object.entries(configSchema.$defs as Schema)) {
    if (typeof (def as Schema).description !== 'string') missing.push(`#/$defs/${name}`);
  }
  assert.ok(properties > 60, `walked only ${properties} properties`);
  assert.deepEqual(missing, []);
});

test('objects in the schema reject unknown properties', () => {
  const open: string[] = [];
  for (const [at, schema] of walk(configSchema)) {
    if (schema.type !== 'object' || /\/(anyOf|if|then|else)(\/|$)/.test(at)) continue;
    // Maps of names (connections, permission groups, sign-in providers); the unions' branches are closed.
    const maps = [
      '#/properties/connections',
      '#/properties/contexts',
      '#/$defs/connection',
      '#/$defs/permissions/properties/groups',
      '#/$defs/signIn/properties/providers',
      '#/$defs/signInProvider',
    ];
    if (maps.includes(at)) continue;
    if (schema.additionalProperties !== false) open.push(at);
  }
  assert.deepEqual(open, []);
});

test("the schema's default annotations are the loader's defaults", () => {
  const defs = configSchema.$defs as Record<string, Schema>;
  const fromSchema = (schema: Schema): unknown => {
    const props = schema.properties as Record<string, Schema>;
    // A setting without a default and without sub-settings (publicUrl) is absent by default.
    return Object.fromEntries(
      Object.entries(props)
        .filter(([, p]) => p.default !== undefined || p.$ref !== undefined || p.properties !== undefined)
        .map(([k, p]) => [k, p.default !== undefined ? p.default : fromSchema(p.$ref ? defs[String(p.$ref).replace('#/$defs/', '')]! : p)]),
    );
  };
  assert.deepEqual(fromSchema(defs.settings!), defaultConfig().settings);
  assert.deepEqual(fromSchema(defs.license!), defaultConfig().license);
  assert.deepEqual(fromSchema(defs.cluster!), DEFAULT_CLUSTER);
  const urls: Record<string, unknown> = {};
  for (const type of ['github', 'gitlab', 'gitea', 'bitbucket', 'azuredevops']) {
    const props = defs[`${type}Connection`]!.properties as Record<string, Schema>;
    urls[type] = props.url!.default;
    const loaded = load({ connections: { c: { type, [type === 'bitbucket' ? 'workspaces' : type === 'gitlab' ? 'groups' : 'orgs']: ['x'] } } }).connections.c!;
    assert.equal(loaded.url, urls[type], `${type} url default`);
  }
  assert.equal((defs.gerritConnection!.properties as Record<string, Schema>).url!.default, undefined);
});

test("a context's rules in the schema are the API's (config/contexts.ts)", () => {
  const defs = configSchema.$defs as Record<string, Schema>;
  assert.equal(defs.contextName!.pattern, CONTEXT_NAME.source);
  assert.equal(((defs.searchContext!.properties as Record<string, Schema>).description as Schema).maxLength, CONTEXT_DESCRIPTION_MAX);
  assert.equal(defs.contextGlob!.maxLength, CONTEXT_GLOB_MAX);
  assert.equal(defs.contextTopic!.pattern, `^\\S{1,${CONTEXT_TOPIC_MAX}}$`);
  const example = loadConfig(new URL('../../daemon/config/example.trawl.json', import.meta.url).pathname);
  assert.deepEqual(Object.keys(example.contexts), ['backend'], 'the shipped example shows a context');
});

test('the exported schema is frozen (the validator and the OpenAPI document share it)', () => {
  assert.ok(Object.isFrozen(configSchema));
  assert.ok(Object.isFrozen(configSchema.$defs));
  assert.equal(configSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
});
