import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startGitServer as startServer, type GitServer } from '../helpers/git-server.ts';

interface Pki {
  /** Key and certificate for "localhost", signed by the CA in SSL_CERT_FILE. */
  trusted: { key: string; cert: string };
  /** Key and certificate for "localhost", self-signed, trusted by no one. */
  untrusted: { key: string; cert: string };
}

/** A throwaway CA and server certificates, made with the openssl CLI; undefined without it. */
function makePki(): Pki | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-mirror-pki-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const openssl = (...args: string[]): boolean => spawnSync('openssl', args, { cwd: dir, stdio: 'ignore' }).status === 0;
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  // A DNS name, not 127.0.0.1: libgit2 1.9 inverts its comparison of IP address SANs
  // (memcmp(...) != 0 counts as a match), so no certificate for an IP address verifies.
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n');
  const made =
    openssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=trawl test CA') &&
    openssl('req', ...key, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost') &&
    openssl(
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      'leaf.ext',
      '-out',
      'leaf.pem',
    ) &&
    openssl(
      'req',
      '-x509',
      ...key,
      '-keyout',
      'self.key',
      '-out',
      'self.pem',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    );
  if (!made) return undefined;
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
  process.env.SSL_CERT_FILE = join(dir, 'ca.pem');
  return { trusted: { key: read('leaf.key'), cert: read('leaf.pem') }, untrusted: { key: read('self.key'), cert: read('self.pem') } };
}

// libgit2 reads its trusted certificates once, when nodegit is loaded: the test CA must be
// in SSL_CERT_FILE before mirror.ts (and so nodegit) is imported.
const pki = makePki();
const { removeMirror, syncMirror } = await import('../../daemon/repos/mirror.ts');
const { listRefs } = await import('../../daemon/repos/refs.ts');

const temps: string[] = [];
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'trawl-mirror-'));
  temps.push(d);
  return d;
}

// A clean environment: the developer's global config (hooks, signing, templates,
// init.defaultBranch) must not leak into the fixtures.
function cleanEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };
}

