// The shared CodeHost suite: the same cases against a fake of every host type's REST API
// (fake-hosts.ts), then the `git` type against real repositories made with `git init`,
// then the pieces every host shares (excludes, the HTTP client's edge cases).

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Connection, Excludes } from '../../daemon/config/types.ts';
import { HostError, createCodeHost, filterRepos } from '../../daemon/repos/hosts/index.ts';
import { cloneUrlRefusal } from '../../daemon/repos/hosts/clone-url.ts';
import type { Logger } from '../../daemon/runtime/logger.ts';
import { compilePathGlob } from '../../daemon/repos/glob.ts';
import { externalFileUrl, isWebUrl } from '../../daemon/repos/web-urls.ts';
import type { CodeHostOptions, GitCredentials, HostRepo } from '../../daemon/repos/hosts/index.ts';
import { DATASET, NOW_MS, TOKEN, USER, startFake } from './fake-hosts.ts';
import type { FakeHost, FakeKind, FakeRepo } from './fake-hosts.ts';

const TOKEN_ENV = 'TRAWL_TEST_HOST_TOKEN';
const REVISIONS = { branches: [], tags: [] };
const NO_EXCLUDES: Excludes = { forks: false, archived: false, repos: [] };

interface HostCase {
  kind: FakeKind;
  /** Repositories the fake serves beyond DATASET. */
  extra?: FakeRepo[];
  /** The standard selection: organization/group acme (several pages), user jdoe, the single repository other/tool. */
  connection(url: string, exclude?: Excludes): Connection;
  /** A connection naming an organization (group, workspace, project) that does not exist. */
  missing(url: string): Connection;
  /** The host's name for a repository of the data set. */
  display(r: FakeRepo): string;
  /** Requests of the multi-page listing. */
  listing: RegExp;
  /** The full expected metadata of acme/api. */
  sample(url: string): HostRepo;
  credentials: GitCredentials;
  /** Whether the host has the notion at all (Gerrit has no forks, Bitbucket Cloud no archiving). */
  forks: boolean;
  archived: boolean;
  /** The field of the answer trawl takes the clone URL from; undefined: none (Gerrit's are built from the url). */
  cloneField?: string;
  /** The field of the answer trawl takes the repository's web page from. */
  webField: string;
}

const token = { env: TOKEN_ENV };
const slash = (r: FakeRepo): string => `${r.owner}/${r.name}`;
const subgroup: FakeRepo = { owner: 'acme/platform', name: 'deep', group: 'platform' };

