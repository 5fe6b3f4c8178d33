// Watches through the tool server, end to end: the MCP SDK's own client over real HTTP on
// loopback against a daemon whose public repository is re-indexed in the test (the watches'
// poll of the index version picks each re-index up). A member makes a watch with
// create_watch, lists it (list_watches, resources/list), subscribes to its resource; a
// commit adding a matching line is a change that get_watch_changes returns and that the
// subscribed client is told of with notifications/resources/updated (on the session's GET
// event stream); resources/read shows it. After resources/unsubscribe the removal of the
// line is recorded but not notified. Another member can neither read, subscribe to, list
// nor delete the watch. delete_watch tells the client the resource list changed; closing
// the session stops its listening.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_NOT_FOUND } from '../../daemon/mcp/watch-resources.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';

/** The text of a resource's content (a text content: these resources have no blobs). */
const textOf = (c: object): string => ('text' in c ? String(c.text) : '');

type Result = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text: string }> };

interface Agent {
  client: Client;
  transport: StreamableHTTPClientTransport;
  updated: string[];
  listChanged: number;
  tool(name: string, args: Record<string, unknown>): Promise<Result>;
}

async function agent(url: string, key: string): Promise<Agent> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'trawl-watch-test', version: '1.0.0' });
  const a: Agent = {
    client,
    transport,
    updated: [],
    listChanged: 0,
    tool: async (name, args) => (await client.callTool({ name, arguments: args })) as Result,
  };
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void a.updated.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void a.listChanged++);
  await client.connect(transport);
  return a;
}

