// Conformance of the HTTP API (docs/http-api.md): the real daemon on a loopback port
// over real git repositories made here. Every response is checked against the daemon's own
// OpenAPI document (status documented, body matches its schema), and the document itself
// validates with a standard OpenAPI validator.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { DEFAULT_BASE_URL } from '../../daemon/repos/web-urls.ts';
import { ERROR_CODES, ServiceError } from '../../daemon/errors.ts';
import type { Authenticator } from '../../daemon/auth/identity.ts';
import { call, startTestDaemon, type Answer, type TestDaemon } from '../helpers/daemon.ts';
import { ResponseChecker, validateDocument } from '../helpers/openapi.ts';

const ROOT = join(import.meta.dirname, '../..');

/** A request whose answer is checked against the document; returns it for more asserts. */
function client(t: TestDaemon, checker: ResponseChecker) {
  return async (
    method: string,
    path: string,
    init: { query?: Record<string, string>; json?: unknown; headers?: Record<string, string>; body?: string } = {},
  ): Promise<Answer> => {
    const qs = init.query ? `?${new URLSearchParams(init.query).toString()}` : '';
    const req: RequestInit & { json?: unknown } = { method };
    if (init.json !== undefined) req.json = init.json;
    if (init.body !== undefined) req.body = init.body;
    if (init.headers) req.headers = init.headers;
    const a = await call(`${t.url}${path}${qs}`, req);
    assert.equal(a.headers.get('content-type'), 'application/json; charset=utf-8', `${method} ${path}: content type`);
    assert.ok(a.headers.get('x-request-id'), 'every response has a request id');
    checker.check(method, path, a.status, a.json);
    if (a.status >= 400) {
      assert.equal(a.json.statusCode, a.status);
      assert.equal(ERROR_CODES[a.json.errorCode as keyof typeof ERROR_CODES], a.status, `errorCode ${a.json.errorCode} has status ${a.status}`);
      assert.doesNotMatch(a.json.message, /\n\s+at |\/tmp\/|node_modules/, 'no stack trace or server path in messages');
    }
    return a;
  };
}

