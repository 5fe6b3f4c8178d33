// Ranking pinned on a small corpus: a symbol definition and whole-word matches above
// partial matches, a base-name match high, test and vendored files lower, ties by path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';

const FILES: Record<string, string> = {
  'src/widget.c': 'int make_widget(void) {\n  return 1;\n}\n',
  'src/use.c': 'void use(void) {\n  make_widget();\n  make_widget();\n}\n',
  'tests/widget_test.c': 'void t(void) { make_widget(); }\n',
  'vendor/lib/widget.c': 'int make_widget(void) {\n  return 2;\n}\n',
  'src/make_widget.h': '/* declares the widget factory */\nint make_widget(void);\n',
  'src/partial.c': 'int remake_widgets;\n',
  'src/other.c': 'int remake_widget_x;\n',
};

test('files are ordered by the documented signals, ties by path', async () => {
  const dir = tempDir('rank');
  const searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 1 });
  try {
    for (const [path, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(dir.path, 'src-tree', path)), { recursive: true });
      writeFileSync(join(dir.path, 'src-tree', path), text);
    }
    await indexLocal(join(dir.path, 'src-tree'), { dataDir: join(dir.path, 'data'), workers: 1 });
    searcher.refresh();
    const res = await searcher.search({ query: 'make_widget', matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
    assert.deepEqual(res.files.map((f) => f.fileName.text), [
      'src/widget.c', // definition (+5000), whole word (+300)
      'vendor/lib/widget.c', // definition, whole word, vendored (-1200)
      'src/make_widget.h', // base name (+1000), whole word; a prototype is not a definition for ctags
      'src/use.c', // whole word, two matches
      'src/other.c', // partial matches only: tie with partial.c, broken by path
      'src/partial.c',
      'tests/widget_test.c', // whole word, test file (-800)
    ]);
    // The definition's chunk carries its symbol.
    assert.deepEqual(res.files[0]!.chunks[0]!.symbols, [{ symbol: 'make_widget', kind: 'function' }]);
    // The base-name match is highlighted in the path.
    assert.deepEqual(res.files[2]!.fileName.matchRanges.map((r) => [r.start.byteOffset, r.end.byteOffset]), [[4, 15]]);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});