async function refused(what: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(what, (err: unknown) => {
    assert.ok(err instanceof McpError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

test('watches through the tool server: tools, resources, a subscription told of a change, other members shut out', async (t) => {
  // At most 5 matching lines per watch: "." matches more (WATCH_TOO_BROAD).
  const d = await startTestDaemon({ settings: { anonymousAccess: false, watches: { maxMatches: 5 } } });
  // The clients' event streams end before the daemon stops (else it waits for its shutdown deadline).
  const agents: Agent[] = [];
  t.after(async () => {
    for (const a of agents) await a.client.close().catch(() => {});
    await d.cleanup();
  });
  const where = ['--data-dir', d.dataDir];
  const alice = await agent(d.url, await newUserKey('alice@example.com', where, 'member'));
  const bob = await agent(d.url, await newUserKey('bob@example.com', where, 'member'));
  agents.push(alice, bob);
  const repo = new TestRepo(d.repoPath);
  const reindex = () => indexLocal(d.repoPath, { dataDir: d.dataDir, symbols: true, revisions: { branches: ['dev'], tags: ['v*'] } });
  const feed = d.daemon.services.watches!.feed;

  // The server offers resources with subscriptions; the four tools are listed.
  assert.deepEqual(alice.client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
  const tools = (await alice.client.listTools()).tools.map((x) => x.name);
  for (const name of ['create_watch', 'list_watches', 'get_watch_changes', 'delete_watch']) assert.ok(tools.includes(name), name);
  assert.deepEqual((await alice.client.listResources()).resources, []);

  // create_watch: the REST answer, and a text that says how to follow it.
  const made = await alice.tool('create_watch', { name: 'new tokens', query: 'watch_token' });
  assert.ok(!made.isError, made.content[0]?.text);
  const id = made.structuredContent.id as number;
  const uri = `trawl://watches/${id}`;
  assert.equal(made.structuredContent.name, 'new tokens');
  assert.equal(made.structuredContent.secret, undefined, 'no url, no secret');
  assert.match(made.content[0]!.text, new RegExp(`get_watch_changes id=${id}`));
  assert.match(made.content[0]!.text, new RegExp(uri));
  const tooBroad = await alice.tool('create_watch', { name: 'everything', query: '.', isRegexEnabled: true });
  assert.equal(tooBroad.isError, true);
  assert.match(tooBroad.content[0]!.text, /^WATCH_TOO_BROAD: /);

  const listed = await alice.tool('list_watches', {});
  assert.deepEqual(
    listed.structuredContent.watches.map((w: { id: number }) => w.id),
    [id],
  );
  assert.match(listed.content[0]!.text, new RegExp(`id=${id}  "new tokens"  query: watch_token`));
  const resources = (await alice.client.listResources()).resources;
  assert.deepEqual(
    resources.map((r) => [r.uri, r.title, r.mimeType]),
    [[uri, 'new tokens', 'text/plain']],
  );
  const none = await alice.tool('get_watch_changes', { id });
  assert.ok(!none.isError, none.content[0]?.text);
  assert.deepEqual(none.structuredContent, { events: [] });
  assert.match(none.content[0]!.text, /^No changes of watch \d+: none recorded yet/);

  // Another member: not listed, not readable, not subscribable, not deletable.
  assert.deepEqual((await bob.client.listResources()).resources, []);
  assert.deepEqual((await bob.tool('list_watches', {})).structuredContent, { watches: [] });
  await refused(bob.client.readResource({ uri }), RESOURCE_NOT_FOUND, /WATCH_NOT_FOUND/);
  await refused(bob.client.subscribeResource({ uri }), RESOURCE_NOT_FOUND, /WATCH_NOT_FOUND/);
  await refused(bob.client.subscribeResource({ uri: 'trawl://watches/x' }), RESOURCE_NOT_FOUND, /no resource/);
  const bobReads = await bob.tool('get_watch_changes', { id });
  assert.equal(bobReads.isError, true);
  assert.match(bobReads.content[0]!.text, /^WATCH_NOT_FOUND: /);
  assert.match((await bob.tool('delete_watch', { id })).content[0]!.text, /^WATCH_NOT_FOUND: /);

  // Subscribed, a commit adding a matching line is notified, and get_watch_changes returns it.
  const listening = feed.listeners;
  await alice.client.subscribeResource({ uri });
  assert.equal(feed.listeners, listening + 1);
  await alice.client.subscribeResource({ uri });
  assert.equal(feed.listeners, listening + 1, 'subscribing again keeps one subscription');
  repo.commit({ 'src/widget.c': 'int widget_count(void) {\n  // watch_token arrives\n  return 42;\n}\n' }, 'A token');
  await reindex();
  await until('the change notified', () => alice.updated.length >= 1, 20_000);
  assert.deepEqual(alice.updated, [uri]);
  assert.deepEqual(bob.updated, []);
  const changes = await alice.tool('get_watch_changes', { id });
  assert.ok(!changes.isError, changes.content[0]?.text);
  const [event] = changes.structuredContent.events;
  assert.equal(changes.structuredContent.events.length, 1);
  assert.deepEqual(event.added, [{ path: 'src/widget.c', line: 2, text: '  // watch_token arrives' }]);
  assert.deepEqual(event.removed, []);
  assert.equal(event.repository.name, d.publicRepo);
  const text = changes.content[0]!.text;
  assert.match(text, new RegExp(`^1 change of watch ${id} "new tokens" \\(query: watch_token\\), oldest first:`));
  assert.match(
    text,
    new RegExp(`\\n## change ${event.id} at \\S+: repo=widgets commit=[0-9a-f]+  \\(1 added; 0 removed\\)\\n\\+ src/widget\\.c:2:   // watch_token arrives\\n`),
  );
  assert.match(text, new RegExp(`after=${event.id} *$`));

  // The resource: the watch and its most recent changes, as text and as JSON.
  const read = await alice.client.readResource({ uri });
  assert.deepEqual(
    read.contents.map((c) => [c.uri, c.mimeType]),
    [
      [uri, 'text/plain'],
      [uri, 'application/json'],
    ],
  );
  assert.ok(textOf(read.contents[0]!).endsWith('\n+ src/widget.c:2:   // watch_token arrives'));
  const json = JSON.parse(textOf(read.contents[1]!));
  assert.equal(json.watch.id, id);
  assert.deepEqual(json.events, changes.structuredContent.events);

  // Unsubscribed: the removal is recorded, not notified.
  await alice.client.unsubscribeResource({ uri });
  assert.equal(feed.listeners, listening);
  repo.commit({ 'src/widget.c': 'int widget_count(void) {\n  return 42;\n}\n' }, 'No token');
  await reindex();
  let later: Result | undefined;
  await until(
    'the removal recorded',
    async () => (later = await alice.tool('get_watch_changes', { id, after: event.id })).structuredContent.events.length === 1,
    20_000,
  );
  assert.deepEqual(later!.structuredContent.events[0].removed, [{ path: 'src/widget.c', line: 2, text: '  // watch_token arrives' }]);
  assert.ok(later!.content[0]!.text.includes('\n- src/widget.c:2:   // watch_token arrives\n'));
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(alice.updated, [uri], 'nothing notified after unsubscribing');

  // delete_watch: gone, and the resource list changed.
  await alice.client.subscribeResource({ uri });
  const changedBefore = alice.listChanged;
  const deleted = await alice.tool('delete_watch', { id });
  assert.ok(!deleted.isError, deleted.content[0]?.text);
  assert.deepEqual(deleted.structuredContent, { id, deleted: true });
  await until('the list change notified', () => alice.listChanged > changedBefore, 10_000);
  assert.deepEqual((await alice.client.listResources()).resources, []);
  assert.match((await alice.tool('get_watch_changes', { id })).content[0]!.text, /^WATCH_NOT_FOUND: /);
  await refused(alice.client.readResource({ uri }), RESOURCE_NOT_FOUND, /WATCH_NOT_FOUND/);

  // Ending the session (DELETE) stops its listening.
  assert.equal(feed.listeners, listening + 1);
  await alice.transport.terminateSession();
  await alice.client.close();
  await until('the session closed', () => feed.listeners === listening, 5_000);

  // Bob's client still listens on its GET event stream: it does not hold the shutdown for its timeout (10 s).
  const stopping = performance.now();
  await d.daemon.close();
  assert.ok(performance.now() - stopping < 5000, `closed in ${Math.round(performance.now() - stopping)} ms`);
});
