// JSON made in time slices is JSON.stringify's, byte for byte: the shapes the listings
// answer with, and the corners of JSON.stringify's rules (undefined, functions, toJSON,
// non-finite numbers, characters outside ASCII, lone surrogates).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slicedJson } from '../../daemon/http/sliced-json.ts';

const files = Array.from({ length: 3000 }, (_, i) => ({ type: 'blob', path: `dir${i % 7}/sub ${i % 3}/fïle-${i}.c`, name: `fïle-${i}.c` }));

function tree(depth: number, width: number, path = ''): unknown {
  return {
    type: 'tree',
    path,
    name: path === '' ? 'root' : path.slice(path.lastIndexOf('/') + 1),
    children:
      depth === 0
        ? Array.from({ length: width }, (_, i) => ({ type: 'blob', path: `${path}/f${i}`, name: `f${i}`, children: [] }))
        : Array.from({ length: width }, (_, i) => tree(depth - 1, width, path === '' ? `d${i}` : `${path}/d${i}`)),
  };
}

const CASES: Array<[string, unknown]> = [
  ['null', null],
  ['a number', 42.5],
  ['a string', 'line\n"quoted" \\ tab\t é 😀'],
  ['an empty array', []],
  ['an empty object', {}],
  ['a file list (many runs of flat items, many UTF-8 pieces)', files],
  ['a tree answer (nested children)', { tree: tree(3, 6) }],
  [
    'folder contents',
    [
      { type: 'tree', path: 'a', name: 'a' },
      { type: 'blob', path: 'b', name: 'b' },
    ],
  ],
  [
    'undefined, functions and symbols in arrays and objects',
    [undefined, () => 1, Symbol('s'), { a: undefined, b: () => 1, c: Symbol('c'), d: 1 }, [{ x: [1, undefined] }]],
  ],
  ['non-finite numbers', [NaN, Infinity, -Infinity, { n: NaN, m: [Infinity] }]],
  ['toJSON', { when: new Date(0), nested: [{ at: new Date(86_400_000), list: [1, 2] }] }],
  ['nested empties', { a: [], b: {}, c: [[], {}, [[]]], d: [{ e: [] }] }],
  ['lone surrogates', ['\ud800', { k: 'a\udc00b' }, '\ud83d\ude00']],
  ['keys that need escaping', { 'a"b': 1, 'line\nbreak': [true, false], '': null, 2: 'two', 1: 'one' }],
  ['deep nesting', JSON.parse(`${'['.repeat(200)}1${']'.repeat(200)}`)],
  ['a mixed array (runs cut by deep items)', [1, 2, { a: [1] }, 3, 4, [5, [6]], 'x', { b: {} }]],
];

for (const [name, value] of CASES) {
  test(`slicedJson: ${name}`, async () => {
    const bytes = await slicedJson(value);
    assert.ok(bytes.equals(Buffer.from(JSON.stringify(value), 'utf8')), `${bytes.toString('utf8').slice(0, 200)} != ${JSON.stringify(value).slice(0, 200)}`);
  });
}
