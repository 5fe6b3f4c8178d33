// Watches end to end: a daemon on loopback with a GitHub connection (a fake GitHub whose
// clone URLs point at a git server of real repositories made here) and push webhooks. A
// member's watch is told of a pushed line that matches (POSTed, signed, retried after a
// failure; and over SSE), and of its removal; a change that matches nothing is not
// reported; a URL that never answers ends as a dead letter; a suspended owner is sent
// nothing; other members cannot see the watch.

import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { usersCommand } from '../../daemon/cli/users-command.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { tempDir } from '../helpers/corpus.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { TestRepo } from '../helpers/git.ts';
import { startGitServer } from '../helpers/git-server.ts';
import { until } from '../helpers/haystack.ts';
import { hookReceiver } from '../helpers/hook-receiver.ts';
import { startFake, TOKEN } from '../hosts/fake-hosts.ts';
import { delivery } from '../webhooks/deliveries.ts';

const HOOK = 'watch-e2e-webhook-secret-0123456789';

test('watches: a pushed matching line is POSTed (signed, retried) and streamed; its removal too; unrelated changes, other members and suspended owners get nothing', async (t) => {
  const dir = tempDir('watches-e2e');
  t.after(() => dir.cleanup());
  const sources = join(dir.path, 'src');
  const api = TestRepo.init(join(sources, 'api'));
  api.commit({ 'server.go': 'package api\n\nfunc main() {}\n', 'notes.md': '# notes\none\ntwo\nthree\nfour\n' });
  const gitServer = await startGitServer(sources, { credentials: { username: 'x-access-token', password: TOKEN } });
  t.after(() => gitServer.close());
  const fake = await startFake('github', {
    repos: [{ owner: 'acme', name: 'api', group: 'core', defaultBranch: 'main' }],
    cloneUrl: (r) => `${gitServer.url}/${r.name}`,
  });
  t.after(() => fake.close());
  const dataDir = join(dir.path, 'data');
  const where = ['--data-dir', dataDir];
  const alice = await newUserKey('alice@example.com', where, 'member');
  const bob = await newUserKey('bob@example.com', where, 'member');
  const ops = await newUserKey('ops@example.com', where, 'owner');
  const config = parseConfig(
    JSON.stringify({
      settings: { symbols: false, watches: { allowPrivateUrls: true, retryBaseMs: 50, retryMaxMs: 200, deliveryAttempts: 3, maxMatches: 5 } },
      connections: {
        gh: { type: 'github', url: fake.url, token: { env: 'GH_TOKEN' }, webhookSecret: { env: 'GH_HOOK' }, cloneOrigins: [gitServer.url], orgs: ['acme'] },
      },
    }),
    join(dir.path, 'trawl.json'),
  );
  const d = await startDaemon({
    config,
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    env: { ...process.env, GH_TOKEN: TOKEN, GH_HOOK: HOOK },
  });
  t.after(() => d.close());
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, json: (text === '' ? undefined : JSON.parse(text)) as Record<string, unknown> & Array<Record<string, unknown>> };
  };
  const found = async (query: string) => ((await call(alice, 'POST', '/api/search', { query, matches: 10 })).json.files as unknown[]).length;
  await until('the first pass', async () => (await found('func main')) === 1, 30_000);
  const push = async () => {
    const r = await fetch(`${d.url}/api/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...delivery('github', { path: 'acme/api', secret: HOOK }).headers },
      body: delivery('github', { path: 'acme/api', secret: HOOK }).body,
    });
    assert.equal(r.status, 202);
  };

  // The receiver fails the first attempt: the change is POSTed again.
  const hook = await hookReceiver([500]);
  t.after(() => hook.close());
  const made = await call(alice, 'POST', '/api/watches', { name: 'new tokens', query: 'watch_token', url: hook.url });
  assert.equal(made.status, 201, JSON.stringify(made.json));
  const id = made.json.id as number;
  const secret = made.json.secret as string;
  assert.match(secret, /^whsec_/);
  assert.equal((await call(alice, 'GET', `/api/watches/${id}`)).json.secret, undefined, 'the secret is shown once');
  assert.deepEqual(
    (await call(alice, 'GET', '/api/watches')).json.map((w) => w.id),
    [id],
  );
  // Another member neither lists nor reads it.
  assert.deepEqual((await call(bob, 'GET', '/api/watches')).json, []);
  assert.equal((await call(bob, 'GET', `/api/watches/${id}`)).status, 404);
  assert.equal((await call(bob, 'GET', `/api/watches/${id}/events`)).status, 404);
  // Refusals: too broad (settings.watches.maxMatches 5), a query it cannot watch, a URL it may not POST to.
  assert.equal((await call(alice, 'POST', '/api/watches', { name: 'all', query: '.', isRegexEnabled: true })).json.errorCode, 'WATCH_TOO_BROAD');
  assert.equal((await call(alice, 'POST', '/api/watches', { name: 'diffs', query: 'type:diff x' })).status, 400);
  assert.equal((await call(alice, 'POST', '/api/watches', { name: 'ftp', query: 'x', url: 'ftp://example.com/' })).json.errorCode, 'INVALID_REQUEST_BODY');

  // The SSE stream of the watch, read as it comes.
  const sse = new AbortController();
  t.after(() => sse.abort());
  const streamed: string[] = [];
  const stream = await fetch(`${d.url}/api/watches/${id}/stream`, { headers: { authorization: `Bearer ${alice}` }, signal: sse.signal });
  assert.equal(stream.status, 200);
  assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream.body!) streamed.push(decoder.decode(chunk as Uint8Array));
    } catch {
      // aborted at the end of the test
    }
  })();

  // A push adding a matching line: delivered after one failed attempt, signed with the watch's secret.
  api.commit({ 'server.go': 'package api\n\n// watch_token arrives\nfunc main() {}\n' });
  await push();
  await until('the change POSTed twice (one failure, one success)', () => hook.got.length >= 2, 20_000);
  const posted = hook.got[1]!;
  assert.equal(posted.headers['x-trawl-signature-256'], `sha256=${createHmac('sha256', secret).update(posted.body).digest('hex')}`);
  assert.equal(posted.headers['x-trawl-event'], 'watch.matches');
  assert.equal(hook.got[0]!.body, posted.body, 'the retry sends the same body');
  const event = JSON.parse(posted.body) as Record<string, unknown>;
  assert.equal(String(event.id), posted.headers['x-trawl-delivery']);
  assert.deepEqual(event.added, [{ path: 'server.go', line: 3, text: '// watch_token arrives' }]);
  assert.deepEqual(event.removed, []);
  assert.deepEqual(event.repository, { id: (event.repository as { id: number }).id, name: '127.0.0.1/acme/api', commit: api.head() });
  await until('delivered counted', async () => (await call(alice, 'GET', `/api/watches/${id}`)).json.delivered === 1);
  await until('the change streamed', () => streamed.join('').includes(`id: ${event.id}\nevent: watch.matches\n`));

  // Lines inserted above it, and a change elsewhere: no change of its matches, nothing sent.
  api.commit({ 'server.go': 'package api\n\nimport "fmt"\n\n// watch_token arrives\nfunc main() {}\n', 'notes.md': '# notes, longer\n' });
  await push();
  await until('the unrelated push indexed', async () => (await found('notes, longer')) === 1);
  // Then the line goes: its removal is reported, as the line was.
  api.commit({ 'server.go': 'package api\n\nimport "fmt"\n\nfunc main() {}\n' });
  await push();
  await until('the removal POSTed', () => hook.got.length >= 3, 20_000);
  const removal = JSON.parse(hook.got[2]!.body) as Record<string, unknown>;
  assert.deepEqual(removal.added, []);
  // (As it was last reported: moving it reported nothing, so it kept its line number.)
  assert.deepEqual(removal.removed, [{ path: 'server.go', line: 3, text: '// watch_token arrives' }]);
  assert.equal(hook.got.length, 3, 'the moved line was not reported');
  const events = (await call(alice, 'GET', `/api/watches/${id}/events`)).json;
  assert.deepEqual(
    events.map((e) => [(e.added as unknown[]).length, (e.removed as unknown[]).length, (e.delivery as { state: string }).state]),
    [
      [1, 0, 'delivered'],
      [0, 1, 'delivered'],
    ],
  );
  assert.deepEqual((await call(alice, 'GET', `/api/watches/${id}/events?after=${events[0]!.id}`)).json.length, 1);

  // A URL that never answers: after three attempts, a dead letter.
  const closed = await hookReceiver([]);
  await closed.close();
  const dead = await call(alice, 'POST', '/api/watches', { name: 'nobody listens', query: 'dead_token', url: closed.url });
  assert.equal(dead.status, 201);
  api.commit({ 'server.go': 'package api\n\n// dead_token\nfunc main() {}\n' });
  await push();
  await until('a dead letter', async () => (await call(alice, 'GET', `/api/watches/${dead.json.id}`)).json.deadLetters === 1, 20_000);

  // A suspended owner is sent nothing: the change is recorded, its delivery withheld.
  const io = { out: () => {}, err: () => {}, now: () => new Date() };
  assert.equal(await usersCommand(['suspend', 'alice@example.com', ...where], io), 0);
  const before = hook.got.length;
  api.commit({ 'server.go': 'package api\n\n// watch_token is back\nfunc main() {}\n' });
  await push();
  await until(
    'the push indexed',
    async () => ((await call(bob, 'POST', '/api/search', { query: 'watch_token is back', matches: 1 })).json.files as unknown[]).length === 1,
  );
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(hook.got.length, before, 'nothing POSTed for a suspended owner');

  // The pushes' changes were read from the index the check before held, none from git.
  const metrics = await (await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${ops}` } })).text();
  assert.match(metrics, /^trawl_watch_changes_read_total\{from="index"\} [1-9]/m);
  assert.match(metrics, /^trawl_watch_changes_read_total\{from="git"\} 0$/m);

  // Deleted: gone for its owner too.
  assert.equal(await usersCommand(['unsuspend', 'alice@example.com', ...where], io), 0);
  assert.equal((await call(alice, 'DELETE', `/api/watches/${id}`)).status, 204);
  assert.equal((await call(alice, 'GET', `/api/watches/${id}`)).status, 404);

  // A stream still open does not hold the shutdown for its timeout (10 s): it ends as the daemon stops.
  const open = await fetch(`${d.url}/api/watches/${dead.json.id}/stream`, { headers: { authorization: `Bearer ${alice}` } });
  assert.equal(open.status, 200);
  const reading = (async () => {
    for await (const _ of open.body!) {
      // read until the daemon ends the stream
    }
  })().catch(() => {});
  const stopping = performance.now();
  await d.close();
  await reading;
  assert.ok(performance.now() - stopping < 5000, `closed in ${Math.round(performance.now() - stopping)} ms`);
});
