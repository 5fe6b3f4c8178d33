// Size caps (docs/security-and-faults.md, row 5): every endpoint that returns a file's
// content answers a file over settings.http.maxSourceBytes the documented way, without
// reading it: GET /api/source and /api/blame refuse it (413 FILE_TOO_LARGE), /api/outline
// gives it no symbols, /api/diff no hunks (`tooLarge`), search's `whole` content is cut at
// a character boundary (`contentTruncated`), and the tool server's read_file says why. The
// repository holds a 12 MiB file, loose, packed whole and packed as a delta; every answer
// is checked against the OpenAPI document, and the daemon's memory is measured around
// repeated refusals.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newUserKey } from '../helpers/cli-users.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const MiB = 1 << 20;
/** The cap of this daemon: 1 MiB, so that an indexed file (up to maxFileSize, 2 MiB) can pass it too. */
const CAP = MiB;

/** Exactly `bytes` of text lines; `seed` makes two versions differ in a few lines only. */
function bigText(bytes: number, seed: string): string {
  const line = 'the quick brown fox jumps over the lazy dog 0123456789 abcdefghij\n';
  const lines = Array.from({ length: Math.ceil(bytes / line.length) }, (_, i) => (i % 50_000 === 0 ? `${seed} ${i}\n` : line));
  return lines.join('').slice(0, bytes).padEnd(bytes, '.');
}

/**
 * 1.5 MiB with a two-byte character ("é") astride the cap: byte CAP - 1 is its first byte, so
 * a cut at exactly CAP bytes would split it.
 */
function astride(): string {
  const head = 'x'.repeat(CAP - 1 - 'needle_whole\n'.length);
  return `needle_whole\n${head}é${'y'.repeat(MiB / 2)}\n`;
}

