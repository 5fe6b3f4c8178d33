// GET /api/outline over HTTP: a file's symbol definitions from universal-ctags at any ref of
// a real git repository (indexed or not), with /api/source's rules and errors, counted
// against the daily limit, every response checked against the daemon's OpenAPI document;
// a directory repository's outline from its index; and from a daemon whose PATH has no ctags
// (a child process, since the ctags probe is cached per process), 503 for a file ctags would
// read and the outline of a C file all the same (trawl's scanner reads it).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newUserKey } from '../helpers/cli-users.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { ctagsAvailable } from '../../daemon/symbols/ctags.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { ResponseChecker, validateDocument } from '../helpers/openapi.ts';

const GEO_V1 = `#include <math.h>

struct point {
  int x;
  int y;
};

static int add(int a, int b) {
  return a + b;
}

int main(void) {
  return add(1, 2);
}
`;

const GEO_V2 = `${GEO_V1}
double distance(struct point a, struct point b) {
  return sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y));
}
`;

const SHAPES_V1 = `export class Circle {
  constructor(readonly r: number) {}
  area(): number {
    return Math.PI * this.r * this.r;
  }
}
`;

const SHAPES_V2 = `export class Circle {
  constructor(readonly r: number) {}
  area(): number {
    return Math.PI * this.r * this.r;
  }
  perimeter(): number {
    return 2 * Math.PI * this.r;
  }
}

export function unit(): Circle {
  return new Circle(1);
}
`;

/** A C file over the 1 MiB cap of symbol extraction (the indexer's): full of functions, but no outline. */
function bigC(): string {
  let s = '';
  for (let i = 0; s.length <= (1 << 20) + 1000; i++) s += `int big_function_${i}(void) { return ${i}; }\n`;
  return s;
}

type Sym = { symbol: string; kind: string; line: number; endLine: number; parent?: { symbol: string; kind: string } };

const GEO_V1_SYMBOLS: Sym[] = [
  { symbol: 'point', kind: 'struct', line: 3, endLine: 6 },
  { symbol: 'x', kind: 'member', line: 4, endLine: 4, parent: { symbol: 'point', kind: 'struct' } },
  { symbol: 'y', kind: 'member', line: 5, endLine: 5, parent: { symbol: 'point', kind: 'struct' } },
  { symbol: 'add', kind: 'function', line: 8, endLine: 10 },
  { symbol: 'main', kind: 'function', line: 12, endLine: 14 },
];