function git(cwd: string, ...args: string[]): string {
  try {
    return execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args], {
      cwd,
      encoding: 'utf8',
      env: cleanEnv(cwd),
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string };
    throw new Error(`git ${args.join(' ')} in ${cwd} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

async function commit(repo: string, file: string, content: string, message = `edit ${file}`): Promise<string> {
  await writeFile(join(repo, file), content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', message);
  return git(repo, 'rev-parse', 'HEAD');
}

/** A work tree on branch main with a second branch, an annotated and a lightweight tag. */
async function makeSource(dir: string, name = 'source'): Promise<string> {
  const repo = join(dir, name);
  await mkdir(repo);
  git(repo, 'init', '-q', '-b', 'main');
  await commit(repo, 'a.txt', 'one\n');
  git(repo, 'tag', 'light');
  await commit(repo, 'b.txt', 'two\n');
  git(repo, 'tag', '-a', 'v1', '-m', 'release 1');
  git(repo, 'branch', 'feature');
  return repo;
}

/** The source's refs as git itself reports them, annotated tags peeled. */
function expectedRefs(repo: string): { branches: Map<string, string>; tags: Map<string, string>; head: string } {
  const branches = new Map<string, string>();
  const tags = new Map<string, string>();
  const lines = git(repo, 'for-each-ref', '--format=%(refname) %(objectname) %(*objectname)', 'refs/heads', 'refs/tags');
  for (const line of lines.split('\n').filter((l) => l !== '')) {
    const [name, id, peeled] = line.split(' ') as [string, string, string];
    if (name.startsWith('refs/heads/')) branches.set(name.slice(11), id);
    else tags.set(name.slice(10), peeled === '' ? id : peeled);
  }
  return { branches, tags, head: git(repo, 'symbolic-ref', '--short', 'HEAD') };
}

async function assertMirrors(mirror: string, source: string): Promise<void> {
  const got = await listRefs(mirror);
  const want = expectedRefs(source);
  assert.deepEqual(got.branches, want.branches, 'branches');
  assert.deepEqual(got.tags, want.tags, 'tags');
  assert.equal(got.head, want.head, 'head');
  assert.equal(git(mirror, 'symbolic-ref', '--short', 'HEAD'), want.head, 'mirror HEAD');
  // Exactly the remote's refs: no refs/remotes/*, no stray HEAD copies.
  const all = git(mirror, 'for-each-ref', '--format=%(refname)')
    .split('\n')
    .filter((l) => l !== '');
  assert.deepEqual(all.sort(), [...[...want.branches.keys()].map((b) => `refs/heads/${b}`), ...[...want.tags.keys()].map((t) => `refs/tags/${t}`)].sort());
  // Every object the refs need is there.
  git(mirror, 'fsck', '--connectivity-only', '--no-dangling');
}

async function siblings(path: string): Promise<string[]> {
  const dir = join(path, '..');
  const base = path.slice(dir.length + 1);
  return (await readdir(dir)).filter((n) => n.startsWith(base)).sort();
}

test('first clone of a local path: bare, refs equal to the source, annotated tag peeled', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir);
  const dest = join(dir, 'data', 'mirrors', 'source.git'); // parent directories do not exist yet
  const seen: Array<{ receivedObjects: number; totalObjects: number; receivedBytes: number }> = [];
  const result = await syncMirror(source, dest, { onProgress: (p) => seen.push(p) });
  assert.deepEqual(result, { path: dest, cloned: true, defaultBranch: 'main' });
  assert.equal(git(dest, 'rev-parse', '--is-bare-repository'), 'true');
  await assertMirrors(dest, source);
  const refs = await listRefs(dest);
  assert.equal(refs.tags.get('v1'), git(source, 'rev-parse', 'v1^{commit}'));
  assert.notEqual(refs.tags.get('v1'), git(source, 'rev-parse', 'v1'), 'the tag object itself is not a commit');
  assert.equal(refs.tags.get('light'), git(source, 'rev-parse', 'main~1'));
  assert.ok(seen.length > 0 && seen.some((p) => p.totalObjects > 0), 'progress reported');
  // The URL is not kept in the mirror's config (it may carry credentials).
  assert.doesNotMatch(await readFile(join(dest, 'config'), 'utf8'), /remote|url/);
  assert.deepEqual(await siblings(dest), ['source.git'], 'no temporary directory left');
});

test('first clone of a file:// URL', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir, 'with space');
  const dest = join(dir, 'm.git');
  const result = await syncMirror(pathToFileURL(source).href, dest);
  assert.equal(result.cloned, true);
  assert.equal(result.defaultBranch, 'main');
  await assertMirrors(dest, source);
});

test('fetch follows new commits and branches, deletions, force-pushes and a changed default branch', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir);
  const dest = join(dir, 'm.git');
  await syncMirror(source, dest);

  // Nothing changed.
  assert.deepEqual(await syncMirror(source, dest), { path: dest, cloned: false, defaultBranch: 'main' });
  await assertMirrors(dest, source);

  // A new commit and a new branch.
  await commit(source, 'c.txt', 'three\n');
  git(source, 'branch', 'topic');
  await syncMirror(source, dest);
  await assertMirrors(dest, source);

  // A deleted branch and a deleted tag are pruned.
  git(source, 'branch', '-D', 'feature');
  git(source, 'tag', '-d', 'light');
  await syncMirror(source, dest);
  await assertMirrors(dest, source);
  assert.equal((await listRefs(dest)).branches.has('feature'), false);

  // A force-push: main rewritten to a commit that does not descend from the old one.
  const before = git(source, 'rev-parse', 'main');
  git(source, 'reset', '-q', '--hard', 'main~2');
  const rewritten = await commit(source, 'd.txt', 'rewritten history\n');
  git(source, 'tag', '-f', '-a', 'v1', '-m', 'moved');
  await syncMirror(source, dest);
  await assertMirrors(dest, source);
  assert.equal((await listRefs(dest)).branches.get('main'), rewritten);
  assert.notEqual(rewritten, before);

  // The default branch changes.
  git(source, 'checkout', '-q', 'topic');
  const result = await syncMirror(source, dest);
  assert.equal(result.defaultBranch, 'topic');
  await assertMirrors(dest, source);
  assert.equal((await listRefs(dest)).head, 'topic');
});

test('a bare source with a default branch that is not checked out anywhere', async () => {
  const dir = await tempDir();
  const work = await makeSource(dir);
  const bare = join(dir, 'bare.git');
  git(dir, 'clone', '-q', '--bare', work, bare);
  git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/feature');
  const dest = join(dir, 'm.git');
  const result = await syncMirror(bare, dest);
  assert.equal(result.defaultBranch, 'feature');
  await assertMirrors(dest, bare);
});

test('an empty source repository gives an empty mirror without a default branch', async () => {
  const dir = await tempDir();
  const empty = join(dir, 'empty');
  await mkdir(empty);
  git(empty, 'init', '-q', '-b', 'main');
  const dest = join(dir, 'm.git');
  const result = await syncMirror(empty, dest);
  assert.equal(result.cloned, true);
  assert.equal(result.defaultBranch, undefined);
  const refs = await listRefs(dest);
  assert.equal(refs.branches.size + refs.tags.size, 0);
  assert.equal(refs.head, undefined);
});

test('bad URLs fail with a clear message and leave no dest', async () => {
  const dir = await tempDir();
  const notRepo = join(dir, 'plain');
  await mkdir(notRepo);
  const dest = join(dir, 'm.git');
  const cases: Array<[string, string]> = [
    [join(dir, 'missing'), `cannot clone ${join(dir, 'missing')}: no such directory`],
    [notRepo, `cannot clone ${notRepo}: not a git repository`],
    [pathToFileURL(notRepo).href, `cannot clone ${pathToFileURL(notRepo).href}: not a git repository`],
    ['relative/repo', 'cannot clone relative/repo: unsupported URL (use an absolute path, a file:// URL or an http(s):// URL)'],
    ['git@github.com:org/repo.git', 'cannot clone git@github.com:org/repo.git: unsupported URL (use an absolute path, a file:// URL or an http(s):// URL)'],
  ];
  for (const [url, message] of cases) {
    await assert.rejects(syncMirror(url, dest), { message }, url);
    assert.equal(existsSync(dest), false, url);
    assert.deepEqual(await siblings(dest), [], `${url}: no temporary directory left`);
  }
  // Connection refused on an http URL: the message names the URL without its credentials.
  const port = await unusedPort();
  const err = await syncMirror(`http://user:s3cr3t-t0ken@127.0.0.1:${port}/org/repo.git`, dest).then(
    () => assert.fail('should fail'),
    (e: unknown) => e as Error,
  );
  assert.equal(err.message, `cannot clone http://127.0.0.1:${port}/org/repo.git: cannot reach 127.0.0.1:${port} (connection refused)`);
  assert.equal(existsSync(dest), false);
  assert.deepEqual(await siblings(dest), []);
});

