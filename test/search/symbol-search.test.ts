// sym: finds ctags definitions (not mere uses), and combines with lang: and repo:.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';

const REPOS: Record<string, Record<string, string>> = {
  alpha: {
    'widget.c': 'struct widget { int size; };\n\nint make_widget(struct widget *w) {\n  return w->size;\n}\n',
    'main.c': 'int main(void) {\n  return make_widget(0);\n}\n',
    'widget.go': 'package widgets\n\ntype Widget struct {\n\tSize int\n}\n\nfunc (w *Widget) Grow() {\n\tw.Size++\n}\n',
  },
  beta: {
    'factory.c': 'int make_widget(void) { return 7; }\n',
    'Widget.py': 'class Widget:\n    def grow(self):\n        pass\n',
  },
};

const dir = tempDir('sym');
let searcher: Searcher;

before(async () => {
  for (const [repo, files] of Object.entries(REPOS)) {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir.path, repo, path)), { recursive: true });
      writeFileSync(join(dir.path, repo, path), text);
    }
    const summary = await indexLocal(join(dir.path, repo), { dataDir: join(dir.path, 'data'), workers: 1 });
    assert.ok(summary.symbols > 0, 'ctags found symbols');
    assert.equal(summary.symbolFailures, 0);
  }
  searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 1 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

async function found(query: string): Promise<string[]> {
  const res = await searcher.search({ query, matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
  return res.files
    .map((f) => `${f.repository}/${f.fileName.text}:${f.chunks.map((c) => c.matchRanges.map((r) => r.start.lineNumber).join(',')).join(';')}`)
    .sort();
}

test('sym: matches definitions, not uses', async () => {
  assert.deepEqual(await found('sym:make_widget'), ['alpha/widget.c:3', 'beta/factory.c:1']);
});

test('sym: with lang: and repo:', async () => {
  assert.deepEqual(await found('sym:^Widget$'), ['alpha/widget.go:3', 'beta/Widget.py:1']);
  assert.deepEqual(await found('sym:^Widget$ lang:Go'), ['alpha/widget.go:3']);
  assert.deepEqual(await found('sym:^Widget$ lang:python repo:beta'), ['beta/Widget.py:1']);
  assert.deepEqual(await found('sym:make_widget -repo:alpha'), ['beta/factory.c:1']);
  assert.deepEqual(await found('sym:^Widget$ lang:Go repo:beta'), []);
});

test('sym: is case-sensitive per the request, and chunks carry the definitions they hit', async () => {
  assert.deepEqual(await found('sym:^grow$'), ['beta/Widget.py:2']);
  const res = await searcher.search({
    query: 'sym:^grow$',
    matches: 10,
    contextLines: 0,
    whole: false,
    isRegexEnabled: false,
    isCaseSensitivityEnabled: false,
  });
  assert.deepEqual(res.files.map((f) => f.fileName.text).sort(), ['Widget.py', 'widget.go']);
  const py = res.files.find((f) => f.fileName.text === 'Widget.py')!;
  assert.deepEqual(py.chunks[0]!.symbols, [
    { symbol: 'Widget', kind: 'class' },
    { symbol: 'grow', kind: 'member', parent: { symbol: 'Widget', kind: 'class' } },
  ]);
});
