// The watch tools and resources on their own (daemon/mcp/watch-tools.ts,
// watch-resources.ts, render-watches.ts): a tool server over canned REST answers and a
// WatchFeed of the test's, with the SDK's client in memory. The REST routes each tool
// calls (path parameters included); get_watch_changes' text and its hints (all read, the
// limit reached, the output limit); a subscription is told of a change only while the
// owner may see its repository (suspended owners and repositories turned private are
// not); unsubscribing and closing stop the listening; a resource shows the most recent
// changes, found by reading every page.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Identity } from '../../daemon/auth/identity.ts';
import { ServiceError } from '../../daemon/errors.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { TEXT_BUDGET } from '../../daemon/mcp/budget.ts';
import type { Invoke, RouteAnswer } from '../../daemon/mcp/invoke.ts';
import { createToolServer } from '../../daemon/mcp/server.ts';
import type { PrepareCall } from '../../daemon/mcp/tools.ts';
import { RESOURCE_CHANGES, RESOURCE_NOT_FOUND } from '../../daemon/mcp/watch-resources.ts';
import type { WatchEventRecord } from '../../daemon/store/store.ts';
import { WatchFeed } from '../../daemon/watches/watch-feed.ts';
import type { WatchServices } from '../../daemon/watches/watch-runtime.ts';

/** The text of a resource's content (a text content: these resources have no blobs). */
const textOf = (c: object): string => ('text' in c ? String(c.text) : '');

type CanSee = Identity['canSee'];

const WATCH = {
  id: 7,
  name: 'tokens',
  query: 'watch_token',
  isRegexEnabled: false,
  isCaseSensitivityEnabled: true,
  owner: 'u1',
  createdAt: '2025-01-01T00:00:00.000Z',
  delivered: 0,
  deadLetters: 0,
};

function event(id: number, repoId = 1, lines = 1) {
  return {
    type: 'watch.matches',
    id,
    at: '2025-01-02T00:00:00.000Z',
    watch: { id: 7, name: 'tokens', query: 'watch_token' },
    repository: { id: repoId, name: `repo${repoId}`, commit: 'abc123' },
    added: Array.from({ length: lines }, (_, i) => ({ path: 'src/a.go', line: i + 1, text: `watch_token ${i}` })),
    removed: [{ path: 'src/b.go', line: 0, text: '' }],
  };
}

const record = (id: number, repoId: number): WatchEventRecord => {
  const { id: _id, ...body } = event(id, repoId);
  return { id, watchId: 7, payload: JSON.stringify(body), createdAt: body.at, state: 'none', attempts: 0 };
};

interface Call {
  route: string;
  input: Record<string, unknown>;
  params: Record<string, string> | undefined;
}

/** The tool server with watches, its in-memory client, and what the routes were asked. */
async function harness(events: ReturnType<typeof event>[]) {
  const calls: Call[] = [];
  const notFound = () => new ServiceError('WATCH_NOT_FOUND', 'no watch with that id (GET /api/watches lists yours)');
  const invoke: Invoke = async (route, input, _caller, params) => {
    calls.push({ route, input, params });
    const answer = (body: unknown): RouteAnswer => ({ body, headers: [] });
    if (params !== undefined && params.id !== undefined && params.id !== '7') throw notFound();
    switch (route) {
      case 'GET /api/watches':
        return answer([WATCH]);
      case 'GET /api/watches/{id}':
        return answer(WATCH);
      case 'DELETE /api/watches/{id}':
        return answer(undefined);
      case 'POST /api/watches':
        return answer({ ...WATCH, ...input, url: 'https://hooks.example.com/x', secret: 'whsec_abc' });
      case 'GET /api/watches/{id}/events': {
        const after = Number(input.after ?? 0);
        return answer(events.filter((e) => e.id > after).slice(0, Number(input.limit ?? 100)));
      }
      default:
        throw new Error(`no canned answer for ${route}`);
    }
  };
  const identity: Identity = { kind: 'apiKey', userId: 'u1', canSee: () => true };
  const prepare: PrepareCall = async (extra) => ({ identity, clientAddress: '127.0.0.1', signal: extra.signal, log: silentHttpLogger });
  const feed = new WatchFeed();
  const sees: { owner: CanSee | undefined; visibility: Map<number, 'public' | 'private'> } = {
    owner: (r) => r.visibility === 'public',
    visibility: new Map([
      [1, 'public'],
      [2, 'private'],
    ]),
  };
  const watches: WatchServices = {
    evaluator: undefined as unknown as WatchServices['evaluator'],
    feed,
    secret: () => Buffer.alloc(32),
    owner: async (userId) => (userId === 'u1' ? sees.owner : undefined),
    visibility: async (repoId) => sees.visibility.get(repoId),
  };
  const server = createToolServer(invoke, prepare, '0.0.0', watches);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '0.0.0' });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  await client.connect(clientSide);
  const tool = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    return { text: (r.content as Array<{ text: string }>)[0]!.text, isError: r.isError === true, structured: r.structuredContent as any };
  };
  return { calls, client, server, feed, sees, updated, tool };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