const CASES: HostCase[] = [
  {
    kind: 'github',
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'github',
      url,
      token,
      revisions: REVISIONS,
      exclude,
      orgs: ['acme'],
      users: ['jdoe'],
      repos: ['other/tool'],
    }),
    missing: (url) => ({ type: 'github', url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['nope'], users: [], repos: [] }),
    display: slash,
    listing: /^\/api\/v3\/orgs\/acme\/repos\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/acme/api',
      displayName: 'acme/api',
      codeHostType: 'github',
      cloneUrl: `${url}/acme/api.git`,
      externalWebUrl: `${url}/acme/api`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'public',
      pushedAt: '2024-05-01T10:00:00Z',
      imageUrl: `${url}/avatars/acme.png`,
      topics: ['backend', 'go'],
    }),
    credentials: { username: 'x-access-token', password: TOKEN },
    forks: true,
    archived: true,
    cloneField: 'clone_url',
    webField: 'html_url',
  },
  {
    kind: 'gitlab',
    extra: [subgroup],
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'gitlab',
      url,
      token,
      revisions: REVISIONS,
      exclude,
      groups: ['acme'],
      users: ['jdoe'],
      projects: ['other/tool'],
    }),
    missing: (url) => ({ type: 'gitlab', url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, groups: ['nope'], users: [], projects: [] }),
    display: slash,
    listing: /^\/api\/v4\/groups\/acme\/projects\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/acme/api',
      displayName: 'acme/api',
      codeHostType: 'gitlab',
      cloneUrl: `${url}/acme/api.git`,
      externalWebUrl: `${url}/acme/api`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'public',
      pushedAt: '2024-05-01T10:00:00Z',
      imageUrl: `${url}/uploads/-/system/group/avatar/acme.png`,
      topics: ['backend', 'go'],
    }),
    credentials: { username: 'oauth2', password: TOKEN },
    forks: true,
    archived: true,
    cloneField: 'http_url_to_repo',
    webField: 'web_url',
  },
  {
    kind: 'gitea',
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'gitea',
      url,
      token,
      revisions: REVISIONS,
      exclude,
      orgs: ['acme'],
      users: ['jdoe'],
      repos: ['other/tool'],
    }),
    missing: (url) => ({ type: 'gitea', url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['nope'], users: [], repos: [] }),
    display: slash,
    listing: /^\/api\/v1\/orgs\/acme\/repos\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/acme/api',
      displayName: 'acme/api',
      codeHostType: 'gitea',
      cloneUrl: `${url}/acme/api.git`,
      externalWebUrl: `${url}/acme/api`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'public',
      pushedAt: '2024-05-01T10:00:00Z',
      imageUrl: `${url}/avatars/acme`,
      topics: ['backend', 'go'],
    }),
    credentials: { username: 'oauth2', password: TOKEN },
    forks: true,
    archived: true,
    cloneField: 'clone_url',
    webField: 'html_url',
  },
  {
    kind: 'gerrit',
    // A nested project, and a hidden one the globs select but the listing must drop.
    extra: [subgroup, { owner: 'acme', name: 'secret', group: 'x', hidden: true }],
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'gerrit',
      url,
      token,
      user: USER,
      revisions: REVISIONS,
      exclude,
      projects: ['acme/**', 'jdoe/*', 'other/tool'],
    }),
    missing: (url) => ({ type: 'gerrit', url, token, user: USER, revisions: REVISIONS, exclude: NO_EXCLUDES, projects: ['nope/none'] }),
    display: slash,
    listing: /^\/a\/projects\/\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/acme/api',
      displayName: 'acme/api',
      codeHostType: 'gerrit',
      cloneUrl: `${url}/a/acme/api`,
      externalWebUrl: `${url}/plugins/gitiles/acme/api`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'private', // a token is configured: the host requires sign-in
    }),
    credentials: { username: USER, password: TOKEN },
    forks: false,
    archived: true,
    webField: 'web_links[].url (gitiles)',
  },
  {
    kind: 'bitbucketCloud',
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'bitbucket',
      deploymentType: 'cloud',
      url,
      token,
      user: USER,
      revisions: REVISIONS,
      exclude,
      workspaces: ['acme'],
      projects: ['jdoe/home'],
      repos: ['other/tool'],
    }),
    missing: (url) => ({
      type: 'bitbucket',
      deploymentType: 'cloud',
      url,
      token,
      user: USER,
      revisions: REVISIONS,
      exclude: NO_EXCLUDES,
      workspaces: ['nope'],
      projects: [],
      repos: [],
    }),
    display: slash,
    listing: /^\/2\.0\/repositories\/acme\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/acme/api',
      displayName: 'acme/api',
      codeHostType: 'bitbucketCloud',
      cloneUrl: `${url}/acme/api.git`,
      externalWebUrl: `${url}/acme/api`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'public',
      pushedAt: '2024-05-01T10:00:00Z',
      imageUrl: `${url}/acme/api/avatar/32`,
    }),
    credentials: { username: USER, password: TOKEN },
    forks: true,
    archived: false,
    cloneField: 'links.clone[https].href',
    webField: 'links.html.href',
  },
  {
    kind: 'bitbucketServer',
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'bitbucket',
      deploymentType: 'server',
      url,
      token,
      revisions: REVISIONS,
      exclude,
      workspaces: [],
      projects: ['ACME', 'JDOE'],
      repos: ['OTHER/tool'],
    }),
    missing: (url) => ({
      type: 'bitbucket',
      deploymentType: 'server',
      url,
      token,
      revisions: REVISIONS,
      exclude: NO_EXCLUDES,
      workspaces: [],
      projects: ['NOPE'],
      repos: [],
    }),
    display: (r) => `${r.owner.toUpperCase()}/${r.name}`,
    listing: /^\/rest\/api\/1\.0\/projects\/ACME\/repos\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/ACME/api',
      displayName: 'ACME/api',
      codeHostType: 'bitbucketServer',
      cloneUrl: `${url}/scm/acme/api.git`,
      externalWebUrl: `${url}/projects/ACME/repos/api/browse`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'public',
    }),
    credentials: { username: 'x-token-auth', password: TOKEN },
    forks: true,
    archived: true,
    cloneField: 'links.clone[http].href',
    webField: 'links.self[0].href',
  },
  {
    kind: 'azuredevops',
    connection: (url, exclude = NO_EXCLUDES) => ({
      type: 'azuredevops',
      url,
      token,
      revisions: REVISIONS,
      exclude,
      orgs: ['acme'],
      projects: ['jdoe/home'],
      repos: ['other/tools/tool'],
    }),
    missing: (url) => ({ type: 'azuredevops', url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['nope'], projects: [], repos: [] }),
    display: (r) => `${r.owner}/${r.group}/${r.name}`,
    listing: /^\/acme\/_apis\/projects\?/,
    sample: (url) => ({
      repoName: '127.0.0.1/acme/core/api',
      displayName: 'acme/core/api',
      codeHostType: 'azuredevops',
      cloneUrl: `${url}/acme/core/_git/api`,
      externalWebUrl: `${url}/acme/core/_git/api`,
      defaultBranch: 'main',
      isFork: false,
      isArchived: false,
      visibility: 'public',
      pushedAt: '2024-05-01T10:00:00Z',
    }),
    credentials: { username: 'pat', password: TOKEN },
    forks: true,
    archived: true,
    cloneField: 'remoteUrl',
    webField: 'webUrl',
  },
];

