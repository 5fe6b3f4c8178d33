// The wire form of a search's answer (search/wire.ts): files written as the workers shaped
// them must give exactly the bytes JSON.stringify gives for the parsed object.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ShapedFile } from '../../daemon/search/file-json.ts';
import { FILES, jsonPartsWithFiles, jsonWithFiles } from '../../daemon/search/wire.ts';
import { byteCompare } from '../../daemon/search/rank.ts';

const file = (value: unknown): ShapedFile => ({
  json: Buffer.from(JSON.stringify(value)),
  count: 1,
  total: 1,
  score: 0,
  repositoryId: 1,
  repository: 'r',
  path: 'p',
  hit: { doc: 0, member: 0, ranges: [], nameRanges: [], branches: [], termFreqs: [], score: 0, definition: false },
  shard: 0,
});

const CASES: Array<{ name: string; fields: Array<[string, unknown]>; files: unknown[] }> = [
  {
    name: 'no files',
    fields: [
      ['stats', { a: 1 }],
      ['files', FILES],
      ['repositoryInfo', []],
      ['isSearchExhaustive', true],
    ],
    files: [],
  },
  {
    name: 'one file',
    fields: [
      ['stats', { a: 1 }],
      ['files', FILES],
      ['repositoryInfo', [{ id: 1 }]],
      ['isSearchExhaustive', false],
    ],
    files: [{ fileName: { text: 'a.c' } }],
  },
  {
    name: 'files first',
    fields: [
      ['files', FILES],
      ['x', 'y'],
    ],
    files: [{ a: 'é\u2028"' }, { b: [1, 2] }, {}],
  },
  {
    name: 'files last',
    fields: [
      ['type', 'chunk'],
      ['stats', {}],
      ['files', FILES],
    ],
    files: [{ a: 1 }, { b: 2 }],
  },
  {
    name: 'undefined left out',
    fields: [
      ['type', 'chunk'],
      ['gone', undefined],
      ['files', FILES],
      ['also', undefined],
    ],
    files: [{ a: 1 }],
  },
];

for (const c of CASES) {
  test(`jsonWithFiles: ${c.name}`, () => {
    const got = jsonWithFiles(c.fields, c.files.map(file)).toString('utf8');
    const want = JSON.stringify(Object.fromEntries(c.fields.map(([k, v]) => [k, v === FILES ? c.files : v])));
    assert.equal(got, want);
  });
}

test("jsonPartsWithFiles with scores: each file gets its exact score as a last field (a stream's files)", () => {
  // Doubles whose shortest decimal form is long or exponential: parsing gives the same bits back.
  // biome-ignore lint/correctness/noPrecisionLoss: the literals are the doubles the round trip must keep
  const scores = [0, 1806.2341079271226, 0.1 + 0.2, -1520, 1e-7, 5300.000000000001, Number.MAX_SAFE_INTEGER + 2];
  const values = [{ fileName: { text: 'a.c' }, chunks: [] }, {}, { x: '}' }, { a: 'é' }, { b: [1] }, { c: null }, { d: true }];
  const files = values.map((v, i) => ({ ...file(v), score: scores[i]! }));
  const got = JSON.parse(
    Buffer.concat(
      jsonPartsWithFiles(
        [
          ['type', 'chunk'],
          ['files', FILES],
        ],
        files,
        true,
      ),
    ).toString('utf8'),
  );
  assert.deepEqual(got, { type: 'chunk', files: values.map((v, i) => ({ ...v, score: scores[i] })) });
  for (let i = 0; i < scores.length; i++) assert.ok(Object.is(got.files[i].score, scores[i]), `score ${scores[i]} comes back exactly`);
  // Without scores the files are as they were shaped.
  assert.equal(Buffer.concat(jsonPartsWithFiles([['files', FILES]], files)).toString('utf8'), JSON.stringify({ files: values }));
});

test('jsonPartsWithFiles with scores refuses a file whose JSON is not an object', () => {
  const bad = { ...file({}), json: Buffer.from('[1]') };
  assert.throws(() => jsonPartsWithFiles([['files', FILES]], [bad], true), /not an object/);
});

test('byteCompare orders strings as their UTF-8 bytes do', () => {
  const words = ['', 'a', 'ab', 'b', 'Z', 'é', '\uE000', '\uFFFF', '😀', 'a😀', 'a\uE000', '\u07FF', '\u0800', 'zz', 'a\u0000'];
  for (const x of words) {
    for (const y of words) {
      const want = Math.sign(Buffer.compare(Buffer.from(x), Buffer.from(y)));
      assert.equal(Math.sign(byteCompare(x, y)), want, `${JSON.stringify(x)} vs ${JSON.stringify(y)}`);
    }
  }
});
