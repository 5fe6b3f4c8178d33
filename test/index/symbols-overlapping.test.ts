// Shard.symbolsOverlapping (the symbols a result's chunks carry) against the plain rule:
// a definition is taken when its line span overlaps one of the spans. Random span sets
// over a file of nested definitions (structs in functions' reach, one-line and long ones).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { ctagsAvailable } from '../../daemon/symbols/ctags.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

const dir = tempDir('symbols-overlapping');
after(() => dir.cleanup());

function source(): string {
  let text = '';
  for (let f = 0; f < 60; f++) {
    text += `struct s${f} {\n  int a;\n  int b;\n};\n`;
    text += `static int f${f}(int x)\n{\n`;
    for (let l = 0; l < f % 7; l++) text += `  x += ${l};\n`;
    text += `  return x;\n}\n#define M${f} ${f}\n\n`;
  }
  return text;
}

test('symbolsOverlapping takes exactly the definitions overlapping one of the spans', {
  skip: !ctagsAvailable() && 'universal-ctags is not installed',
}, async () => {
  const corpus = join(dir.path, 'corpus');
  mkdirSync(corpus, { recursive: true });
  writeFileSync(join(corpus, 'many.c'), source());
  const dataDir = join(dir.path, 'data');
  await indexLocal(corpus, { dataDir, symbols: true });
  const m = readAllManifests(dataDir)[0]!;
  const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
  const all = shard.symbolsOf(0);
  assert.ok(all.length > 150, `the file's definitions (${all.length})`);
  const lines = all.reduce((n, s) => Math.max(n, s.endLine), 0);
  let x = 99;
  const r = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (let round = 0; round < 400; round++) {
    const spans: Array<[number, number]> = [];
    let at = 1 + Math.floor(r() * 10);
    const k = Math.floor(r() * 12);
    for (let i = 0; i < k && at <= lines + 3; i++) {
      const a = at;
      const b = a + Math.floor(r() * (r() < 0.2 ? 40 : 3));
      spans.push([a, b]);
      at = (r() < 0.3 ? a : b) + Math.floor(r() * 30);
    }
    if (round % 5 === 0) spans.reverse();
    const want = all.filter((s) => spans.some(([a, b]) => s.line <= b && a <= s.endLine));
    assert.deepEqual(shard.symbolsOverlapping(0, spans), want, `round ${round}: spans ${JSON.stringify(spans)}`);
  }
});