/** Every repository the standard selection covers: all of acme (and its subgroups where the host has them), jdoe's, and other/tool. */
function selected(c: HostCase): FakeRepo[] {
  return [...DATASET, ...(c.extra ?? [])].filter(
    (r) => !r.hidden && (r.owner === 'acme' || r.owner.startsWith('acme/') || r.owner === 'jdoe' || slash(r) === 'other/tool'),
  );
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Harness {
  fake: FakeHost;
  sleeps: number[];
  options: CodeHostOptions;
}

const fakes: FakeHost[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

async function harness(c: HostCase, envToken = TOKEN): Promise<Harness> {
  const fake = await startFake(c.kind, { repos: [...DATASET, ...(c.extra ?? [])] });
  fakes.push(fake);
  const sleeps: number[] = [];
  const options: CodeHostOptions = {
    env: { [TOKEN_ENV]: envToken },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => NOW_MS,
    maxRateLimitWaitMs: 60_000,
  };
  return { fake, sleeps, options };
}

async function rejection(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HostError, `expected a HostError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the listing to fail');
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A one-off server on loopback, closed with the fakes. */
async function serveRaw(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fakes.push({
    url: '',
    requests: [],
    faults: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

for (const c of CASES) {
  describe(`CodeHost ${c.kind}`, () => {
    test('lists every selected repository, across pages, sorted by repoName', async () => {
      const h = await harness(c);
      const repos = await createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos();
      assert.deepEqual(
        repos.map((r) => r.displayName),
        selected(c).map(c.display).sort(byCodeUnits),
      );
      assert.deepEqual(
        repos.map((r) => r.repoName),
        repos.map((r) => r.repoName).sort(byCodeUnits),
      );
      const pages = h.fake.requests.filter((r) => c.listing.test(r.url));
      assert.ok(pages.length >= 2, `expected several pages, got ${pages.map((p) => p.url).join(' ')}`);
    });

    test('excludes forks, archived repositories and name globs', async () => {
      const h = await harness(c);
      const exclude: Excludes = { forks: true, archived: true, repos: ['**/LEGACY-*'] };
      const repos = await createCodeHost('conn', c.connection(h.fake.url, exclude), h.options).listRepos();
      const expected = selected(c)
        .filter((r) => !(c.forks && r.fork) && !(c.archived && r.archived) && !r.name.startsWith('legacy-'))
        .map(c.display)
        .sort(byCodeUnits);
      assert.deepEqual(
        repos.map((r) => r.displayName),
        expected,
      );
    });

    test('reports each repository metadata', async () => {
      const h = await harness(c);
      const repos = await createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos();
      const find = (name: string): HostRepo => {
        const r = repos.find((x) => x.displayName === c.display(DATASET.find((d) => d.name === name)!));
        assert.ok(r !== undefined, name);
        return r;
      };
      assert.deepEqual(find('api'), c.sample(h.fake.url));
      assert.equal(find('web').defaultBranch, 'trunk');
      assert.equal(find('web').visibility, 'private');
      assert.equal(find('notes').visibility, 'private');
      assert.equal(find('old').isArchived, c.archived);
      assert.equal(find('lib-fork').isFork, c.forks);
      assert.equal(find('docs').isFork, false);
      assert.deepEqual(createCodeHost('conn', c.connection(h.fake.url), h.options).gitCredentials(), c.credentials);
    });

    test('a rejected token is unauthorized, naming the variable but not the token', async () => {
      const h = await harness(c, 'wrong-token');
      const err = await rejection(createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos());
      assert.equal(err.kind, 'unauthorized');
      assert.match(err.message, /connection "conn"/);
      assert.match(err.message, new RegExp(TOKEN_ENV));
      assert.doesNotMatch(err.message, /wrong-token/);
    });

    test('a host that is down is unreachable', async () => {
      const h = await harness(c);
      const url = `http://127.0.0.1:${await closedPort()}`;
      const err = await rejection(createCodeHost('conn', c.connection(url), h.options).listRepos());
      assert.equal(err.kind, 'unreachable');
      assert.match(err.message, /connection refused/);
      assert.ok(err.message.includes('127.0.0.1'), err.message);
    });

    test('waits out a rate limit, then succeeds', async () => {
      const h = await harness(c);
      h.fake.faults.push({ kind: 'rate-limit', seconds: 30 });
      const repos = await createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos();
      assert.deepEqual(h.sleeps, [30_000]);
      assert.equal(repos.length, selected(c).length);
    });

    test('a rate limit beyond the bound is rate-limited, with the time to retry', async () => {
      const h = await harness(c);
      h.fake.faults.push({ kind: 'rate-limit', seconds: 3600 });
      const err = await rejection(createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos());
      assert.equal(err.kind, 'rate-limited');
      assert.equal(err.retryAt, NOW_MS + 3_600_000);
      assert.deepEqual(h.sleeps, []);
    });

    test('retries a server error', async () => {
      const h = await harness(c);
      h.fake.faults.push({ kind: 'status', status: 500 });
      const repos = await createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos();
      assert.deepEqual(h.sleeps, [1_000]);
      assert.equal(repos.length, selected(c).length);
    });

    test('a server error that persists is reported', async () => {
      const h = await harness(c);
      h.fake.faults.push({ kind: 'status', status: 503 }, { kind: 'status', status: 503 }, { kind: 'status', status: 503 });
      const err = await rejection(createCodeHost('conn', c.connection(h.fake.url), h.options).listRepos());
      assert.equal(err.kind, 'unreachable');
      assert.match(err.message, /HTTP 503/);
      assert.deepEqual(h.sleeps, [1_000, 3_000]);
    });

    test('an unknown organization is not-found', async () => {
      const h = await harness(c);
      const err = await rejection(createCodeHost('conn', c.missing(h.fake.url), h.options).listRepos());
      assert.equal(err.kind, 'not-found');
      assert.match(err.message, /"nope/i);
    });

    test('the clone URLs the host gives of itself may be fetched; another origin only when cloneOrigins lists it', async () => {
      const h = await harness(c);
      const conn = c.connection(h.fake.url);
      const repos = await createCodeHost('conn', conn, h.options).listRepos();
      assert.equal(repos.length, selected(c).length);
      for (const r of repos) assert.equal(cloneUrlRefusal(conn, r.cloneUrl), undefined, r.cloneUrl);
      const elsewhere = 'https://git.example.com:8443';
      const moved = `${elsewhere}/acme/api.git`;
      assert.match(
        cloneUrlRefusal(conn, moved) ?? '',
        /refused: not on http:\/\/127\.0\.0\.1:\d+ \(list https:\/\/git\.example\.com:8443 in the connection's cloneOrigins/,
      );
      assert.equal(cloneUrlRefusal({ ...conn, cloneOrigins: [elsewhere] } as Connection, moved), undefined);
    });

    test('a hostile clone URL in the answer is refused, whatever its form; the other repositories are not', {
      skip: c.cloneField === undefined && 'Gerrit answers carry no clone URL: trawl builds them from the connection url',
    }, async () => {
      let hostile = '';
      const fake = await startFake(c.kind, { repos: [...DATASET, ...(c.extra ?? [])], cloneUrl: (r) => (slash(r) === 'acme/api' ? hostile : undefined) });
      fakes.push(fake);
      const conn = c.connection(fake.url);
      const port = Number(new URL(fake.url).port);
      // What a host that is compromised, or a man in the middle of a plain-http one, can answer.
      const forms: Array<[string, RegExp]> = [
        ['file:///srv/secrets', /not an http\(s\) URL/],
        ['FILE:///srv/secrets', /not an http\(s\) URL/],
        ['/srv/git/secrets.git', /not an http\(s\) URL/],
        ['../../srv/secrets', /not an http\(s\) URL/],
        [`ssh://git@127.0.0.1:${port}/acme/api.git`, /not an http\(s\) URL/],
        ['git@127.0.0.1:acme/api.git', /not an http\(s\) URL/],
        [`git://127.0.0.1:${port}/acme/api.git`, /not an http\(s\) URL/],
        [`http://localhost:${port}/acme/api.git`, /not on http:\/\/127\.0\.0\.1/],
        [`http://127.0.0.1:${port + 1}/acme/api.git`, /not on http:\/\/127\.0\.0\.1/],
        [`https://127.0.0.1:${port}/acme/api.git`, /not on http:\/\/127\.0\.0\.1/],
        [`http://127.0.0.1:${port}@evil.example/acme/api.git`, /not on http:\/\/127\.0\.0\.1/],
      ];
      for (const [form, reason] of forms) {
        hostile = form;
        const repos = await createCodeHost('conn', conn, { env: { [TOKEN_ENV]: TOKEN } }).listRepos();
        const api = repos.find((r) => r.displayName === c.display(DATASET[0]!));
        assert.ok(api !== undefined, `${form}: acme/api is listed`);
        assert.match(cloneUrlRefusal(conn, api.cloneUrl) ?? 'accepted', reason, `${c.cloneField} ${form}`);
        for (const r of repos) if (r !== api) assert.equal(cloneUrlRefusal(conn, r.cloneUrl), undefined, `${form}: ${r.displayName}`);
      }
    });

    test('a web page URL that is not http(s) is left out of the listing, and logged', async () => {
      let hostile = '';
      const fake = await startFake(c.kind, { repos: [...DATASET, ...(c.extra ?? [])], webUrl: (r) => (slash(r) === 'acme/api' ? hostile : undefined) });
      fakes.push(fake);
      const warnings: Array<Record<string, unknown>> = [];
      const log: Logger = { info() {}, error() {}, warn: (fields, message) => void warnings.push({ ...fields, message }) };
      const forms = [
        'javascript:alert(document.domain)',
        'JavaScript:alert(1)',
        ' javascript:alert(1)',
        'java\tscript:alert(1)',
        'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
        'vbscript:msgbox(1)',
        'file:///etc/passwd',
      ];
      for (const form of forms) {
        hostile = form;
        warnings.length = 0;
        const repos = await createCodeHost('conn', c.connection(fake.url), { env: { [TOKEN_ENV]: TOKEN }, log }).listRepos();
        const api = repos.find((r) => r.displayName === c.display(DATASET[0]!));
        assert.ok(api !== undefined, `${form}: acme/api is listed`);
        assert.equal('externalWebUrl' in api, false, `${c.webField} ${JSON.stringify(form)} is left out`);
        for (const r of repos) if (r !== api) assert.match(r.externalWebUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\//, r.displayName);
        assert.deepEqual(
          warnings.map((w) => [w.connection, w.repo]),
          [['conn', api.repoName]],
          JSON.stringify(form),
        );
        assert.match(String(warnings[0]!.message), /web page URL that is not http\(s\)/);
      }
    });
  });
}

describe('host-specific behaviour', () => {
  test('a token variable that is not set fails at creation', () => {
    const conn = CASES[0]!.connection('https://github.example.com');
    assert.throws(
      () => createCodeHost('gh', conn, { env: {} }),
      (err: unknown) => err instanceof HostError && err.kind === 'unauthorized' && /environment variable TRAWL_TEST_HOST_TOKEN is not set/.test(err.message),
    );
    assert.throws(() => createCodeHost('gh', conn, { env: { [TOKEN_ENV]: '' } }), HostError);
  });

  test('gerrit without a token lists anonymously: public projects, clone URLs without /a/', async () => {
    const fake = await startFake('gerrit');
    fakes.push(fake);
    const conn: Connection = { type: 'gerrit', url: fake.url, revisions: REVISIONS, exclude: NO_EXCLUDES, projects: [] };
    const host = createCodeHost('g', conn, { env: {} });
    const repos = await host.listRepos();
    // All-Projects and All-Users hold configuration, not code.
    assert.deepEqual(
      repos.map((r) => r.displayName),
      DATASET.map(slash).sort(byCodeUnits),
    );
    const api = repos.find((r) => r.displayName === 'acme/api')!;
    assert.equal(api.visibility, 'public');
    assert.equal(api.cloneUrl, `${fake.url}/acme/api`);
    assert.equal(host.gitCredentials(), undefined);
    assert.ok(fake.requests.every((r) => !r.url.startsWith('/a/') && r.headers.authorization === undefined));
  });

  test('azure devops: a sign-in page (203) instead of JSON is unauthorized', async () => {
    const fake = await startFake('azuredevops');
    fakes.push(fake);
    const conn: Connection = { type: 'azuredevops', url: fake.url, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['acme'], projects: [], repos: [] };
    const err = await rejection(createCodeHost('ado', conn, { env: {} }).listRepos());
    assert.equal(err.kind, 'unauthorized');
    assert.match(err.message, /HTTP 203/);
  });

  test('bitbucket cloud: a project that does not exist is not-found', async () => {
    const fake = await startFake('bitbucketCloud');
    fakes.push(fake);
    const conn = CASES.find((c) => c.kind === 'bitbucketCloud')!.connection(fake.url) as Connection & { projects: string[] };
    conn.projects = ['jdoe/NOPE'];
    const err = await rejection(createCodeHost('bb', conn, { env: { [TOKEN_ENV]: TOKEN } }).listRepos());
    assert.equal(err.kind, 'not-found');
    assert.match(err.message, /project "jdoe\/NOPE"/);
  });

  test('bitbucket server before 7.x: the default branch from /branches/default', async () => {
    const fake = await startFake('bitbucketServer', { legacyBitbucket: true });
    fakes.push(fake);
    const conn = CASES.find((c) => c.kind === 'bitbucketServer')!.connection(fake.url);
    const repos = await createCodeHost('bbs', conn, { env: { [TOKEN_ENV]: TOKEN } }).listRepos();
    assert.equal(repos.find((r) => r.displayName === 'ACME/web')?.defaultBranch, 'trunk');
    // The legacy path is remembered: a 404 on /default-branch for the first requests in
    // flight (four at a time), not one per repository.
    const misses = fake.requests.filter((r) => r.url.endsWith('/default-branch')).length;
    assert.ok(misses <= 4 && misses < repos.length, `${misses} requests to /default-branch`);
  });

  test('gitea without Link headers: pages until one comes back short', async () => {
    const all = Array.from({ length: 60 }, (_, i) => ({
      full_name: `acme/r${String(i).padStart(2, '0')}`,
      html_url: `http://h/acme/r${i}`,
      clone_url: `http://h/acme/r${i}.git`,
      fork: false,
      archived: false,
      private: false,
    }));
    const pages: string[] = [];
    const url = await serveRaw((req, res) => {
      const q = new URL(req.url ?? '/', 'http://x').searchParams;
      pages.push(`${q.get('limit')}/${q.get('page')}`);
      const page = Number(q.get('page'));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(all.slice((page - 1) * 50, page * 50)));
    });
    const conn: Connection = { type: 'gitea', url, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['acme'], users: [], repos: [] };
    const repos = await createCodeHost('gt', conn, { env: {} }).listRepos();
    assert.equal(repos.length, 60);
    assert.deepEqual(pages, ['50/1', '50/2']);
  });

  test('gitlab: an empty project has no default branch', async () => {
    const fake = await startFake('gitlab', { repos: [{ owner: 'acme', name: 'empty', group: 'g', defaultBranch: null }] });
    fakes.push(fake);
    const conn: Connection = { type: 'gitlab', url: fake.url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, groups: ['acme'], users: [], projects: [] };
    const [repo] = await createCodeHost('gl', conn, { env: { [TOKEN_ENV]: TOKEN } }).listRepos();
    assert.equal(repo?.displayName, 'acme/empty');
    assert.equal('defaultBranch' in repo!, false);
  });

  test('the same repository reached twice is listed once', async () => {
    const fake = await startFake('github');
    fakes.push(fake);
    const conn: Connection = {
      type: 'github',
      url: fake.url,
      token,
      revisions: REVISIONS,
      exclude: NO_EXCLUDES,
      orgs: ['other'],
      users: [],
      repos: ['other/tool'],
    };
    const repos = await createCodeHost('gh', conn, { env: { [TOKEN_ENV]: TOKEN } }).listRepos();
    assert.deepEqual(
      repos.map((r) => r.displayName),
      ['other/ignored', 'other/tool'],
    );
  });
});