test('a failed fetch leaves the previous mirror intact', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir);
  const dest = join(dir, 'm.git');
  await syncMirror(source, dest);
  const before = await listRefs(dest);

  await commit(source, 'later.txt', 'not fetched\n');
  await rename(source, join(dir, 'moved'));
  await assert.rejects(syncMirror(source, dest), { message: `cannot fetch ${source}: no such directory` });
  assert.deepEqual(await listRefs(dest), before);
  git(dest, 'fsck', '--connectivity-only', '--no-dangling');

  // A source that breaks during the transfer: the new commit's blob is gone from it.
  await rename(join(dir, 'moved'), source);
  const blob = git(source, 'rev-parse', 'HEAD:later.txt');
  await rm(join(source, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
  await assert.rejects(syncMirror(source, dest), (err: Error) => {
    assert.match(err.message, new RegExp(`^cannot fetch ${source}: .*${blob}`));
    assert.doesNotMatch(err.message, /\n/);
    return true;
  });
  assert.deepEqual(await listRefs(dest), before);
  git(dest, 'fsck', '--connectivity-only', '--no-dangling');

  // A destination that is not a repository is reported, not replaced.
  const junk = join(dir, 'junk');
  await mkdir(junk);
  await writeFile(join(junk, 'file'), 'x');
  await assert.rejects(syncMirror(source, junk), {
    message: `cannot fetch ${source}: ${junk} exists and is not a git repository (remove it to clone afresh)`,
  });
});

test('leftovers of crashed clones are removed, clones of live processes are not', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir);
  const dest = join(dir, 'm.git');
  const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
  const stale = `${dest}.tmp-${dead}-0badc0de`;
  const live = `${dest}.tmp-${process.ppid}-0123abcd`; // our parent is alive for the whole test
  const unrelated = `${dest}.tmp-notes`;
  for (const d of [stale, live, unrelated]) {
    await mkdir(join(d, 'objects'), { recursive: true });
    await writeFile(join(d, 'HEAD'), 'ref: refs/heads/main\n');
  }
  await syncMirror(source, dest);
  assert.equal(existsSync(stale), false, 'the dead process left it');
  assert.equal(existsSync(live), true, 'a live process may still be cloning');
  assert.equal(existsSync(unrelated), true, 'not a name this module makes');
  await assertMirrors(dest, source);

  removeMirror(dest);
  assert.equal(existsSync(dest), false);
  removeMirror(dest); // removing again is not an error
});