test('files over settings.http.maxSourceBytes: each endpoint answers the documented way, without reading them', async (t) => {
  const d = await startTestDaemon({
    settings: { http: { maxSourceBytes: CAP } },
    extraRepos: [
      {
        name: 'bulky',
        build(repo) {
          repo.commit({ 'big.txt': bigText(12 * MiB, 'one'), 'small.c': 'int small_one(void) { return 1; }\n', 'mid.txt': astride() }, 'big files');
          // Packed: the newer big.txt whole, the older one as a delta of it (or the other way round).
          repo.commit({ 'big.txt': bigText(12 * MiB, 'two'), 'small.c': 'int small_two(void) { return 2; }\n' }, 'change both');
          git(repo.path, 'gc', '-q');
          const pack = join(repo.path, '.git', 'objects', 'pack');
          const idx = readdirSync(pack).find((f) => f.endsWith('.idx'))!;
          const ids = ['HEAD', 'HEAD~1'].map((r) => git(repo.path, 'rev-parse', `${r}:big.txt`).trim());
          const deltas = git(repo.path, 'verify-pack', '-v', join(pack, idx))
            .split('\n')
            .filter((l) => ids.some((id) => l.startsWith(id)) && l.trim().split(/\s+/).length === 7);
          assert.equal(deltas.length, 1, 'one version of big.txt is stored as a delta of the other');
          repo.commit({ 'loose.txt': bigText(12 * MiB, 'loose') }, 'a loose big file');
        },
      },
    ],
  });
  const dir = tempDir('size-caps');
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const get = async (path: string): Promise<Answer> => {
      const a = await call(`${d.url}${path}`);
      checker.check('GET', path.split('?')[0]!, a.status, a.json);
      return a;
    };
    const tooLarge = (a: Answer, what: string, size: number) => {
      assert.equal(a.status, 413, `${what}: ${a.text.slice(0, 300)}`);
      assert.equal(a.json.errorCode, 'FILE_TOO_LARGE', what);
      assert.ok(
        a.json.message.includes(`is ${size.toLocaleString('en-US')} bytes, over this server's limit of ${CAP.toLocaleString('en-US')} bytes`),
        `${what}: ${a.json.message}`,
      );
    };

    await t.test('GET /api/source: 413 FILE_TOO_LARGE, loose, packed whole and packed as a delta', async () => {
      for (const [path, ref, size] of [
        ['big.txt', 'HEAD', 12 * MiB],
        ['big.txt', 'HEAD~1', 12 * MiB],
        ['big.txt', 'HEAD~2', 12 * MiB],
        ['loose.txt', 'HEAD', 12 * MiB],
        ['mid.txt', 'HEAD', Buffer.byteLength(astride())],
      ] as const) {
        tooLarge(await get(`/api/source?repo=bulky&path=${path}&ref=${ref}`), `${path} at ${ref}`, size);
      }
      const small = await get('/api/source?repo=bulky&path=small.c');
      assert.equal(small.status, 200);
      assert.match(small.json.source, /small_two/);
    });

    await t.test('GET /api/blame: 413 FILE_TOO_LARGE', async () => {
      tooLarge(await get('/api/blame?repo=bulky&path=big.txt'), 'blame big.txt', 12 * MiB);
      assert.equal((await get('/api/blame?repo=bulky&path=small.c')).status, 200);
    });

    await t.test("GET /api/outline: no symbols for a file over the outline's 1 MiB", async () => {
      for (const path of ['big.txt', 'mid.txt']) {
        const a = await get(`/api/outline?repo=bulky&path=${path}`);
        assert.equal(a.status, 200, a.text);
        assert.deepEqual(a.json.symbols, []);
        assert.equal(a.json.language, 'Text');
      }
      const small = await get('/api/outline?repo=bulky&path=small.c');
      assert.deepEqual(
        small.json.symbols.map((s: { symbol: string }) => s.symbol),
        ['small_two'],
      );
      assert.equal((await get('/api/outline?repo=bulky&path=nope.c')).json.errorCode, 'FILE_NOT_FOUND');
    });

    await t.test('GET /api/diff: tooLarge and no hunks for the big file, hunks for the small one', async () => {
      const a = await get('/api/diff?repo=bulky&base=HEAD~2&head=HEAD~1');
      assert.equal(a.status, 200, a.text.slice(0, 300));
      const byPath = new Map((a.json.files as Array<{ newPath: string; hunks: unknown[]; tooLarge?: true }>).map((f) => [f.newPath, f]));
      assert.deepEqual(byPath.get('big.txt'), { oldPath: 'big.txt', newPath: 'big.txt', hunks: [], tooLarge: true });
      assert.equal(byPath.get('small.c')!.tooLarge, undefined);
      assert.equal(byPath.get('small.c')!.hunks.length, 1);
      // An added big file: one side only.
      const added = await get('/api/diff?repo=bulky&base=HEAD~1&head=HEAD');
      assert.deepEqual(added.json.files, [{ oldPath: null, newPath: 'loose.txt', hunks: [], tooLarge: true }]);
    });

    await t.test('search with whole: content cut at the cap, at a character boundary, with contentTruncated', async () => {
      const search = async (query: string) => {
        const a = await call(`${d.url}/api/search`, { json: { query, whole: true, matches: 10 } });
        checker.check('POST', '/api/search', a.status, a.json);
        assert.equal(a.status, 200, a.text.slice(0, 300));
        return a.json.files as Array<{ fileName: { text: string }; content: string; contentTruncated?: true }>;
      };
      const [mid] = await search('needle_whole');
      assert.equal(mid!.fileName.text, 'mid.txt');
      assert.equal(mid!.contentTruncated, true);
      // The "é" astride the cap is left out whole: CAP - 1 bytes, no replacement character.
      assert.equal(Buffer.byteLength(mid!.content), CAP - 1);
      assert.ok(astride().startsWith(mid!.content));
      assert.ok(!mid!.content.includes('\ufffd'));
      const [small] = await search('small_two');
      assert.equal(small!.content, 'int small_two(void) { return 2; }\n');
      assert.equal(small!.contentTruncated, undefined);
    });

    await t.test("a directory repository's indexed file: 413 too", async () => {
      const plain = join(dir.path, 'plain');
      mkdirSync(plain);
      writeFileSync(join(plain, 'mid.txt'), astride());
      writeFileSync(join(plain, 'ok.txt'), 'fine\n');
      await indexLocal(plain, { dataDir: d.dataDir, symbols: false });
      tooLarge(await get('/api/source?repo=plain&path=mid.txt'), 'plain mid.txt', Buffer.byteLength(astride()));
      assert.equal((await get('/api/source?repo=plain&path=ok.txt')).json.source, 'fine\n');
    });

    await t.test("the tool server's read_file says why", async () => {
      const key = await newUserKey('mcp@example.com', ['--data-dir', d.dataDir]);
      const transport = new StreamableHTTPClientTransport(new URL(`${d.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
      const client = new Client({ name: 'size-caps', version: '1.0.0' });
      await client.connect(transport);
      try {
        const r = (await client.callTool({ name: 'read_file', arguments: { repo: 'bulky', path: 'big.txt' } })) as {
          isError?: boolean;
          content: Array<{ text: string }>;
        };
        assert.equal(r.isError, true);
        assert.match(r.content[0]!.text, /^FILE_TOO_LARGE: "big\.txt" at "main" in bulky is 12,582,912 bytes/);
      } finally {
        await client.close();
      }
    });

    await t.test('memory: refusing a 12 MiB file does not load it', async () => {
      // The daemon runs in this process: its resident memory around 20 refusals of each big
      // file. Loading them would take 12 MiB in libgit2 and as much again in a Buffer, a
      // string and the JSON, for each request.
      globalThis.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      for (let i = 0; i < 20; i++) {
        for (const ref of ['HEAD', 'HEAD~1', 'HEAD~2']) {
          assert.equal((await call(`${d.url}/api/source?repo=bulky&path=big.txt&ref=${ref}`)).status, 413);
          peak = Math.max(peak, process.memoryUsage().rss);
        }
      }
      const mb = (n: number) => (n / MiB).toFixed(1);
      t.diagnostic(`RSS before ${mb(before)} MiB, peak ${mb(peak)} MiB, after ${mb(process.memoryUsage().rss)} MiB (60 refusals of a 12 MiB file)`);
      assert.ok(peak - before < 12 * MiB, `RSS grew by ${mb(peak - before)} MiB`);
    });
  } finally {
    await d.cleanup();
    dir.cleanup();
  }
});