// ---- the `git` type: real repositories on the local file system ----

const temps: string[] = [];
after(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

function git(cwd: string, home: string, ...args: string[]): void {
  // A clean environment: the developer's global config must not leak into the fixture.
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' } });
}

async function makeRepo(home: string, dir: string, opts: { bare?: boolean; origin?: string; branch?: string } = {}): Promise<void> {
  await mkdir(dir, { recursive: true });
  const branch = opts.branch ?? 'main';
  if (opts.bare) {
    git(dir, home, 'init', '-q', '--bare', '-b', branch);
  } else {
    git(dir, home, 'init', '-q', '-b', branch);
    await writeFile(join(dir, 'README'), 'hello\n');
    git(dir, home, 'add', '-A');
    git(dir, home, '-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'init');
  }
  if (opts.origin !== undefined) git(dir, home, 'remote', 'add', 'origin', opts.origin);
}

function gitConnection(url: string): Connection {
  return { type: 'git', url, revisions: REVISIONS, visibility: 'public' };
}

describe('CodeHost git', () => {
  test('a glob selects the git repositories among the directories it matches', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'trawl-hosts-'));
    temps.push(tmp);
    await makeRepo(tmp, join(tmp, 'srv/one'));
    await makeRepo(tmp, join(tmp, 'srv/two.git'), { bare: true, branch: 'trunk' });
    await mkdir(join(tmp, 'srv/not-a-repo'), { recursive: true });
    await makeRepo(tmp, join(tmp, 'srv/.hidden'));
    const repos = await createCodeHost('local', gitConnection(join(tmp, 'srv/*'))).listRepos();
    // A local repository has no web page: a file:// link is none a browser opens from the web UI.
    assert.deepEqual(
      repos.map((r) => [r.repoName, r.displayName, r.codeHostType, r.cloneUrl, r.externalWebUrl, r.defaultBranch]),
      [
        ['one', 'one', 'genericGitHost', join(tmp, 'srv/one'), undefined, 'main'],
        ['two', 'two', 'genericGitHost', join(tmp, 'srv/two.git'), undefined, undefined],
      ],
    );
    assert.equal(repos[0]!.visibility, 'public');
  });

  test('a private git connection lists its repositories as private, local and remote (no host says who may read)', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'trawl-hosts-'));
    temps.push(tmp);
    await makeRepo(tmp, join(tmp, 'srv/one'));
    await makeRepo(tmp, join(tmp, 'srv/two'));
    const privately = (url: string): Connection => ({ type: 'git', url, revisions: REVISIONS, visibility: 'private' });
    const local = await createCodeHost('local', privately(join(tmp, 'srv/*'))).listRepos();
    assert.deepEqual(
      local.map((r) => [r.repoName, r.visibility]),
      [
        ['one', 'private'],
        ['two', 'private'],
      ],
    );
    const remote = await createCodeHost('remote', privately('https://git.example.com/team/app.git')).listRepos();
    assert.equal(remote[0]!.visibility, 'private');
  });

  test('** matches any depth, without descending into repositories', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'trawl-hosts-'));
    temps.push(tmp);
    await makeRepo(tmp, join(tmp, 'srv/team-a/app.git'), { bare: true });
    await makeRepo(tmp, join(tmp, 'srv/team-b/deep/app.git'), { bare: true, origin: 'git@gitlab.example.com:b/app.git' });
    await makeRepo(tmp, join(tmp, 'srv/app.git'), { bare: true, origin: 'https://github.com/top/app.git' });
    await makeRepo(tmp, join(tmp, 'srv/other.git'), { bare: true });
    const repos = await createCodeHost('local', gitConnection(`${tmp}/srv/**/app.git`)).listRepos();
    assert.deepEqual(
      repos.map((r) => [r.repoName, r.cloneUrl]),
      [
        ['app', join(tmp, 'srv/team-a/app.git')],
        ['github.com/top/app', join(tmp, 'srv/app.git')],
        ['gitlab.example.com/b/app', join(tmp, 'srv/team-b/deep/app.git')],
      ],
    );
  });

  test('`?` is one character of a directory name; `[` and `{` are plain characters there', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'trawl-hosts-'));
    temps.push(tmp);
    for (const name of ['app1', 'app2', 'app10', '[x]{y,z}-old']) await makeRepo(tmp, join(tmp, 'srv', name), { bare: true });
    const names = async (url: string) => (await createCodeHost('local', gitConnection(url)).listRepos()).map((r) => r.cloneUrl);
    assert.deepEqual(await names(`${tmp}/srv/app?`), [join(tmp, 'srv/app1'), join(tmp, 'srv/app2')]);
    assert.deepEqual(await names(`${tmp}/srv/[x]{y,z}-*`), [join(tmp, 'srv/[x]{y,z}-old')]);
  });

  test('a file:// URL of a repository named by its origin remote', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'trawl-hosts-'));
    temps.push(tmp);
    const dir = join(tmp, 'checkout');
    await makeRepo(tmp, dir, { origin: 'git@github.com:acme/widgets.git', branch: 'develop' });
    const [repo, ...rest] = await createCodeHost('local', gitConnection(pathToFileURL(dir).href)).listRepos();
    assert.deepEqual(rest, []);
    assert.deepEqual(repo, {
      repoName: 'github.com/acme/widgets',
      displayName: 'acme/widgets',
      codeHostType: 'github',
      cloneUrl: dir,
      defaultBranch: 'develop',
      isFork: false,
      isArchived: false,
      visibility: 'public',
    });
  });

  test('an http(s) clone URL is named from the URL', async () => {
    const [repo] = await createCodeHost('remote', gitConnection('https://gitlab.example.com/group/sub/proj.git')).listRepos();
    assert.deepEqual(repo, {
      repoName: 'gitlab.example.com/group/sub/proj',
      displayName: 'group/sub/proj',
      codeHostType: 'gitlab',
      cloneUrl: 'https://gitlab.example.com/group/sub/proj.git',
      externalWebUrl: 'https://gitlab.example.com/group/sub/proj',
      isFork: false,
      isArchived: false,
      visibility: 'public',
    });
    const [generic] = await createCodeHost('remote', gitConnection('https://git.example.org/tools/thing')).listRepos();
    assert.equal(generic?.codeHostType, 'genericGitHost');
    assert.equal(generic?.repoName, 'git.example.org/tools/thing');
  });

  test('a path that is missing or not a repository is not-found', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'trawl-hosts-'));
    temps.push(tmp);
    await mkdir(join(tmp, 'plain'));
    for (const url of [join(tmp, 'missing'), join(tmp, 'plain'), `${join(tmp, 'missing')}/*`]) {
      const err = await rejection(createCodeHost('local', gitConnection(url)).listRepos());
      assert.equal(err.kind, 'not-found', url);
      assert.match(err.message, /connection "local"/);
    }
    // An existing directory whose glob matches nothing is an empty list, not an error.
    assert.deepEqual(await createCodeHost('local', gitConnection(`${tmp}/plain/*`)).listRepos(), []);
  });
});

