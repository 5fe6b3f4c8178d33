// Files shaped straight into JSON bytes (file-json.ts, json-bytes.ts) against the same
// FileResult built as objects from the same pieces (range-locations.ts) and serialised by
// JSON.stringify: byte for byte, on random bytes (invalid UTF-8, control characters,
// quotes) and on the hits of a real index (context, budgets, whole files, symbols, paths
// that need escaping), with the line tables a worker found and without them (the main
// thread's reshaping).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonBytes } from '../../daemon/search/json-bytes.ts';
import { locateLines } from '../../core/index.ts';
import { chunkSpans, locateRanges, nameRanges } from '../../daemon/search/range-locations.ts';
import { resultRepo, shapeInto, unshapedFile, wholeEnd, type ResultRepo, type ShapeOptions } from '../../daemon/search/file-json.ts';
import type { ShardHit } from '../../daemon/search/shard-search.ts';
import type { Shard } from '../../daemon/index/shard-reader.ts';
import { externalFileUrl, fileWebUrl } from '../../daemon/repos/web-urls.ts';
import type { Chunk, FileResult } from '../../daemon/search/types.ts';
import type { SymbolDef } from '../../daemon/symbols/ctags.ts';
import { hitsOf, indexedShard } from '../helpers/one-shard.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** What the writer must give for bytes [start, end) of `buf`. */
const want = (buf: Buffer, start: number, end: number) => Buffer.from(JSON.stringify(buf.toString('utf8', start, end)));

function written(f: (w: JsonBytes) => void): Buffer {
  const w = new JsonBytes(8); // small: every value makes it grow
  f(w);
  return w.take();
}

const EDGES: Array<[string, number[]]> = [
  ['empty', []],
  ['quote, backslash, slash', [0x22, 0x5c, 0x2f]],
  ['every control character and DEL', [...Array(32).keys(), 0x7f]],
  ['two-, three- and four-byte characters', [...Buffer.from('é€😀\u2028\u2029\uFEFF')]],
  ['a lone continuation byte', [0x61, 0x80, 0x62]],
  ['a truncated sequence at the end', [0x61, 0xe2, 0x82]],
  ['an encoded surrogate (not UTF-8)', [0xed, 0xa0, 0x80]],
  ['an overlong encoding', [0xc0, 0xaf, 0x22]],
  ['bytes never in UTF-8', [0xff, 0xfe, 0x0a, 0xf8]],
  ['invalid after an escape', [0x0a, 0x22, 0xc3]],
];

for (const [name, bytes] of EDGES) {
  test(`JSON bytes of document bytes: ${name}`, () => {
    const buf = Buffer.from(bytes);
    assert.deepEqual(
      written((w) => w.bytes(buf, 0, buf.length)),
      want(buf, 0, buf.length),
    );
  });
}

test('JSON bytes of random document bytes and spans of them equal JSON.stringify of their decoding', () => {
  const r = rng(3);
  const alphabet = [
    0x61, 0x7a, 0x20, 0x0a, 0x09, 0x0d, 0x00, 0x1f, 0x22, 0x5c, 0x7f, 0x80, 0xbf, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xff,
  ];
  for (let round = 0; round < 3000; round++) {
    const n = Math.floor(r() * 40);
    const buf = Buffer.alloc(n);
    // Mostly valid text with now and then a random byte from the alphabet.
    const text = Buffer.from(
      ['ab', 'é', '€', '😀', '"', '\\', '\n', '\t']
        .map((s) => s)
        .sort(() => r() - 0.5)
        .join(''),
    );
    for (let i = 0; i < n; i++) buf[i] = r() < 0.7 ? text[Math.floor(r() * text.length)]! : alphabet[Math.floor(r() * alphabet.length)]!;
    const start = Math.floor(r() * (n + 1));
    const end = start + Math.floor(r() * (n - start + 1));
    assert.deepEqual(
      written((w) => w.bytes(buf, start, end)),
      want(buf, start, end),
      `round ${round}: ${buf.toString('hex')} [${start}, ${end})`,
    );
  }
});

