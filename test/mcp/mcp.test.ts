// The tool server end to end: the MCP SDK's own client over real HTTP on loopback against
// the daemon's /api/mcp. It connects, lists the tools, calls every one (the watch tools:
// mcp-watches.test.ts) and compares each tool's structured result with the REST API's
// answer to the same request (the relation is documented per tool in daemon/mcp/tools.ts);
// a scoped token's tools see only its repository; with a daily limit of 3 the fourth tool
// call fails with the rate-limit error while listing tools and ping still work; no
// credential is 401.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { credentialHash, newScopedToken, serverSecret } from '../../daemon/auth/credentials.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { MCP_RATE_LIMIT_EXCEEDED } from '../../daemon/mcp/call.ts';
import { TOOL_NAMES } from '../../daemon/mcp/tools.ts';
import { clipBlame } from '../../daemon/mcp/render-history.ts';
import { listTree } from '../../daemon/mcp/tree.ts';
import { compileGlob } from '../../daemon/mcp/glob.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

type Result = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text: string }> };

async function connect(url: string, token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'trawl-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** A user with an API key and a scoped token for one repository. */
async function identities(d: TestDaemon, email: string, scopeRepo: string): Promise<{ key: string; token: string }> {
  const key = await newUserKey(email, ['--data-dir', d.dataDir]);
  const token = newScopedToken();
  const store = openStore(d.dataDir);
  try {
    const user = (await store.getUserByEmail(email))!;
    const repoId = (await store.getRepoByName(scopeRepo))!.repoId;
    const now = new Date();
    await store.createScopedToken(
      {
        userId: user.id,
        apiKeyId: (await store.listApiKeys(user.id))[0]!.id,
        hash: credentialHash(serverSecret(d.dataDir), token),
        repoIds: [repoId],
        expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
      },
      now.toISOString(),
    );
  } finally {
    await store.close();
  }
  return { key, token };
}

/** Search answers compared without their timing fields, which differ between two runs. */
function untimed(body: any): any {
  const stats = { ...body.stats };
  for (const k of ['duration', 'wait', 'matchTreeConstruction', 'matchTreeSearch']) delete stats[k];
  return { ...body, stats };
}

test('the tool server over HTTP: every tool agrees with the REST API; scoped tokens; the daily limit', async (t) => {
  const d = await startTestDaemon({ settings: { anonymousAccess: false } });
  try {
    const { key, token } = await identities(d, 'agent@example.com', d.publicRepo);
    const auth = { authorization: `Bearer ${key}` };
    const rest = async (method: string, path: string, json?: unknown) => {
      const a = await call(`${d.url}${path}`, { method, headers: auth, ...(json !== undefined ? { json } : {}) });
      assert.equal(a.status, 200, `${method} ${path}: ${a.text}`);
      return a;
    };
    const q = (o: Record<string, string>) => new URLSearchParams(o).toString();

    await t.test('no credential: 401, like any API route', async () => {
      const r = await call(`${d.url}/api/mcp`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      assert.equal(r.status, 401);
      assert.equal(r.json.errorCode, 'NOT_AUTHENTICATED');
    });

    await t.test('every tool, against the REST answer to the same request', async () => {
      const { client } = await connect(d.url, key);
      try {
        const listed = await client.listTools();
        assert.deepEqual(
          listed.tools.map((x) => x.name),
          [...TOOL_NAMES],
        );
        for (const tool of listed.tools) {
          assert.ok((tool.description ?? '').length > 40, `${tool.name} is described`);
          assert.equal(tool.inputSchema.type, 'object');
          // The watches' create and delete (mcp-watches.test.ts) change something; every other tool only reads.
          assert.equal(tool.annotations?.readOnlyHint, tool.name !== 'create_watch' && tool.name !== 'delete_watch');
        }
        const callTool = async (name: string, args: Record<string, unknown>): Promise<Result> => {
          const r = (await client.callTool({ name, arguments: args })) as Result;
          assert.ok(!r.isError, `${name}: ${r.content[0]?.text}`);
          assert.ok(r.content[0]!.text.length > 0);
          return r;
        };
        const repo = d.publicRepo;

        const search = await callTool('search_code', { query: 'widget_count', contextLines: 1 });
        const searchRest = await rest('POST', '/api/search', {
          query: 'widget_count',
          matches: 100,
          contextLines: 1,
          isRegexEnabled: false,
          isCaseSensitivityEnabled: false,
        });
        assert.deepEqual(untimed(search.structuredContent), untimed(searchRest.json));
        assert.ok(searchRest.json.files.length >= 2);
        assert.match(search.content[0]!.text, /src\/widget\.c/);

        const read = await callTool('read_file', { repo, path: 'src/widget.c', offset: 2, limit: 1 });
        const source = (await rest('GET', `/api/source?${q({ repo, path: 'src/widget.c' })}`)).json;
        assert.deepEqual(read.structuredContent, {
          ...source,
          source: source.source
            .split(/(?<=\n)/)
            .slice(1, 2)
            .join(''),
        });
        assert.match(read.content[0]!.text, /offset=3/, 'the continuation hint names the next offset');

        const repos = await callTool('list_repos', {});
        const reposRest = await rest('GET', '/api/repos?sort=name&direction=asc&page=1&perPage=30');
        assert.deepEqual(repos.structuredContent, { repos: reposRest.json, total: Number(reposRest.headers.get('x-total-count')), page: 1, perPage: 30 });

        const filesRest = (await rest('POST', '/api/files', { repoName: repo })).json as Array<{ path: string }>;
        const paths = filesRest.map((f) => f.path);
        const tree = await callTool('list_tree', { repo, depth: 1 });
        const expectedTree = await listTree(paths, '', 1, 'both');
        assert.equal(expectedTree.kind, 'directory');
        if (expectedTree.kind === 'directory') assert.deepEqual(tree.structuredContent.entries, expectedTree.entries);
        const glob = await callTool('glob', { repo, pattern: 'src/**/*.c' });
        const matching = filesRest.filter((f) => compileGlob('src/**/*.c').test(f.path));
        assert.deepEqual(glob.structuredContent, { files: matching, total: matching.length });
        assert.ok(matching.length >= 2);

        for (const [tool, route] of [
          ['find_symbol_definitions', '/api/find_definitions'],
          ['find_symbol_references', '/api/find_references'],
        ] as const) {
          const r = await callTool(tool, { symbolName: 'widget_count' });
          assert.deepEqual(r.structuredContent, (await rest('POST', route, { symbolName: 'widget_count' })).json, tool);
        }

        const commits = await callTool('list_commits', { repo });
        const commitsRest = await rest('GET', `/api/commits?${q({ repo, page: '1', perPage: '20' })}`);
        assert.deepEqual(commits.structuredContent, {
          commits: commitsRest.json,
          total: Number(commitsRest.headers.get('x-total-count')),
          page: 1,
          perPage: 20,
        });

        const diff = await callTool('get_diff', { repo, base: 'v1.0', head: 'dev' });
        assert.deepEqual(diff.structuredContent, (await rest('GET', `/api/diff?${q({ repo, base: 'v1.0', head: 'dev' })}`)).json);

        const blame = await callTool('blame', { repo, path: 'src/widget.c' });
        const blameRest = (await rest('GET', `/api/blame?${q({ repo, path: 'src/widget.c' })}`)).json;
        const ranges = clipBlame(blameRest, 1, undefined);
        assert.deepEqual(blame.structuredContent.ranges, ranges);
        assert.deepEqual(Object.keys(blame.structuredContent.commits).sort(), [...new Set(ranges.map((r: { hash: string }) => r.hash))].sort());

        // A REST error is a tool error with the REST error code.
        const missing = (await client.callTool({ name: 'read_file', arguments: { repo: 'no-such-repo', path: 'a' } })) as Result;
        assert.equal(missing.isError, true);
        assert.match(missing.content[0]!.text, /^REPOSITORY_NOT_FOUND: /);
      } finally {
        await client.close();
      }
    });

    await t.test('a scoped token: no tool reveals a repository outside its scope', async () => {
      const { client } = await connect(d.url, token);
      try {
        const text = (r: Result) => r.content.map((c) => c.text).join('\n') + JSON.stringify(r.structuredContent ?? {});
        const outside = [
          ['search_code', { query: 'widget_secret_sauce repo:.*' }],
          ['search_code', { query: 'vault branch:*' }],
          ['list_repos', {}],
          ['read_file', { repo: d.privateRepo, path: 'vault.c' }],
          ['list_tree', { repo: d.privateRepo }],
          ['glob', { repo: d.privateRepo, pattern: '**' }],
          ['find_symbol_definitions', { symbolName: 'widget_secret_sauce' }],
          ['find_symbol_references', { symbolName: 'widget_secret_sauce', repoName: d.privateRepo }],
          ['list_commits', { repo: d.privateRepo }],
          ['get_diff', { repo: d.privateRepo, base: 'main', head: 'main' }],
          ['blame', { repo: d.privateRepo, path: 'vault.c' }],
        ] as const;
        for (const [name, args] of outside) {
          const r = (await client.callTool({ name, arguments: args })) as Result;
          // What only the private repository holds: its file, its content, its name in a result field
          // (the name or the symbol may come back as an echo of the request).
          assert.doesNotMatch(
            text(r),
            /vault\.c|repo=secret|"repository":"secret"|"repoName":"secret"|int widget_secret_sauce/,
            `${name} ${JSON.stringify(args)}`,
          );
          if ('repo' in args) assert.match(r.content[0]!.text, /^REPOSITORY_NOT_FOUND: /, name);
        }
        const own = (await client.callTool({ name: 'list_repos', arguments: {} })) as Result;
        assert.deepEqual(
          own.structuredContent.repos.map((x: { repoName: string }) => x.repoName),
          [d.publicRepo],
        );
      } finally {
        await client.close();
      }
    });
  } finally {
    await d.cleanup();
  }
});

test('the daily limit: each tool call counts one; the fourth of 3 fails with the rate-limit error; listing and ping do not count', async () => {
  const d = await startTestDaemon({ settings: { anonymousAccess: false, rateLimit: { requestsPerDay: 3 } } });
  try {
    const { key } = await identities(d, 'bot@example.com', d.publicRepo);
    const { client, transport } = await connect(d.url, key);
    try {
      for (let i = 0; i < 3; i++) {
        await client.listTools();
        await client.ping();
        const r = (await client.callTool({ name: 'list_repos', arguments: {} })) as Result;
        assert.ok(!r.isError);
      }
      const over = await client.callTool({ name: 'search_code', arguments: { query: 'widget' } }).then(
        () => assert.fail('the fourth call must fail'),
        (err: unknown) => err,
      );
      assert.ok(over instanceof McpError);
      assert.equal(over.code, MCP_RATE_LIMIT_EXCEEDED);
      assert.match(over.message, /API rate limit exceeded: 3 requests per day\. The limit resets at 00:00 UTC\. Ask an administrator for a higher limit\./);
      assert.equal((over.data as { errorCode: string }).errorCode, 'API_RATE_LIMIT_EXCEEDED');
      assert.ok((over.data as { retryAfterSeconds: number }).retryAfterSeconds >= 1);
      // Even a call the SDK would reject for its arguments counts (and is refused).
      await assert.rejects(client.callTool({ name: 'read_file', arguments: {} }), (e: unknown) => e instanceof McpError && e.code === MCP_RATE_LIMIT_EXCEEDED);
      assert.equal((await client.listTools()).tools.length, TOOL_NAMES.length, 'listing tools still works');
      await client.ping();
      // The REST API shares the budget.
      const r = await call(`${d.url}/api/repos`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(r.status, 429);
      // DELETE ends the session; the id is then unknown.
      const id = transport.sessionId!;
      await transport.terminateSession();
      const after = await call(`${d.url}/api/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'mcp-session-id': id, accept: 'application/json, text/event-stream' },
        json: { jsonrpc: '2.0', id: 9, method: 'ping' },
      });
      assert.equal(after.status, 404);
    } finally {
      await client.close();
    }
  } finally {
    await d.cleanup();
  }
});