test('GET /api/outline', async (t) => {
  assert.equal(ctagsAvailable(), true, 'these tests need universal-ctags on PATH');
  let v1 = '';
  const d = await startTestDaemon({
    settings: { rateLimit: { requestsPerDay: 1000 } },
    extraRepos: [
      {
        name: 'shapes',
        build(repo) {
          v1 = repo.commit(
            {
              'src/geo.c': GEO_V1,
              'src/shapes.ts': SHAPES_V1,
              'NOTES.txt': 'Plain words.\nNo definitions here.\n',
              'data.bin': new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0]),
            },
            'v1',
          );
          repo.tag('v1');
          repo.commit({ 'src/geo.c': GEO_V2, 'src/shapes.ts': SHAPES_V2, 'big.c': bigC() }, 'v2');
        },
      },
    ],
  });
  try {
    const doc = (await call(`${d.url}/api/openapi.json`)).json;
    const checker = new ResponseChecker(doc);
    const outline = async (query: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> => {
      const a = await call(`${d.url}/api/outline?${new URLSearchParams(query).toString()}`, { headers });
      checker.check('GET', '/api/outline', a.status, a.json);
      return a;
    };
    const ok = async (query: Record<string, string>): Promise<any> => {
      const a = await outline(query);
      assert.equal(a.status, 200, `${JSON.stringify(query)}: ${a.text}`);
      return a.json;
    };
    const names = (o: { symbols: Sym[] }) => o.symbols.map((s) => s.symbol);

    await t.test('documented in the OpenAPI document, which still validates', async () => {
      const v = await validateDocument(doc);
      assert.equal(v.valid, true, JSON.stringify(v.errors));
      const op = doc.paths['/api/outline']?.get;
      assert.ok(op, 'GET /api/outline is documented');
      assert.equal(op.operationId, 'getOutline');
      assert.deepEqual(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(), ['query:path', 'query:ref', 'query:repo']);
      for (const status of ['200', '400', '404', '503']) assert.ok(op.responses[status], `documents ${status}`);
      const route = d.daemon.routes.find((r) => r.method === 'GET' && r.path === '/api/outline')!;
      const source = d.daemon.routes.find((r) => r.method === 'GET' && r.path === '/api/source')!;
      assert.equal(route.rateLimited, source.rateLimited);
      assert.equal(route.authenticated, source.authenticated);
    });

    await t.test('C: structs, members with their parent, functions with their end lines, by line', async () => {
      const o = await ok({ repo: 'shapes', path: 'src/geo.c', ref: 'v1' });
      assert.deepEqual(o, { repo: 'shapes', path: 'src/geo.c', ref: 'v1', language: 'C', symbols: GEO_V1_SYMBOLS });
    });

    await t.test('TypeScript: a class and its methods, sorted by line then name', async () => {
      const o = await ok({ repo: 'shapes', path: 'src/shapes.ts', ref: 'v1' });
      assert.equal(o.language, 'TypeScript');
      const circle = { symbol: 'Circle', kind: 'class' };
      const byName = new Map<string, Sym>(o.symbols.map((s: Sym) => [s.symbol, s]));
      assert.deepEqual(byName.get('Circle'), { ...circle, line: 1, endLine: byName.get('Circle')!.endLine });
      assert.deepEqual(byName.get('area'), { symbol: 'area', kind: 'method', line: 3, endLine: byName.get('area')!.endLine, parent: circle });
      assert.equal(byName.get('constructor')?.line, 2);
      assert.deepEqual(byName.get('constructor')?.parent, circle);
      for (let i = 1; i < o.symbols.length; i++) {
        const [a, b] = [o.symbols[i - 1] as Sym, o.symbols[i] as Sym];
        assert.ok(a.line < b.line || (a.line === b.line && a.symbol <= b.symbol), `${a.symbol}@${a.line} before ${b.symbol}@${b.line}`);
      }
      for (const s of o.symbols as Sym[]) assert.ok(s.endLine >= s.line);
      assert.ok(!byName.has('perimeter') && !byName.has('unit'), 'not yet at v1');
    });

    await t.test('the default ref is the default branch, reported; an older ref lacks what came later', async () => {
      const head = await ok({ repo: 'shapes', path: 'src/geo.c' });
      assert.equal(head.ref, 'main');
      assert.deepEqual(head.symbols, [...GEO_V1_SYMBOLS, { symbol: 'distance', kind: 'function', line: 16, endLine: 18 }]);
      assert.deepEqual(await ok({ repo: 'shapes', path: 'src/geo.c', ref: 'main' }), head);
      for (const ref of ['v1', 'main~1', v1, v1.slice(0, 10)]) {
        const old = await ok({ repo: 'shapes', path: 'src/geo.c', ref });
        assert.equal(old.ref, ref);
        assert.deepEqual(old.symbols, GEO_V1_SYMBOLS, ref);
      }
      const ts = await ok({ repo: 'shapes', path: 'src/shapes.ts' });
      const perimeter = ts.symbols.find((s: Sym) => s.symbol === 'perimeter');
      assert.deepEqual(perimeter, { symbol: 'perimeter', kind: 'method', line: 6, endLine: perimeter.endLine, parent: { symbol: 'Circle', kind: 'class' } });
      assert.deepEqual(
        ts.symbols.find((s: Sym) => s.symbol === 'unit'),
        { symbol: 'unit', kind: 'function', line: 11, endLine: ts.symbols.find((s: Sym) => s.symbol === 'unit').endLine },
      );
      // The other repository's branches: the outline reads git, whatever was indexed.
      const dev = await ok({ repo: 'widgets', path: 'src/dev.c', ref: 'dev' });
      assert.deepEqual(names(dev), ['widget_dev_only']);
    });

    await t.test('the path is normalized as /api/source normalizes it', async () => {
      const o = await ok({ repo: 'shapes', path: '/src//geo.c', ref: 'v1' });
      assert.equal(o.path, 'src/geo.c');
      assert.deepEqual(o.symbols, GEO_V1_SYMBOLS);
    });

    await t.test('no symbols: plain text, binary, empty, over the size cap', async () => {
      const text = await ok({ repo: 'shapes', path: 'NOTES.txt' });
      assert.deepEqual(text.symbols, []);
      assert.equal(text.language, 'Text');
      assert.deepEqual((await ok({ repo: 'shapes', path: 'data.bin' })).symbols, []);
      assert.deepEqual((await ok({ repo: 'widgets', path: 'logo.bin' })).symbols, []);
      const big = await ok({ repo: 'shapes', path: 'big.c' });
      assert.equal(big.language, 'C');
      assert.deepEqual(big.symbols, [], 'over 1 MiB: no outline, not an error');
    });

    await t.test('the errors of /api/source', async () => {
      const errors: Array<[Record<string, string>, number, string]> = [
        [{ repo: 'nope', path: 'a.c' }, 404, 'REPOSITORY_NOT_FOUND'],
        [{ repo: 'secret', path: 'vault.c' }, 404, 'REPOSITORY_NOT_FOUND'],
        [{ repo: 'shapes', path: 'src/nope.c' }, 404, 'FILE_NOT_FOUND'],
        [{ repo: 'shapes', path: 'src' }, 404, 'FILE_NOT_FOUND'],
        [{ repo: 'shapes', path: 'big.c', ref: 'v1' }, 404, 'FILE_NOT_FOUND'],
        [{ repo: 'shapes', path: 'src/geo.c', ref: 'no-such-branch' }, 400, 'INVALID_GIT_REF'],
        [{ repo: 'shapes', path: 'src/geo.c', ref: '-x' }, 400, 'INVALID_GIT_REF'],
        [{ repo: 'shapes', path: 'src/geo.c', ref: '--output=/tmp/x' }, 400, 'INVALID_GIT_REF'],
        [{ repo: 'shapes' }, 400, 'MISSING_REQUIRED_QUERY_PARAMETER'],
        [{ path: 'src/geo.c' }, 400, 'MISSING_REQUIRED_QUERY_PARAMETER'],
        [{ repo: 'shapes', path: '../../etc/passwd' }, 400, 'INVALID_QUERY_PARAMS'],
        [{ repo: 'shapes', path: 'src/../src/geo.c' }, 400, 'INVALID_QUERY_PARAMS'],
        [{ repo: 'shapes', path: '' }, 400, 'INVALID_QUERY_PARAMS'],
        [{ repo: 'shapes', path: 'src/geo.c', ref: '' }, 400, 'INVALID_QUERY_PARAMS'],
        [{ repo: 'shapes', path: 'src/geo.c', extra: '1' }, 400, 'INVALID_QUERY_PARAMS'],
      ];
      for (const [query, status, code] of errors) {
        const e = await outline(query);
        assert.equal(e.status, status, `${JSON.stringify(query)}: ${e.text}`);
        assert.equal(e.json.errorCode, code, JSON.stringify(query));
        // The same answer as /api/source for the same query.
        const source = await call(`${d.url}/api/source?${new URLSearchParams(query).toString()}`);
        assert.deepEqual([source.status, source.json.errorCode], [status, code], `/api/source agrees on ${JSON.stringify(query)}`);
      }
    });

    await t.test('concurrent requests all get their outline', async () => {
      const all = await Promise.all(Array.from({ length: 24 }, (_, i) => ok({ repo: 'shapes', path: 'src/geo.c', ref: i % 2 ? 'v1' : 'main' })));
      for (const [i, o] of all.entries()) assert.equal(o.symbols.length, i % 2 ? 5 : 6);
    });

    await t.test('counted against the daily limit like /api/source, failed requests too', async () => {
      const auth = { authorization: `Bearer ${await newUserKey('olga@example.com', ['--data-dir', d.dataDir])}` };
      const remaining = (a: Answer) => Number(a.headers.get('x-ratelimit-remaining'));
      const first = await outline({ repo: 'shapes', path: 'src/geo.c' }, auth);
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('x-ratelimit-limit'), '1000');
      const second = await outline({ repo: 'shapes', path: 'src/geo.c', ref: 'v1' }, auth);
      assert.equal(remaining(second), remaining(first) - 1);
      const failed = await outline({ repo: 'shapes', path: 'nope.c' }, auth);
      assert.equal(failed.status, 404);
      assert.equal(remaining(failed), remaining(second) - 1, 'a failed request counts');
      const source = await call(`${d.url}/api/source?repo=shapes&path=src/geo.c`, { headers: auth });
      assert.equal(remaining(source), remaining(failed) - 1, 'one budget with /api/source');
      // Visibility is /api/source's (s.catalog.find with the caller's identity): anonymous
      // callers never see the private repository (above); this user gets what source gives.
      const privateOutline = await outline({ repo: 'secret', path: 'vault.c' }, auth);
      const privateSource = await call(`${d.url}/api/source?repo=secret&path=vault.c`, { headers: auth });
      assert.equal(privateOutline.status, privateSource.status);
      if (privateOutline.status === 200)
        assert.deepEqual(privateOutline.json.symbols, [{ symbol: 'widget_secret_sauce', kind: 'variable', line: 1, endLine: 1 }]);
      const bad = await outline({ repo: 'shapes', path: 'src/geo.c' }, { authorization: `Bearer svk_${'0'.repeat(64)}` });
      assert.equal(bad.status, 401);
    });
  } finally {
    await d.cleanup();
  }
});