test('HTTP API conformance', async (t) => {
  // A test credential that sees every repository (the identity issue brings real ones);
  // anything else is the embedded default: anonymous, public repositories only.
  const authenticator: Authenticator = {
    async authenticate(c) {
      if (c.token === 'test-sees-all') return { kind: 'apiKey', userId: 'test', canSee: () => true };
      if (c.token !== undefined) throw new ServiceError('NOT_AUTHENTICATED', 'the API key is not valid');
      return { kind: 'anonymous', canSee: (r) => r.visibility === 'public' };
    },
  };
  const d = await startTestDaemon({ settings: { publicUrl: DEFAULT_BASE_URL }, daemon: { authenticator } });
  try {
    const doc = (await call(`${d.url}/api/openapi.json`)).json;
    const checker = new ResponseChecker(doc);
    const api = client(d, checker);

    await t.test('the OpenAPI document validates and lists every route', async () => {
      const v = await validateDocument(doc);
      assert.equal(v.valid, true, JSON.stringify(v.errors));
      assert.equal(doc.info.version, 'v5.1.6');
      for (const r of d.daemon.routes) assert.ok(doc.paths[r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path} documented`);
      for (const path of [
        '/api/search',
        '/api/stream_search',
        '/api/source',
        '/api/find_definitions',
        '/api/find_references',
        '/api/files',
        '/api/tree',
        '/api/folder_contents',
        '/api/blame',
        '/api/diff',
        '/api/commit',
        '/api/commits',
        '/api/commits/authors',
        '/api/repos',
        '/api/connections',
        '/api/health',
        '/api/version',
        '/api/openapi.json',
      ]) {
        assert.ok(doc.paths[path], `${path} is served`);
      }
    });

    await t.test('system endpoints', async () => {
      assert.deepEqual((await api('GET', '/api/health')).json, { status: 'ok' });
      const v = await api('GET', '/api/version');
      assert.equal(v.json.apiVersion, 'v5.1.6');
      assert.match(v.json.version, /^\d+\.\d+\.\d+/);
      const metrics = await fetch(`${d.url}/metrics`);
      assert.equal(metrics.status, 200);
      const text = await metrics.text();
      assert.match(text, /trawl_http_requests_total\{method="GET",route="\/api\/health",status="200"\} 1/);
      assert.match(text, /trawl_repositories\{state="indexed"\} 2/);
      assert.match(text, /trawl_index_files \d+/);
      // The process's own figures, the event loop's lag among them (sampled every 100 ms: metrics.ts).
      assert.match(text, /^trawl_nodejs_eventloop_lag_p99_seconds [\d.e+-]+$/m);
      assert.match(text, /^trawl_process_cpu_seconds_total [\d.e+-]+$/m);
    });

    await t.test('search: shapes, ranking fields, visibility, branches', async () => {
      const r = await api('POST', '/api/search', { json: { query: 'widget_count', matches: 100, contextLines: 1 } });
      assert.equal(r.status, 200);
      assert.equal(r.json.isSearchExhaustive, true);
      const files = r.json.files.map((f: { fileName: { text: string } }) => f.fileName.text).sort();
      assert.deepEqual(files, ['src/main.c', 'src/widget.c']);
      const widget = r.json.files.find((f: { fileName: { text: string } }) => f.fileName.text === 'src/widget.c');
      assert.equal(widget.repository, 'widgets');
      assert.equal(widget.language, 'C');
      assert.deepEqual(widget.branches, ['main']);
      assert.equal(widget.webUrl, `${DEFAULT_BASE_URL}/widgets/-/blob/main/src/widget.c`);
      assert.equal(widget.chunks[0].matchRanges[0].start.lineNumber, 1);
      assert.ok(
        widget.chunks[0].symbols.some((s: { symbol: string }) => s.symbol === 'widget_count'),
        'chunk symbols from the symbol index',
      );
      assert.deepEqual(
        r.json.repositoryInfo.map((x: { name: string }) => x.name),
        ['widgets'],
      );
      assert.equal(r.json.stats.fileCount, 2);
      assert.ok(r.json.stats.duration > 0);
      // The private repository is invisible to anonymous callers, even by name.
      const hidden = await api('POST', '/api/search', { json: { query: 'widget_secret_sauce', matches: 10 } });
      assert.deepEqual(hidden.json.files, []);
      // Branches: only the default branch unless named.
      const dev = await api('POST', '/api/search', { json: { query: 'widget_dev_only', matches: 10 } });
      assert.equal(dev.json.files.length, 0);
      const all = await api('POST', '/api/search', { json: { query: 'widget_count branch:*', matches: 100 } });
      const main = all.json.files.find((f: { fileName: { text: string } }) => f.fileName.text === 'src/widget.c');
      assert.deepEqual(main.branches, ['main', 'dev', 'v1.0']);
      // whole, regex, case.
      const whole = await api('POST', '/api/search', { json: { query: 'return 42', matches: 5, whole: true } });
      assert.equal(whole.json.files[0].content, 'int widget_count(void) {\n  return 42;\n}\n');
      const regex = await api('POST', '/api/search', { json: { query: 'widget_[a-z]+\\(', matches: 50, isRegexEnabled: true } });
      assert.ok(regex.json.files.length >= 2);
      const caseHit = await api('POST', '/api/search', { json: { query: 'WIDGET_COUNT', matches: 5, isCaseSensitivityEnabled: true } });
      assert.equal(caseHit.json.files.length, 0);
      // matches bounds the ranges returned.
      const one = await api('POST', '/api/search', { json: { query: 'widget', matches: 1 } });
      assert.equal(one.json.stats.actualMatchCount, 1);
      assert.equal(one.json.isSearchExhaustive, false);
    });

    await t.test('search errors', async () => {
      const cases: Array<[unknown, string, RegExp]> = [
        [{ query: 'x' }, 'INVALID_REQUEST_BODY', /matches is required/],
        [{ query: 'x', matches: 0 }, 'INVALID_REQUEST_BODY', /matches must be an integer between 1 and 100000, got 0/],
        [{ query: 'x', matches: 1, contextLines: 101 }, 'INVALID_REQUEST_BODY', /contextLines must be an integer between 0 and 100/],
        [{ query: 'x', matches: 1, extra: true }, 'INVALID_REQUEST_BODY', /unknown field "extra"/],
        [{ query: 5, matches: 1 }, 'INVALID_REQUEST_BODY', /query must be a string/],
        [[1, 2], 'INVALID_REQUEST_BODY', /must be a JSON object/],
        [{ query: 'x'.repeat(17000), matches: 1 }, 'INVALID_REQUEST_BODY', /at most 16384/],
        [{ query: '', matches: 1 }, 'FAILED_TO_PARSE_QUERY', /empty/],
        [{ query: 'a(', matches: 1, isRegexEnabled: true }, 'FAILED_TO_PARSE_QUERY', /regular expression/],
      ];
      for (const [body, code, message] of cases) {
        const r = await api('POST', '/api/search', { json: body });
        assert.equal(r.json.errorCode, code, JSON.stringify(body).slice(0, 80));
        assert.match(r.json.message, message);
      }
      const notJson = await api('POST', '/api/search', { body: '{"query": ', headers: { 'content-type': 'application/json' } });
      assert.equal(notJson.json.errorCode, 'INVALID_REQUEST_BODY');
      const wrongType = await api('POST', '/api/search', { body: 'query=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(wrongType.status, 415);
      const big = await api('POST', '/api/search', {
        body: JSON.stringify({ query: 'x'.repeat(1_100_000), matches: 1 }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(big.status, 413);
      assert.equal(big.json.errorCode, 'REQUEST_TOO_LARGE');
      const bad = await api('POST', '/api/search', { json: { query: 'x', matches: 1 }, headers: { authorization: 'Bearer svk_nope' } });
      assert.equal(bad.status, 401);
      assert.equal(bad.json.errorCode, 'NOT_AUTHENTICATED');
    });

    await t.test('unknown endpoint 404, wrong method 405 with Allow', async () => {
      const missing = await call(`${d.url}/api/nothing`);
      assert.equal(missing.status, 404);
      assert.equal(missing.json.errorCode, 'NOT_FOUND');
      const wrong = await call(`${d.url}/api/search`);
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.get('allow'), 'POST');
      assert.equal(wrong.json.errorCode, 'METHOD_NOT_ALLOWED');
      const put = await call(`${d.url}/api/repos`, { method: 'PUT' });
      assert.equal(put.status, 405);
      assert.equal(put.headers.get('allow'), 'GET, HEAD');
    });

    await t.test('/api/search equals trawl search --json (webUrls from the same public URL)', async () => {
      // The CLI has no caller and sees every repository: so does the caller here.
      for (const query of ['widget_count', 'widget branch:*', 'sym:widget_count', 'return file:\\.c$', 'widget_secret_sauce']) {
        const http = await api('POST', '/api/search', { json: { query, matches: 100, contextLines: 2 }, headers: { authorization: 'Bearer test-sees-all' } });
        const cli = JSON.parse(
          execFileSync(process.execPath, [join(ROOT, 'bin/trawl.js'), 'search', query, '--json', '--context', '2', '--data-dir', d.dataDir], {
            encoding: 'utf8',
          }),
        );
        assert.deepEqual(http.json.files, cli.files, query);
        assert.deepEqual(http.json.repositoryInfo, cli.repositoryInfo, query);
        assert.equal(http.json.isSearchExhaustive, cli.isSearchExhaustive, query);
        // Every stat but the four timings (duration, wait, matchTreeConstruction, matchTreeSearch).
        for (const k of [
          'actualMatchCount',
          'totalMatchCount',
          'fileCount',
          'filesSkipped',
          'contentBytesLoaded',
          'indexBytesLoaded',
          'crashes',
          'shardFilesConsidered',
          'filesConsidered',
          'filesLoaded',
          'shardsScanned',
          'shardsSkipped',
          'shardsSkippedFilter',
          'ngramMatches',
          'ngramLookups',
          'regexpsConsidered',
          'flushReason',
        ] as const) {
          assert.equal(http.json.stats[k], cli.stats[k], `${query}: stats.${k}`);
        }
      }
    });

    await t.test('stream_search: SSE framing through a real SSE parser', async () => {
      const res = await fetch(`${d.url}/api/stream_search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'widget', matches: 100 }),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache, no-transform');
      assert.equal(res.headers.get('x-accel-buffering'), 'no');
      const text = await res.text();
      const events: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (e) => events.push(e) });
      parser.feed(text);
      assert.match(text, /^(: keep-alive\n\n)*data: /, 'messages are data lines (or keep-alive comments)');
      assert.doesNotMatch(text, /^event:/m, 'no event names');
      assert.equal(events.at(-1)!.data, '[DONE]');
      const messages = events.slice(0, -1).map((e) => JSON.parse(e.data));
      for (const m of messages) checker.validate('#/components/schemas/StreamMessage', m, 'stream message');
      const chunks = messages.filter((m) => m.type === 'chunk');
      const final = messages.filter((m) => m.type === 'final');
      assert.equal(final.length, 1);
      assert.equal(messages.at(-1).type, 'final');
      assert.equal(final[0].isSearchExhaustive, true);
      const streamed = chunks.flatMap((c) => c.files.map((f: { fileName: { text: string } }) => f.fileName.text)).sort();
      const blocking = (await api('POST', '/api/search', { json: { query: 'widget', matches: 100 } })).json.files
        .map((f: { fileName: { text: string } }) => f.fileName.text)
        .sort();
      assert.deepEqual(streamed, blocking);
      assert.equal(final[0].accumulatedStats.fileCount, streamed.length);
      assert.equal(
        chunks.reduce((n, c) => n + c.stats.actualMatchCount, 0),
        final[0].accumulatedStats.actualMatchCount,
      );
      // Errors before the stream starts are plain JSON.
      const bad = await api('POST', '/api/stream_search', { json: { query: '"unterminated', matches: 5 } });
      assert.equal(bad.status, 400);
    });

    await t.test('source', async () => {
      const r = await api('GET', '/api/source', { query: { repo: 'widgets', path: 'src/widget.c' } });
      assert.equal(r.json.source, 'int widget_count(void) {\n  return 42;\n}\n');
      assert.equal(r.json.language, 'C');
      assert.equal(r.json.repo, 'widgets');
      assert.equal(r.json.repoCodeHostType, 'genericGitHost');
      assert.equal(r.json.blobSha, execFileSync('git', ['rev-parse', 'HEAD:src/widget.c'], { cwd: d.repoPath, encoding: 'utf8' }).trim());
      const atTag = await api('GET', '/api/source', { query: { repo: 'widgets', path: 'README.md', ref: 'v1.0' } });
      assert.match(atTag.json.source, /# Widgets/);
      const dev = await api('GET', '/api/source', { query: { repo: 'widgets', path: 'src/dev.c', ref: 'dev' } });
      assert.match(dev.json.source, /widget_dev_only/);
      const errors: Array<[Record<string, string>, number, string]> = [
        [{ repo: 'widgets' }, 400, 'MISSING_REQUIRED_QUERY_PARAMETER'],
        [{ repo: 'widgets', path: 'src/nope.c' }, 404, 'FILE_NOT_FOUND'],
        [{ repo: 'widgets', path: 'src' }, 404, 'FILE_NOT_FOUND'],
        [{ repo: 'nope', path: 'a' }, 404, 'REPOSITORY_NOT_FOUND'],
        [{ repo: 'secret', path: 'vault.c' }, 404, 'REPOSITORY_NOT_FOUND'],
        [{ repo: 'widgets', path: '../../etc/passwd' }, 400, 'INVALID_QUERY_PARAMS'],
        [{ repo: 'widgets', path: 'src/widget.c', ref: '-x' }, 400, 'INVALID_GIT_REF'],
        [{ repo: 'widgets', path: 'src/widget.c', ref: 'no-such-branch' }, 400, 'INVALID_GIT_REF'],
        [{ repo: 'widgets', path: 'a', extra: '1' }, 400, 'INVALID_QUERY_PARAMS'],
      ];
      for (const [query, status, code] of errors) {
        const e = await api('GET', '/api/source', { query });
        assert.equal(e.status, status, JSON.stringify(query));
        assert.equal(e.json.errorCode, code, JSON.stringify(query));
      }
    });

    await t.test('files, tree, folder_contents', async () => {
      const files = await api('POST', '/api/files', { json: { repoName: 'widgets' } });
      assert.deepEqual(
        files.json.map((f: { path: string }) => f.path),
        ['README.txt', 'logo.bin', 'src/main.c', 'src/widget.c'],
      );
      assert.deepEqual(files.json[2], { type: 'blob', path: 'src/main.c', name: 'main.c' });
      const atDev = await api('POST', '/api/files', { json: { repoName: 'widgets', revisionName: 'dev' } });
      assert.ok(atDev.json.some((f: { path: string }) => f.path === 'src/dev.c'));
      const tree = await api('POST', '/api/tree', { json: { repoName: 'widgets', paths: ['src'] } });
      assert.deepEqual(
        tree.json.tree.children.map((c: { type: string; name: string }) => `${c.type}:${c.name}`),
        ['tree:src', 'blob:README.txt', 'blob:logo.bin'],
      );
      assert.deepEqual(
        tree.json.tree.children[0].children.map((c: { name: string }) => c.name),
        ['main.c', 'widget.c'],
      );
      const folder = await api('GET', '/api/folder_contents', { query: { repoName: 'widgets', revisionName: 'main', path: 'src' } });
      assert.deepEqual(folder.json, [
        { type: 'blob', path: 'src/main.c', name: 'main.c' },
        { type: 'blob', path: 'src/widget.c', name: 'widget.c' },
      ]);
      const root = await api('GET', '/api/folder_contents', { query: { repoName: 'widgets', revisionName: 'main', path: '' } });
      assert.equal(root.json[0].type, 'tree');
      assert.equal((await api('POST', '/api/tree', { json: { repoName: 'widgets', paths: ['nope'] } })).json.errorCode, 'FILE_NOT_FOUND');
      assert.equal((await api('POST', '/api/files', { json: { repoName: 'widgets', revisionName: '--all' } })).json.errorCode, 'INVALID_GIT_REF');
      assert.equal((await api('GET', '/api/folder_contents', { query: { repoName: 'widgets', path: 'src/main.c' } })).json.errorCode, 'FILE_NOT_FOUND');
      assert.equal((await api('POST', '/api/files', { json: { repo: 'widgets' } })).json.errorCode, 'INVALID_REQUEST_BODY');
    });

    await t.test('find_definitions and find_references', async () => {
      const defs = await api('POST', '/api/find_definitions', { json: { symbolName: 'widget_count' } });
      assert.equal(defs.json.stats.matchCount, 1);
      assert.equal(defs.json.files[0].fileName, 'src/widget.c');
      assert.deepEqual(defs.json.files[0].matches[0].lineContent, 'int widget_count(void) {');
      const refs = await api('POST', '/api/find_references', { json: { symbolName: 'widget_count', language: 'C' } });
      assert.deepEqual(refs.json.files.map((f: { fileName: string }) => f.fileName).sort(), ['src/main.c', 'src/widget.c']);
      const onDev = await api('POST', '/api/find_references', { json: { symbolName: 'widget_count', revisionName: 'dev', repoName: 'widgets' } });
      assert.ok(onDev.json.files.some((f: { fileName: string }) => f.fileName === 'src/dev.c'));
      const none = await api('POST', '/api/find_definitions', { json: { symbolName: 'widget' } });
      assert.equal(none.json.stats.matchCount, 0, 'exact names only');
      assert.equal((await api('POST', '/api/find_definitions', { json: { symbolName: '' } })).json.errorCode, 'INVALID_REQUEST_BODY');
    });

    await t.test('repos and connections, with paging headers', async () => {
      const r = await api('GET', '/api/repos');
      assert.deepEqual(
        r.json.map((x: { repoName: string }) => x.repoName),
        ['widgets'],
        'the private repository is not listed',
      );
      assert.equal(r.json[0].defaultBranch, 'main');
      assert.equal(r.headers.get('x-total-count'), '1');
      assert.match(r.headers.get('link')!, /rel="first".*rel="last"/);
      const page = await api('GET', '/api/repos', { query: { perPage: '1', page: '2' } });
      assert.deepEqual(page.json, []);
      assert.match(page.headers.get('link')!, /page=1>; rel="prev"/);
      assert.equal((await api('GET', '/api/repos', { query: { perPage: '101' } })).json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.equal((await api('GET', '/api/repos', { query: { sort: 'size' } })).json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.deepEqual((await api('GET', '/api/repos', { query: { query: 'WIDG' } })).json.length, 1);
      assert.deepEqual((await api('GET', '/api/connections')).json, []);
    });
  } finally {
    await d.cleanup();
  }
});