test('concurrent syncs of one destination run one after another', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir);
  const dest = join(dir, 'm.git');
  const results = await Promise.all([syncMirror(source, dest), syncMirror(source, dest), syncMirror(source, dest)]);
  assert.deepEqual(
    results.map((r) => r.cloned),
    [true, false, false],
  );
  await assertMirrors(dest, source);
});

test('listRefs on a work tree and on a non-repository', async () => {
  const dir = await tempDir();
  const source = await makeSource(dir);
  const refs = await listRefs(source);
  const want = expectedRefs(source);
  assert.deepEqual(refs.branches, want.branches);
  assert.deepEqual(refs.tags, want.tags);
  assert.equal(refs.head, 'main');
  git(source, 'checkout', '-q', '--detach');
  assert.equal((await listRefs(source)).head, undefined);
  await assert.rejects(listRefs(join(dir, 'nothing')), /not a git repository/);
});

// ---------------------------------------------------------------------------------------
// Smart HTTP: git http-backend behind a tiny CGI server on loopback (helpers/git-server.ts).

const USER = 'x-access-token';
const TOKEN = 'tok-3f9a0c1d2e';

/** Serves the repositories under `root` over smart HTTP, with basic auth as USER and TOKEN; closed after the tests. */
async function startGitServer(root: string, tls?: { key: string; cert: string }): Promise<GitServer> {
  const server = await startServer(root, { credentials: { username: USER, password: TOKEN }, ...(tls === undefined ? {} : { tls }) });
  closers.push(server.close);
  return server;
}

async function unusedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function servedSource(): Promise<{ dir: string; root: string; work: string }> {
  const dir = await tempDir();
  const work = await makeSource(dir);
  const root = join(dir, 'srv');
  await mkdir(root);
  git(dir, 'clone', '-q', '--bare', work, join(root, 'org', 'repo.git'));
  return { dir, root, work };
}

test('http: clone and fetch with basic-auth credentials', async () => {
  const { dir, root, work } = await servedSource();
  const server = await startGitServer(root);
  const url = `${server.url}/org/repo.git`;
  const dest = join(dir, 'm.git');
  const credentials = { username: USER, password: TOKEN };
  let progress = 0;
  const result = await syncMirror(url, dest, { credentials, onProgress: () => progress++ });
  assert.deepEqual(result, { path: dest, cloned: true, defaultBranch: 'main' });
  assert.ok(progress > 0);
  await assertMirrors(dest, join(root, 'org', 'repo.git'));

  // Changes pushed to the served repository arrive with the next fetch.
  await commit(work, 'http.txt', 'over http\n');
  git(work, 'push', '-q', '--force', join(root, 'org', 'repo.git'), 'main', ':feature');
  assert.equal((await syncMirror(url, dest, { credentials })).cloned, false);
  await assertMirrors(dest, join(root, 'org', 'repo.git'));
  assert.equal((await listRefs(dest)).branches.has('feature'), false);
  assert.doesNotMatch(await readFile(join(dest, 'config'), 'utf8'), new RegExp(TOKEN));

  // With the server gone, the fetch fails and the mirror keeps what it had.
  const before = await listRefs(dest);
  await server.close();
  await assert.rejects(syncMirror(url, dest, { credentials }), {
    message: new RegExp(`^cannot fetch ${url.replace(/[.]/g, '\\.')}: cannot reach 127\\.0\\.0\\.1:\\d+ \\(connection refused\\)$`),
  });
  assert.deepEqual(await listRefs(dest), before);
});