test('GET /api/outline of a directory repository: from its index, no other ref', async () => {
  const dir = tempDir('outline-dir');
  try {
    const corpus = join(dir.path, 'plain');
    mkdirSync(join(corpus, 'lib'), { recursive: true });
    writeFileSync(
      join(corpus, 'lib', 'list.c'),
      'struct node {\n  struct node *next;\n};\n\nint length(struct node *n) {\n  return n ? 1 + length(n->next) : 0;\n}\n',
    );
    writeFileSync(join(corpus, 'README'), 'nothing to see\n');
    const dataDir = join(dir.path, 'data');
    await indexLocal(corpus, { dataDir, symbols: true });
    const config = parseConfig(JSON.stringify({ settings: { anonymousAccess: true } }), join(dir.path, 'trawl.json'));
    const daemon = await startDaemon({ config, dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false });
    try {
      const checker = new ResponseChecker((await call(`${daemon.url}/api/openapi.json`)).json);
      const get = async (query: Record<string, string>) => {
        const a = await call(`${daemon.url}/api/outline?${new URLSearchParams(query).toString()}`);
        checker.check('GET', '/api/outline', a.status, a.json);
        return a;
      };
      const o = await get({ repo: 'plain', path: 'lib/list.c' });
      assert.equal(o.status, 200, o.text);
      const defaultRef = o.json.ref;
      assert.equal(typeof defaultRef, 'string');
      assert.deepEqual(o.json, {
        repo: 'plain',
        path: 'lib/list.c',
        ref: defaultRef,
        language: 'C',
        symbols: [
          { symbol: 'node', kind: 'struct', line: 1, endLine: 3 },
          { symbol: 'next', kind: 'member', line: 2, endLine: 2, parent: { symbol: 'node', kind: 'struct' } },
          { symbol: 'length', kind: 'function', line: 5, endLine: 7 },
        ],
      });
      assert.deepEqual((await get({ repo: 'plain', path: 'lib/list.c', ref: defaultRef })).json, o.json);
      assert.deepEqual((await get({ repo: 'plain', path: 'README' })).json.symbols, []);
      assert.equal((await get({ repo: 'plain', path: 'lib/list.c', ref: 'some-branch' })).json.errorCode, 'INVALID_GIT_REF');
      assert.equal((await get({ repo: 'plain', path: 'lib/nope.c' })).json.errorCode, 'FILE_NOT_FOUND');
      assert.equal((await get({ repo: 'plain', path: 'lib/../x' })).json.errorCode, 'INVALID_QUERY_PARAMS');
    } finally {
      await daemon.close();
    }
  } finally {
    dir.cleanup();
  }
});