test('the watch tools: the REST routes they call, and their texts', async () => {
  const h = await harness([event(3), event(5, 2, 2)]);
  try {
    const made = await h.tool('create_watch', { name: 'tokens', query: 'watch_token', url: 'https://hooks.example.com/x' });
    assert.deepEqual(h.calls.at(-1), {
      route: 'POST /api/watches',
      input: { name: 'tokens', query: 'watch_token', isRegexEnabled: false, isCaseSensitivityEnabled: false, url: 'https://hooks.example.com/x' },
      params: undefined,
    });
    assert.equal(made.structured.secret, 'whsec_abc');
    assert.match(made.text, /with the secret whsec_abc \(shown this once; keep it\)/);

    const listed = await h.tool('list_watches', {});
    assert.deepEqual(h.calls.at(-1), { route: 'GET /api/watches', input: {}, params: undefined });
    assert.deepEqual(listed.structured, { watches: [WATCH] });
    assert.equal(
      listed.text,
      [
        "1 watch, oldest first (read a watch's changes with get_watch_changes id=N, or subscribe to its resource):",
        '',
        'id=7  "tokens"  query: watch_token',
        '  trawl://watches/7; case-sensitive; not POSTed anywhere; created 2025-01-01T00:00:00.000Z; no change yet',
      ].join('\n'),
    );

    const changes = await h.tool('get_watch_changes', { id: 7 });
    assert.deepEqual(h.calls.at(-1), { route: 'GET /api/watches/{id}/events', input: { after: 0, limit: 50 }, params: { id: '7' } });
    assert.deepEqual(changes.structured, { events: [event(3), event(5, 2, 2)] });
    assert.equal(
      changes.text,
      [
        '2 changes of watch 7 "tokens" (query: watch_token), oldest first:',
        '',
        '## change 3 at 2025-01-02T00:00:00.000Z: repo=repo1 commit=abc123  (1 added; 1 removed)',
        '+ src/a.go:1: watch_token 0',
        '- src/b.go  (the path matches)',
        '',
        '## change 5 at 2025-01-02T00:00:00.000Z: repo=repo2 commit=abc123  (2 added; 1 removed)',
        '+ src/a.go:1: watch_token 0',
        '+ src/a.go:2: watch_token 1',
        '- src/b.go  (the path matches)',
        '',
        '… those are all the changes so far; for later ones call get_watch_changes with id=7 after=5',
      ].join('\n'),
    );
    const limited = await h.tool('get_watch_changes', { id: 7, after: 2, limit: 1 });
    assert.deepEqual(h.calls.at(-1)!.input, { after: 2, limit: 1 });
    assert.match(limited.text, /^1 change of watch 7 "tokens" \(query: watch_token\) after change 2, oldest first:/);
    assert.match(limited.text, /\n… more changes may follow \(limit 1 reached\): call get_watch_changes with id=7 after=3$/);
    const none = await h.tool('get_watch_changes', { id: 7, after: 5 });
    assert.equal(none.text, 'No changes of watch 7 after change 5.');
    const other = await h.tool('get_watch_changes', { id: 8 });
    assert.deepEqual([other.isError, other.text], [true, 'WATCH_NOT_FOUND: no watch with that id (GET /api/watches lists yours)']);

    const deleted = await h.tool('delete_watch', { id: 7 });
    assert.deepEqual(h.calls.at(-1), { route: 'DELETE /api/watches/{id}', input: {}, params: { id: '7' } });
    assert.deepEqual(deleted.structured, { id: 7, deleted: true });

    const before = h.calls.length;
    for (const args of [{ id: 0 }, { id: 1.5 }, { id: 7, limit: 1001 }, { id: 7, after: -1 }]) {
      const r = await h.tool('get_watch_changes', args);
      assert.equal(r.isError, true, JSON.stringify(args));
    }
    assert.equal((await h.tool('create_watch', { name: 'x'.repeat(101), query: 'q' })).isError, true);
    assert.equal(h.calls.length, before, 'out-of-bounds arguments never reach REST');
  } finally {
    await h.client.close();
  }
});