// ---- what every host shares ----

describe('excludes', () => {
  const repo = (displayName: string, extra: Partial<HostRepo> = {}): HostRepo => ({
    repoName: `h/${displayName}`,
    displayName,
    codeHostType: 'github',
    cloneUrl: '',
    externalWebUrl: '',
    isFork: false,
    isArchived: false,
    visibility: 'public',
    ...extra,
  });

  test('glob table', () => {
    const rows: Array<[string, string, boolean]> = [
      ['org/legacy-*', 'org/legacy-api', true],
      ['org/legacy-*', 'ORG/Legacy-API', true],
      ['org/legacy-*', 'org/legacy/api', false],
      ['org/*', 'org/sub/proj', false],
      ['org/**', 'org/sub/proj', true],
      ['**/proj', 'org/sub/proj', true],
      ['**/proj', 'proj', true],
      ['org/**/proj', 'org/proj', true],
      ['org/**/proj', 'org/a/b/proj', true],
      ['org/?pi', 'org/api', true],
      ['org/?pi', 'org/pi', false],
      ['org/a.b', 'org/axb', false],
      ['org/a+b(c)', 'org/a+b(c)', true],
    ];
    for (const [glob, name, expected] of rows) assert.equal(compilePathGlob(glob).test(name), expected, `${glob} ~ ${name}`);
  });

  test('filterRepos drops forks, archived repositories and matching names only when asked', () => {
    const repos = [repo('a/fork', { isFork: true }), repo('a/old', { isArchived: true }), repo('a/legacy-x'), repo('a/keep')];
    assert.equal(filterRepos(repos, NO_EXCLUDES).length, 4);
    assert.deepEqual(
      filterRepos(repos, { forks: true, archived: true, repos: ['a/legacy-*'] }).map((r) => r.displayName),
      ['a/keep'],
    );
  });
});