test('JSON bytes of strings and integers equal JSON.stringify', () => {
  const values = ['', 'plain', 'é"\\\n\u0001', '\uD800', 'a\uDC00b', '😀', '\u2028'];
  // Every digit count, both sides of the small-integer path's bound (2^31), and beyond.
  const ints = [
    0,
    7,
    9,
    10,
    99,
    100,
    999,
    1000,
    9999,
    10000,
    99999,
    100000,
    999999,
    1000000,
    9999999,
    10000000,
    99999999,
    100000000,
    123456789,
    999999999,
    1000000000,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32 - 1,
    2 ** 53 - 1,
  ];
  const got = written((w) => {
    w.raw('[');
    values.forEach((v, i) => {
      if (i > 0) w.raw(',');
      w.string(v);
    });
    for (const n of ints) {
      w.raw(',');
      w.int(n);
    }
    w.raw(']');
  });
  assert.equal(got.toString('utf8'), JSON.stringify([...values, ...ints]));
});

test('locations equal JSON.stringify of the Location object', () => {
  for (const [byteOffset, lineNumber, column] of [
    [0, 1, 1],
    [9, 10, 99],
    [2 ** 31 - 1, 1000000000, 2 ** 31],
    [2 ** 32, 5, 2 ** 53 - 1],
  ]) {
    const got = written((w) => w.location(byteOffset!, lineNumber!, column!));
    assert.equal(got.toString('utf8'), JSON.stringify({ byteOffset, lineNumber, column }));
  }
});

/** A FileResult as objects: the form the writer's output must serialise. */
function referenceFile(shard: Shard, repo: ResultRepo, hit: ShardHit, o: ShapeOptions, budget: number): FileResult {
  const path = shard.name(hit.doc);
  const names = hit.nameRanges.slice(0, 2 * Math.min(budget, hit.nameRanges.length / 2));
  const ranges = hit.ranges.slice(0, 2 * Math.min(budget - names.length / 2, hit.ranges.length / 2));
  const content = shard.contentOf(hit.doc);
  const located = locateRanges(content, ranges);
  const symbols = shard.symbolsOverlapping(
    hit.doc,
    located.map((r) => [r.start.lineNumber, r.end.lineNumber] as [number, number]),
  );
  const branch = hit.branches[0] ?? repo.defaultBranch;
  const file: FileResult = {
    fileName: { text: path, matchRanges: nameRanges(path, names) },
    webUrl: fileWebUrl(o.baseUrl, repo.name, branch, path),
    repository: repo.name,
    repositoryId: repo.id,
    language: shard.language(hit.doc),
    chunks: withSymbols(buildChunks(content, ranges, o.contextLines), symbols),
    branches: hit.branches,
  };
  const external = externalFileUrl(repo.codeHostType, repo.externalWebUrl, branch, path);
  if (external) file.externalWebUrl = external;
  if (o.whole) {
    const end = wholeEnd(content, o.maxWholeBytes);
    file.content = content.toString('utf8', 0, end);
    if (end < content.length) file.contentTruncated = true;
  }
  return file;
}

/** Chunks as objects from the spans every form of a result is built from. */
function buildChunks(buf: Buffer, flat: number[], contextLines: number): Chunk[] {
  const lines = locateLines(buf, flat);
  const ranges = locateRanges(buf, flat, lines);
  return chunkSpans(buf, flat, lines, contextLines).map((s) => ({
    content: buf.toString('utf8', s.start, s.end),
    matchRanges: ranges.slice(s.from, s.to),
    contentStart: { byteOffset: s.start, lineNumber: s.firstLine, column: 1 },
    symbols: [],
  }));
}

function withSymbols(chunks: Chunk[], symbols: SymbolDef[]): Chunk[] {
  for (const chunk of chunks) {
    const hit = symbols.filter((s) => chunk.matchRanges.some((r) => s.line <= r.end.lineNumber && r.start.lineNumber <= s.endLine));
    chunk.symbols = hit.map((s) =>
      s.parent ? { symbol: s.name, kind: s.kind, parent: { symbol: s.parent.name, kind: s.parent.kind } } : { symbol: s.name, kind: s.kind },
    );
  }
  return chunks;
}

