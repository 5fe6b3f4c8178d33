import { test } from 'node:test';
import assert from 'node:assert/strict';
import { symbolsJunk } from '../../daemon/index/symbol-junk.ts';
import { SymbolSections } from '../../daemon/index/symbol-sections.ts';
import { ctagsAvailable } from '../../daemon/symbols/ctags.ts';

const text = (s: string) => Buffer.from(s);
const minified = text(`var a=1;${'function f(b){return b+1};'.repeat(400)}`);
const handWritten = text('export function add(a, b) {\n  return a + b;\n}\n'.repeat(100));
const bigJson = text(JSON.stringify(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key${i}`, i])), null, 1));

// [path, content, reason]
const cases: Array<[string, Buffer, string | undefined]> = [
  ['package-lock.json', text('{}'), 'lock file'],
  ['web/yarn.lock', text('x'), 'lock file'],
  ['Cargo.lock', text('x'), 'lock file'],
  ['go.sum', text('x'), 'lock file'],
  ['src/lock.c', text('int lock(void);'), undefined],
  ['dist/app.min.js', handWritten, 'minified'],
  ['static/site-min.css', handWritten, 'minified'],
  ['dist/app.js.map', text('{}'), 'minified'],
  ['dist/bundle.js', minified, 'minified'],
  ['src/add.js', handWritten, undefined],
  ['src/tiny.js', text('a=1;b=2'), undefined], // too short to judge
  ['src/kernel.c', minified, undefined], // only scripts and style sheets are judged by their lines
  ['data/big.json', bigJson, 'generated data'],
  ['tsconfig.json', text('{ "compilerOptions": { "strict": true } }'), undefined],
  ['tools/perf/pmu-events/arch/x86/cache.json', text('\n  [\n    { "EventCode": "0x24", "BriefDescription": "L2 requests" }\n  ]\n'), 'generated data'],
  ['fixtures/bom.json', text('\ufeff[1, 2]'), 'generated data'],
  ['settings.json', text('  {"editor.tabSize": 2}'), undefined],
  ['empty.json', text('  \n'), undefined],
];

test('symbolsJunk table', () => {
  for (const [path, content, reason] of cases) assert.equal(symbolsJunk(path, content), reason, path);
});

test('a file ruled out gets no symbols; the others keep theirs', { skip: !ctagsAvailable() && 'universal-ctags is not installed' }, () => {
  const s = new SymbolSections(true);
  s.add(0, 'src/add.js', text('function add(a, b) { return a + b; }\n'));
  s.add(1, 'package-lock.json', text('{ "name": "x", "lockfileVersion": 3, "packages": {} }\n'));
  s.add(2, 'data/big.json', bigJson);
  const built = s.finish(3);
  assert.equal(built.count, 1);
  assert.deepEqual(built.kinds, ['function']);
});