describe('URL rules for what hosts answer', () => {
  const host = (type: 'github' | 'gitea', url: string, cloneOrigins?: string[]): Connection =>
    ({ type, url, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['o'], users: [], repos: [], ...(cloneOrigins ? { cloneOrigins } : {}) }) as Connection;

  test('clone URL table', () => {
    const gh = host('github', 'https://github.com');
    const gt = host('gitea', 'http://gitea.internal:3000', ['https://git.example.com']);
    const rows: Array<[Connection, string, RegExp | undefined]> = [
      [gh, 'https://github.com/acme/api.git', undefined],
      [gh, 'HTTPS://GitHub.com:443/acme/api.git', undefined],
      [gh, 'https://x-access-token@github.com/acme/api.git', undefined],
      [gh, 'http://github.com/acme/api.git', /not on https:\/\/github\.com \(list http:\/\/github\.com in/],
      [gh, 'https://github.com:8443/acme/api.git', /not on https:\/\/github\.com/],
      [gh, 'https://api.github.com/acme/api.git', /not on/],
      [gh, 'https://github.com.evil.example/acme/api.git', /not on/],
      [gh, 'https://github.com@evil.example/acme/api.git', /not on/],
      [gh, 'https:///acme/api.git', /not on|not an http/],
      [gh, 'file:///srv/api', /not an http\(s\) URL \(a github connection fetches from https:\/\/github\.com only\)/],
      [gh, '/srv/api', /not an http\(s\) URL/],
      [gh, 'C:\\repos\\api', /not an http\(s\) URL/],
      [gh, 'git@github.com:acme/api.git', /not an http\(s\) URL/],
      [gh, 'ssh://git@github.com/acme/api.git', /not an http\(s\) URL/],
      [gh, '', /not an http\(s\) URL/],
      [gt, 'http://gitea.internal:3000/o/r.git', undefined],
      [gt, 'https://git.example.com/o/r.git', undefined],
      [gt, 'http://git.example.com/o/r.git', /not on http:\/\/gitea\.internal:3000 or https:\/\/git\.example\.com/],
      [gt, 'http://gitea.internal/o/r.git', /not on/],
    ];
    for (const [conn, url, expected] of rows) {
      const refusal = cloneUrlRefusal(conn, url);
      if (expected === undefined) assert.equal(refusal, undefined, url);
      else assert.match(refusal ?? 'accepted', expected, url);
    }
    // The operator's own `git` connections name local paths.
    assert.equal(cloneUrlRefusal({ type: 'git', url: '/srv/*', revisions: REVISIONS, visibility: 'public' }, '/srv/api'), undefined);
    // A refused URL is quoted short, without its password.
    const long = cloneUrlRefusal(gh, `https://user:hunter2@evil.example/${'x'.repeat(10_000)}`)!;
    assert.ok(long.length < 500, `${long.length} characters`);
    assert.doesNotMatch(long, /hunter2/);
  });

  test('web page URL table', () => {
    const rows: Array<[string, boolean]> = [
      ['https://github.com/acme/api', true],
      ['http://gitea.internal:3000/o/r', true],
      ['HTTPS://GitHub.com/acme/api', true],
      ['https://', false],
      ['https:github.com/acme/api', false],
      ['//github.com/acme/api', false],
      ['/acme/api', false],
      ['javascript:alert(1)', false],
      [' javascript:alert(1)', false],
      ['\u0000javascript:alert(1)', false],
      ['java\tscript:alert(1)', false],
      ['JAVASCRIPT:alert(1)', false],
      ['data:text/html,<script>alert(1)</script>', false],
      ['vbscript:msgbox(1)', false],
      ['file:///etc/passwd', false],
      ['ftp://example.com/x', false],
      ['', false],
    ];
    for (const [url, ok] of rows) assert.equal(isWebUrl(url), ok, JSON.stringify(url));
    assert.equal(externalFileUrl('github', 'javascript:alert(1)//', 'main', 'a.c'), undefined);
  });
});

describe('http client edge cases', () => {
  const serve = serveRaw;
  const gh = (url: string): Connection => ({ type: 'github', url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: [], users: [], repos: ['o/r'] });
  const env = { [TOKEN_ENV]: TOKEN };

  test('Retry-After as an HTTP date; a rate limit without a hint waits a default', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(429, { 'retry-after': new Date(NOW_MS + 5_000).toUTCString() }).end();
      else if (calls === 2) res.writeHead(429).end();
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
    });
    const sleeps: number[] = [];
    const err = await rejection(createCodeHost('gh', gh(url), { env, now: () => NOW_MS, sleep: async (ms) => void sleeps.push(ms) }).listRepos());
    assert.equal(err.kind, 'not-found');
    assert.match(err.message, /repository "o\/r" not found/);
    assert.deepEqual(sleeps, [5_000, 20_000]);
  });

  test('no answer within the time limit is unreachable', async () => {
    const url = await serve(() => {
      // never answers
    });
    const err = await rejection(createCodeHost('gh', gh(url), { env, timeoutMs: 200 }).listRepos());
    assert.equal(err.kind, 'unreachable');
    assert.match(err.message, /within 200 ms/);
  });

  test('an answer that is not JSON, or of the wrong shape, is a bad response', async () => {
    const html = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'));
    const err = await rejection(createCodeHost('gh', gh(html), { env }).listRepos());
    assert.equal(err.kind, 'bad-response');
    assert.match(err.message, /did not answer with JSON/);
    const shape = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"full_name": 3}'));
    const err2 = await rejection(createCodeHost('gh', gh(shape), { env }).listRepos());
    assert.equal(err2.kind, 'bad-response');
    assert.match(err2.message, /full_name/);
  });

  test('403 is forbidden; a redirect to another origin drops the credentials', async () => {
    const seen: Array<string | undefined> = [];
    const other = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"Resource not accessible by integration"}');
    });
    const url = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(301, { location: `${other.replace('127.0.0.1', 'localhost')}${req.url}` }).end();
    });
    const err = await rejection(createCodeHost('gh', gh(url), { env }).listRepos());
    assert.equal(err.kind, 'forbidden');
    assert.match(err.message, /Resource not accessible by integration/);
    assert.deepEqual(seen, [`Bearer ${TOKEN}`, undefined]);
  });

  test('an aborted listing rejects with the abort reason', async () => {
    const url = await serve(() => {
      // never answers
    });
    const controller = new AbortController();
    const listing = createCodeHost('gh', gh(url), { env }).listRepos(controller.signal);
    controller.abort(new Error('shutting down'));
    await assert.rejects(listing, /shutting down/);
  });
});