const TREE: Record<string, string | Buffer> = {
  'src/widget.c':
    'struct widget {\n  int size;\n};\n\nint make_widget(struct widget *w) {\n  return w->size; /* "widget" */\n}\n\nstatic int other_widget(void)\n{\n\treturn make_widget(0);\n}\n',
  'src/crlf.c': 'int widget;\r\nint widget_two;\r\n\r\nwidget();\r\n',
  'src/notes über widget.txt': 'widget café\nnaïve widget 😀 widget\n\u0001\u001f "widget" \\widget\\\n',
  'src/bad-utf8.bin.txt': Buffer.concat([
    Buffer.from('widget '),
    Buffer.from([0xff, 0xc3, 0x0a]),
    Buffer.from('x widget\n'),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from(' widget'),
  ]),
  'lib/widget/widget.py': 'class Widget:\n    def widget(self):\n        return "widget"\n\n\ndef make():\n    return Widget().widget()\n',
  'docs/empty-lines.md': '\n\n\nwidget\n\n\n\nwidget\n',
};

test('files shaped into JSON bytes equal JSON.stringify of the same files as objects', async () => {
  const { shard, repoId, cleanup } = await indexedShard('file-json', TREE);
  try {
    const repo = resultRepo(repoId, undefined, shard, 'http://127.0.0.1:3000');
    let compared = 0;
    for (const [query, regex, cs] of [
      ['widget', false, false],
      ['Widget', false, true],
      ['w.dget|size', true, false],
      ['widget file:widget', false, false],
      ['make_widget', false, true],
      ['\\n\\n', true, false],
    ] as const) {
      const hits = hitsOf(shard, query, regex, cs);
      assert.ok(hits.length > 0, `${query}: some hit`);
      for (const hit of hits) {
        for (const o of [
          { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://127.0.0.1:3000' },
          { contextLines: 2, whole: true, maxWholeBytes: Infinity, baseUrl: 'http://h:1/base' },
          { contextLines: 1, whole: true, maxWholeBytes: 9, baseUrl: 'http://h' },
        ]) {
          for (const budget of [Infinity, 1, 2, 3]) {
            for (const located of [true, false]) {
              const h: ShardHit = { ...hit };
              if (!located) delete h.lines;
              else assert.ok(hit.lines, `${query}: the search located the lines of ${shard.name(hit.doc)}`);
              const f = unshapedFile(h, repo, shard.name(h.doc), 0);
              shapeInto(f, shard, repo, o, budget);
              const expect = JSON.stringify(referenceFile(shard, repo, h, o, budget));
              assert.equal(
                Buffer.from(f.json).toString('utf8'),
                expect,
                `${query} in ${shard.name(hit.doc)}, budget ${budget}, context ${o.contextLines}, lines ${located}`,
              );
              assert.deepEqual(Buffer.from(f.json), Buffer.from(expect), 'byte for byte');
              compared++;
            }
          }
        }
      }
    }
    assert.ok(compared > 100, `compared ${compared}`);
  } finally {
    cleanup();
  }
});

test('a file path is its own URL encoding only when encodeURIComponent leaves every segment as it is', () => {
  const paths = ['a/b.c', 'a b/c', 'dïr/x', "it's/(x)!~*", 'q?x#y', 'a%20b', 'a+b', '', '/', 'a//b'];
  for (const p of paths) {
    const url = fileWebUrl('http://h', 'r', 'main', p);
    assert.equal(url, `http://h/r/-/blob/main/${p.split('/').map(encodeURIComponent).join('/')}`, p);
  }
});

test('whole content over the cap is cut before the character that crosses it', () => {
  const text = 'ab😀cd'; // "😀" is bytes 2..5
  for (let max = 0; max <= 8; max++) {
    const end = wholeEnd(Buffer.from(text), max);
    const content = Buffer.from(text).toString('utf8', 0, end);
    const truncated = end < Buffer.byteLength(text);
    const want = max >= 8 ? text : max >= 6 ? text.slice(0, 4 + (max - 6)) : text.slice(0, Math.min(max, 2));
    assert.equal(content, want, `max ${max}`);
    assert.equal(truncated, max < 8, `max ${max}`);
  }
  // Not UTF-8 (a run of continuation bytes): the cut backs up three bytes at most.
  const junk = Buffer.from([0x61, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]);
  assert.equal(wholeEnd(junk, 6), 3);
});