// A client that retried a refused credential forever would never settle: the test's own
// timeout catches that; the requests the server saw are the measure of how quickly it gave up.
test('http: wrong or missing credentials fail at once with an authentication message', { timeout: 60_000 }, async (t) => {
  const { dir, root } = await servedSource();
  const server = await startGitServer(root);
  const url = `${server.url}/org/repo.git`;
  const dest = join(dir, 'm.git');

  const started = Date.now();
  const err = await syncMirror(url, dest, { credentials: { username: USER, password: 'wrong-token-value' } }).then(
    () => assert.fail('should fail'),
    (e: unknown) => e as Error,
  );
  assert.equal(err.message, `cannot clone ${url}: authentication failed (check the token)`);
  t.diagnostic(`gave up after ${Date.now() - started} ms and ${server.requests} requests`);
  assert.ok(server.requests <= 4, `gives up rather than asking again and again: asked ${server.requests} times`);
  assert.doesNotMatch(err.message, /wrong-token-value/);
  assert.equal(existsSync(dest), false);
  assert.deepEqual(await siblings(dest), []);

  await assert.rejects(syncMirror(url, dest), { message: `cannot clone ${url}: authentication required (no credentials configured)` });

  // Credentials in the URL are used by libgit2, but never shown.
  const withToken = url.replace('http://', `http://${USER}:${TOKEN}@`);
  assert.equal((await syncMirror(withToken, dest)).cloned, true);
  const badInUrl = url.replace('http://', `http://${USER}:bad-secret-in-url@`);
  const err2 = await syncMirror(badInUrl, join(dir, 'm2.git')).then(
    () => assert.fail('should fail'),
    (e: unknown) => e as Error,
  );
  assert.doesNotMatch(err2.message, /bad-secret-in-url/);
  assert.match(err2.message, new RegExp(`^cannot clone ${url.replace(/[.]/g, '\\.')}: authentication`));
});

test('http: a missing repository is reported as such', async () => {
  const { dir, root } = await servedSource();
  const server = await startGitServer(root);
  const url = `${server.url}/org/nope.git`;
  await assert.rejects(syncMirror(url, join(dir, 'm.git'), { credentials: { username: USER, password: TOKEN } }), {
    message: `cannot clone ${url}: repository not found (HTTP 404)`,
  });
});

// libgit2 waits for a silent server forever: without the stall timer this test would not end
// (its own timeout fails it); the message says the timer, not something else, ended the clone.
test('a server that stops answering is abandoned after timeoutMs', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir();
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => {
    sockets.add(s); // reads the request, never answers
    s.on('error', () => {});
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        silent.close(() => r());
      }),
  );
  const port = (silent.address() as net.AddressInfo).port;
  // Plain http, and https (stuck in the TLS handshake, inside the CONNECT tunnel).
  for (const url of [`http://127.0.0.1:${port}/org/repo.git`, `https://localhost:${port}/org/repo.git`]) {
    const dest = join(dir, 'm.git');
    const started = Date.now();
    await assert.rejects(syncMirror(url, dest, { timeoutMs: 400 }), { message: `cannot clone ${url}: no progress for 400 ms (timed out)` });
    t.diagnostic(`${url}: abandoned after ${Date.now() - started} ms`);
    assert.equal(existsSync(dest), false);
    assert.deepEqual(await siblings(dest), []);
  }
  assert.ok(sockets.size >= 2, 'both reached the server');
});

test('https: through the tunnel with a verified certificate; an unverified one is refused', { timeout: 60_000 }, async (t) => {
  if (pki === undefined) {
    t.skip('the openssl CLI is not available to make certificates');
    return;
  }
  const { dir, root } = await servedSource();
  const credentials = { username: USER, password: TOKEN };
  const good = await startGitServer(root, pki.trusted);
  const url = `${good.url.replace('127.0.0.1', 'localhost')}/org/repo.git`;
  const dest = join(dir, 'm.git');
  assert.deepEqual(await syncMirror(url, dest, { credentials }), { path: dest, cloned: true, defaultBranch: 'main' });
  await assertMirrors(dest, join(root, 'org', 'repo.git'));
  assert.equal((await syncMirror(url, dest, { credentials })).cloned, false);

  const bad = await startGitServer(root, pki.untrusted);
  const badUrl = `${bad.url.replace('127.0.0.1', 'localhost')}/org/repo.git`;
  const dest2 = join(dir, 'm2.git');
  const started = Date.now();
  await assert.rejects(syncMirror(badUrl, dest2, { credentials }), {
    message: `cannot clone ${badUrl}: the TLS certificate of localhost does not verify (certificate rejected)`,
  });
  t.diagnostic(`refused after ${Date.now() - started} ms`);
  assert.equal(bad.requests, 0, 'nothing, credentials least of all, was sent to the unverified server');
  assert.equal(existsSync(dest2), false);
  assert.deepEqual(await siblings(dest2), []);
});