test('get_watch_changes: changes past the text budget are left for the next call, which the hint names', async () => {
  const many = Array.from({ length: 40 }, (_, i) => event(i + 1, 1, 30));
  const h = await harness(many);
  try {
    const r = await h.tool('get_watch_changes', { id: 7, limit: 40 });
    assert.ok(r.text.length <= TEXT_BUDGET);
    const shown = r.structured.events.length as number;
    assert.ok(shown > 0 && shown < 40, `${shown} shown`);
    assert.equal(r.text.match(/^## change /gm)!.length, shown);
    assert.match(r.text, new RegExp(`\\n… ${40 - shown} more changes were not shown \\(output limit\\): call get_watch_changes with id=7 after=${shown}$`));
  } finally {
    await h.client.close();
  }
});

test('watch resources: listed, read as the most recent changes, subscribed while the owner may see the change', async () => {
  const events = Array.from({ length: 2500 }, (_, i) => event(i + 1));
  const h = await harness(events);
  try {
    const uri = 'trawl://watches/7';
    assert.deepEqual(h.client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
    const listed = await h.client.listResources();
    assert.deepEqual(
      listed.resources.map((r) => [r.uri, r.name, r.title]),
      [[uri, 'watch 7', 'tokens']],
    );

    // The most recent changes: every page read (up to an empty one), the last 20 kept.
    const first = h.calls.length;
    const read = await h.client.readResource({ uri });
    assert.deepEqual(
      h.calls.slice(first).map((c) => [c.route, c.input.after, c.params?.id]),
      [
        ['GET /api/watches/{id}/events', 0, '7'],
        ['GET /api/watches/{id}/events', 1000, '7'],
        ['GET /api/watches/{id}/events', 2000, '7'],
        ['GET /api/watches/{id}/events', 2500, '7'],
        ['GET /api/watches/{id}', undefined, '7'],
      ],
    );
    const json = JSON.parse(textOf(read.contents[1]!));
    assert.deepEqual(json, { watch: WATCH, events: events.slice(-RESOURCE_CHANGES) });
    const text = textOf(read.contents[0]!);
    assert.ok(text.startsWith('id=7  "tokens"  query: watch_token\n'));
    assert.match(text, /\nIts 20 most recent changes, oldest first:\n\n## change 2481 /);
    assert.match(text, /\n… earlier changes are kept too: get_watch_changes with id=7 lists them from the first$/);
    await assert.rejects(h.client.readResource({ uri: 'trawl://watches/8' }), (e: unknown) => e instanceof McpError && e.code === RESOURCE_NOT_FOUND);

    await h.client.subscribeResource({ uri });
    assert.equal(h.feed.listeners, 1);
    h.feed.publish(record(2501, 1));
    await settle();
    assert.deepEqual(h.updated, [uri], 'a change in a repository the owner sees');
    h.feed.publish(record(2502, 2));
    await settle();
    assert.deepEqual(h.updated, [uri], 'not one in a private repository the owner may not see');
    h.sees.visibility.set(2, 'public');
    h.feed.publish(record(2503, 2));
    await settle();
    assert.deepEqual(h.updated, [uri, uri], 'the repository made public: told');
    h.sees.visibility.delete(2);
    h.feed.publish(record(2504, 2));
    await settle();
    assert.deepEqual(h.updated, [uri, uri, uri], 'a repository no longer known: told, as REST lists it');
    h.sees.owner = undefined;
    h.feed.publish(record(2505, 1));
    await settle();
    assert.equal(h.updated.length, 3, 'a suspended owner is told nothing');
    h.sees.owner = () => true;

    await h.client.unsubscribeResource({ uri });
    assert.equal(h.feed.listeners, 0);
    h.feed.publish(record(2506, 1));
    await settle();
    assert.equal(h.updated.length, 3, 'unsubscribed');

    await assert.rejects(h.client.subscribeResource({ uri: 'trawl://watches/8' }), (e: unknown) => e instanceof McpError && e.code === RESOURCE_NOT_FOUND);
    await assert.rejects(h.client.subscribeResource({ uri: 'file:///etc/passwd' }), (e: unknown) => e instanceof McpError && e.code === RESOURCE_NOT_FOUND);
    assert.equal(h.feed.listeners, 0);
    await h.client.subscribeResource({ uri });
    assert.equal(h.feed.listeners, 1);
  } finally {
    await h.client.close();
    await h.server.close();
  }
  assert.equal(h.feed.listeners, 0, 'closing the session stops listening');
});