test('GET /api/outline without universal-ctags: 503 SERVICE_UNAVAILABLE saying so for a file ctags reads; C needs no ctags', async () => {
  // A daemon in a child process whose PATH holds git and node but no ctags.
  const dir = tempDir('outline-noctags');
  try {
    const bin = join(dir.path, 'bin');
    mkdirSync(bin);
    symlinkSync(execFileSync('which', ['git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    symlinkSync(process.execPath, join(bin, 'node'));
    const script = join(dir.path, 'run.mts');
    const helpers = new URL('../helpers/daemon.ts', import.meta.url).href;
    writeFileSync(
      script,
      `import { call, startTestDaemon } from ${JSON.stringify(helpers)};
const d = await startTestDaemon();
try {
  const r = await call(d.url + '/api/outline?repo=widgets&path=README.txt');
  const c = await call(d.url + '/api/outline?repo=widgets&path=src/main.c');
  const missing = await call(d.url + '/api/outline?repo=widgets&path=nope.c');
  const source = await call(d.url + '/api/source?repo=widgets&path=src/main.c');
  console.log(JSON.stringify({ status: r.status, json: r.json, retryAfter: r.headers.get('retry-after'), c: { status: c.status, json: c.json }, missing: missing.status, source: source.status }));
} finally {
  await d.cleanup();
}
`,
    );
    const out = execFileSync(process.execPath, ['--import', 'tsx', script], {
      cwd: new URL('../..', import.meta.url).pathname,
      env: { ...process.env, PATH: bin },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const r = JSON.parse(out.trim().split('\n').at(-1)!);
    assert.equal(r.status, 503);
    assert.equal(r.json.errorCode, 'SERVICE_UNAVAILABLE');
    assert.match(r.json.message, /universal-ctags.*not installed/);
    assert.equal(r.retryAfter, '1');
    assert.equal(r.c.status, 200, "C is read by trawl's scanner");
    assert.deepEqual(
      r.c.json.symbols.map((x: { symbol: string; kind: string; line: number }) => [x.symbol, x.kind, x.line]),
      [['main', 'function', 1]],
    );
    assert.equal(r.missing, 404, 'the request is checked first: a missing file is still 404');
    assert.equal(r.source, 200, '/api/source does not need ctags');
  } finally {
    dir.cleanup();
  }
});
