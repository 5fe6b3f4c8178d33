// Search contexts over HTTP (docs/identity.md "Search contexts", docs/http-api.md 4.8):
// listing and reading them (the repositories named are only those the caller may see),
// owners creating, replacing and deleting them (members, anonymous callers and delegated
// credentials refused; the configuration's read-only), the errors of each route, a search
// limited by `context:` or the body's `context` (an unknown one refused before it runs),
// and a member's default context: set, used by searches that name none, overridden by
// context:global, shown to owners in the members list, cleared when its context goes.
// Every answer is checked against the daemon's OpenAPI document.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestDaemon, type Answer, type TestDaemon } from '../helpers/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const licensor = testLicensor('L-contexts');

describe('search contexts over HTTP', () => {
  let d: TestDaemon;
  let owner: string;
  let member: string;
  let granted: string;
  let checker: ResponseChecker;
  before(async () => {
    d = await startTestDaemon({
      settings: { permissions: 'code-host' },
      config: {
        license: { publicKeys: [licensor.publicPem] },
        connections: { local: { type: 'git', url: '/nonexistent/trawl-contexts-test/*' } },
        // "secret" is private: only the granted member sees it.
        permissions: { grants: [{ users: ['granted@example.com'], repos: ['secret'] }] },
        contexts: {
          everything: { description: 'From the file' },
          vault: { include: { repos: ['secret'] } },
        },
      },
    });
    const where = ['--data-dir', d.dataDir];
    owner = await newUserKey('olga@example.com', where, 'owner');
    member = await newUserKey('max@example.com', where);
    granted = await newUserKey('granted@example.com', where);
    await installLicense(d.dataDir, licensor.sign(['org-management']));
    checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
  });
  after(async () => {
    await d?.cleanup();
  });

  /** The answer, once checked against the OpenAPI document (its status documented, its JSON body of the documented shape). */
  const ask = async (key: string | undefined, path: string, init: { method?: string; json?: unknown } = {}): Promise<Answer> => {
    const a = await call(`${d.url}${path}`, { ...init, headers: key ? { authorization: `Bearer ${key}` } : {} });
    const template = path.replace(/\?.*$/, '').replace(/^\/api\/contexts\/.+$/, '/api/contexts/{name}');
    const method = init.method ?? (init.json === undefined ? 'GET' : 'POST');
    if (!template.startsWith('/api/stream_search') || a.status !== 200) checker.check(method, template, a.status, a.json);
    return a;
  };
  const put = (key: string | undefined, path: string, json: unknown) => ask(key, path, { method: 'PUT', json });
  const del = (key: string | undefined, path: string) => ask(key, path, { method: 'DELETE' });
  const error = (a: Answer, status: number, code: string, message?: RegExp) => {
    assert.equal(a.status, status, a.text);
    assert.equal(a.json.errorCode, code, a.text);
    if (message) assert.match(a.json.message, message);
  };
  const repos = async (key: string | undefined, query: string, extra: Record<string, unknown> = {}) => {
    const a = await ask(key, '/api/search', { json: { query, matches: 1000, ...extra } });
    assert.equal(a.status, 200, a.text);
    return [...new Set((a.json.files as Array<{ repository: string }>).map((f) => f.repository))].sort();
  };

  test('owners create and replace a context; everyone lists and reads them, each seeing only their repositories', async () => {
    const made = await put(owner, '/api/contexts/all-widgets', { description: 'Widgets', include: { repos: ['w*', 'SECRET'], topics: ['Widgets'] } });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.json.name, 'all-widgets');
    assert.equal(made.json.source, 'api');
    assert.deepEqual(made.json.include, { repos: ['w*', 'SECRET'], topics: ['widgets'] }, 'the lists given, topics in lower case');
    assert.equal(made.json.createdAt, made.json.updatedAt);

    const replaced = await put(owner, '/api/contexts/all-widgets', { include: { repos: ['w*', 'secret'], connections: ['local'] } });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.json.description, undefined, 'a replacement is the whole definition');
    assert.equal(replaced.json.createdAt, made.json.createdAt);

    const list = await ask(member, '/api/contexts');
    assert.equal(list.status, 200);
    assert.deepEqual(
      (list.json as Array<{ name: string; source: string }>).map((c) => [c.name, c.source]),
      [
        ['all-widgets', 'api'],
        ['everything', 'configuration'],
        ['vault', 'configuration'],
      ],
    );
    assert.equal((await ask(undefined, '/api/contexts')).status, 200, 'anonymous callers may list them where anonymous access is on');

    // The repositories named are those the caller may see.
    assert.deepEqual((await ask(granted, '/api/contexts/all-widgets')).json.repositories, ['secret', 'widgets']);
    assert.deepEqual((await ask(member, '/api/contexts/all-widgets')).json.repositories, ['widgets']);
    assert.deepEqual((await ask(member, '/api/contexts/vault')).json.repositories, []);
    assert.deepEqual((await ask(undefined, '/api/contexts/everything')).json.repositories, ['widgets']);
  });

  test('creating, replacing and deleting: owners only, with an API key or a session; the configuration is read-only', async () => {
    error(await put(member, '/api/contexts/mine', {}), 403, 'INSUFFICIENT_PERMISSIONS', /only organization owners/);
    error(await del(member, '/api/contexts/all-widgets'), 403, 'INSUFFICIENT_PERMISSIONS');
    error(await put(undefined, '/api/contexts/mine', {}), 401, 'NOT_AUTHENTICATED');
    error(await put(owner, '/api/contexts/vault', {}), 409, 'CONTEXT_READ_ONLY', /defined in the configuration file/);
    error(await del(owner, '/api/contexts/everything'), 409, 'CONTEXT_READ_ONLY');
    assert.equal((await ask(owner, '/api/contexts/vault')).json.source, 'configuration', 'left as it was');

    const temp = await put(owner, '/api/contexts/temp', { exclude: { repos: ['secret'] } });
    assert.equal(temp.status, 201);
    assert.equal((await del(owner, '/api/contexts/temp')).status, 204);
    error(await del(owner, '/api/contexts/temp'), 404, 'CONTEXT_NOT_FOUND', /no search context named "temp"/);
    error(await ask(owner, '/api/contexts/temp'), 404, 'CONTEXT_NOT_FOUND');
  });

  test('bad names and definitions are refused with what is wrong', async () => {
    error(await put(owner, '/api/contexts/Upper', {}), 400, 'INVALID_CONTEXT_NAME', /lower-case letter or digit/);
    error(await put(owner, '/api/contexts/global', {}), 400, 'INVALID_CONTEXT_NAME', /"global" is reserved/);
    error(await put(owner, `/api/contexts/${'a'.repeat(65)}`, {}), 400, 'INVALID_CONTEXT_NAME');
    error(
      await put(owner, '/api/contexts/x', { include: { connections: ['nope'] } }),
      400,
      'INVALID_REQUEST_BODY',
      /include\.connections\.0: no connection "nope"/,
    );
    error(await put(owner, '/api/contexts/x', { include: {} }), 400, 'INVALID_REQUEST_BODY');
    error(await put(owner, '/api/contexts/x', { include: { repos: [] } }), 400, 'INVALID_REQUEST_BODY');
    error(await put(owner, '/api/contexts/x', { include: { repo: ['a'] } }), 400, 'INVALID_REQUEST_BODY');
    error(await put(owner, '/api/contexts/x', { description: 'a\u001b[2Jb' }), 400, 'INVALID_REQUEST_BODY');
    error(await put(owner, '/api/contexts/x', { exclude: { topics: ['two words'] } }), 400, 'INVALID_REQUEST_BODY');
    // A path that cannot be a name is the route's 404, without repeating it.
    const odd = await ask(owner, '/api/contexts/%1B%5B2J');
    error(odd, 404, 'CONTEXT_NOT_FOUND');
    assert.ok(!odd.text.includes('\u001b'));
    assert.equal((await ask(owner, '/api/contexts')).json.length, 3, 'nothing was made');
  });

  test('a search is limited to the context its query or body names, never beyond what the caller sees; an unknown one is a 400', async () => {
    assert.deepEqual(await repos(granted, 'widget'), ['secret', 'widgets']);
    assert.deepEqual(await repos(granted, 'widget context:vault'), ['secret']);
    assert.deepEqual(await repos(granted, 'widget', { context: 'vault' }), ['secret']);
    assert.deepEqual(await repos(granted, 'widget context:vault', { context: 'vault' }), ['secret'], 'both naming the same one');
    assert.deepEqual(await repos(member, 'widget context:vault'), [], 'the context names a repository the member cannot see');
    assert.deepEqual(await repos(member, 'widget context:all-widgets'), ['widgets']);
    assert.deepEqual(await repos(undefined, 'widget context:everything'), ['widgets']);

    error(await ask(member, '/api/search', { json: { query: 'widget context:nope', matches: 10 } }), 400, 'UNKNOWN_CONTEXT', /no search context named "nope"/);
    error(await ask(member, '/api/stream_search', { json: { query: 'widget', matches: 10, context: 'nope' } }), 400, 'UNKNOWN_CONTEXT');
    error(await ask(member, '/api/find_definitions', { json: { symbolName: 'widget_count', context: 'nope' } }), 400, 'UNKNOWN_CONTEXT');
    error(
      await ask(member, '/api/search', { json: { query: 'widget context:vault', matches: 10, context: 'everything' } }),
      400,
      'INVALID_REQUEST_BODY',
      /name one/,
    );
    error(await ask(member, '/api/search', { json: { query: 'widget', matches: 10, context: 'Bad Name' } }), 400, 'INVALID_REQUEST_BODY');

    const defs = await ask(granted, '/api/find_definitions', { json: { symbolName: 'widget_count', context: 'vault' } });
    assert.equal(defs.status, 200, defs.text);
    assert.deepEqual(defs.json.files, [], 'widget_count is defined in widgets, outside the context');
    const inWidgets = await ask(granted, '/api/find_definitions', { json: { symbolName: 'widget_count', context: 'all-widgets' } });
    assert.deepEqual([...new Set(inWidgets.json.files.map((f: { repository: string }) => f.repository))], ['widgets']);
  });

  test("a member's default context limits their searches that name none; context:global lifts it; deleting the context clears it", async () => {
    assert.deepEqual((await ask(granted, '/api/default_context')).json, { context: null });
    error(await put(granted, '/api/default_context', { context: 'nope' }), 400, 'UNKNOWN_CONTEXT');
    error(await put(granted, '/api/default_context', { context: 'Bad Name' }), 400, 'INVALID_REQUEST_BODY');
    error(await put(granted, '/api/default_context', {}), 400, 'INVALID_REQUEST_BODY');
    error(await ask(undefined, '/api/default_context'), 401, 'NOT_AUTHENTICATED');

    const api = await put(owner, '/api/contexts/just-secret', { include: { repos: ['secret'] } });
    assert.equal(api.status, 201);
    assert.deepEqual((await put(granted, '/api/default_context', { context: 'just-secret' })).json, { context: 'just-secret' });
    assert.deepEqual((await ask(granted, '/api/default_context')).json, { context: 'just-secret' });
    assert.deepEqual(await repos(granted, 'widget'), ['secret'], 'the default applies');
    assert.deepEqual(await repos(granted, 'widget context:global'), ['secret', 'widgets']);
    assert.deepEqual(await repos(granted, 'widget', { context: 'global' }), ['secret', 'widgets']);
    assert.deepEqual(await repos(granted, 'widget context:everything'), ['secret', 'widgets']);
    assert.deepEqual(await repos(member, 'widget'), ['widgets'], "another member's searches are their own");
    // Code navigation answers wherever the symbol is: no default there.
    const defs = await ask(granted, '/api/find_definitions', { json: { symbolName: 'widget_count' } });
    assert.deepEqual([...new Set(defs.json.files.map((f: { repository: string }) => f.repository))], ['widgets']);

    // Owners see it in the members list.
    const users = (await ask(owner, '/api/ee/users')).json as Array<{ email: string; defaultContext: string | null }>;
    assert.deepEqual(
      users.map((u) => [u.email, u.defaultContext]),
      [
        ['granted@example.com', 'just-secret'],
        ['max@example.com', null],
        ['olga@example.com', null],
      ],
    );

    assert.equal((await del(owner, '/api/contexts/just-secret')).status, 204);
    assert.deepEqual((await ask(granted, '/api/default_context')).json, { context: null });
    assert.deepEqual(await repos(granted, 'widget'), ['secret', 'widgets']);

    // A default of the configuration's; "global" and null clear it.
    assert.deepEqual((await put(granted, '/api/default_context', { context: 'vault' })).json, { context: 'vault' });
    assert.deepEqual(await repos(granted, 'widget'), ['secret']);
    assert.deepEqual((await put(granted, '/api/default_context', { context: 'global' })).json, { context: null });
    assert.deepEqual(await repos(granted, 'widget'), ['secret', 'widgets']);
    await put(granted, '/api/default_context', { context: 'vault' });
    assert.deepEqual((await put(granted, '/api/default_context', { context: null })).json, { context: null });
    assert.deepEqual(await repos(granted, 'widget'), ['secret', 'widgets']);
  });
});
