// The ranking line of `trawl bench run` (phase-ranking.ts) on a small tree with a judged
// file of three queries, one of which misses; and the Linux judged set loads (at least 20
// queries) and, where the Linux corpus is present, names files that exist in it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { rankingPhase } from '../../bench/suite/phase-ranking.ts';
import { loadJudged } from '../../bench/suite/judged.ts';
import { LINUX_CORPUS, judgedQueries } from '../../bench/suite/run-plan.ts';
import { tempDir } from '../helpers/corpus.ts';

test('the ranking line counts judged queries whose file is in the top 3, limited and with every match ranked', async () => {
  const dir = tempDir('bench-ranking');
  try {
    const files: Record<string, string> = {
      'src/widget.c': 'int make_widget(void) {\n  return 1;\n}\n',
      'src/use.c': 'void use(void) {\n  make_widget();\n}\n',
      'src/gadget.h': 'struct gadget { int x; };\n',
      'src/a.c': 'struct gadget g;\n',
    };
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir.path, 'tree', p)), { recursive: true });
      writeFileSync(join(dir.path, 'tree', p), text);
    }
    await indexLocal(join(dir.path, 'tree'), { dataDir: join(dir.path, 'data'), workers: 1 });
    const judged = join(dir.path, 'judged.json');
    writeFileSync(
      judged,
      JSON.stringify([
        { query: 'make_widget', regex: false, caseSensitive: true, expect: 'src/widget.c' },
        { query: 'gadget', regex: false, caseSensitive: true, expect: 'src/gadget.h' },
        { query: 'make_widget', regex: false, caseSensitive: true, expect: 'src/nowhere.c' },
      ]),
    );
    const logged: string[] = [];
    const r = await rankingPhase(join(dir.path, 'data'), judged, (s) => logged.push(s));
    assert.deepEqual({ queries: r.queries, hits: r.hits, all: r.hitsAllRanked }, { queries: 3, hits: 2, all: 2 });
    assert.equal(r.line, 'ranking: judged queries with the expected file in the top 3: 2/3 (67%) with matches 100, 2/3 (67%) with every match ranked');
    assert.equal(logged[0], r.line);
    assert.match(logged[1]!, /^ranking miss \(every match ranked\): "make_widget": expected src\/nowhere\.c at no place; top src\/widget\.c, src\/use\.c$/);
  } finally {
    dir.cleanup();
  }
});

test('the Linux judged set: at least 20 queries, and its files exist in Linux 6.1 where the corpus is present', (t) => {
  const file = judgedQueries('linux')!;
  const queries = loadJudged(file);
  assert.ok(queries.length >= 20, `${queries.length} queries`);
  assert.equal(judgedQueries('/some/dir'), undefined);
  if (!existsSync(LINUX_CORPUS)) {
    t.diagnostic(`no Linux corpus at ${LINUX_CORPUS}: the expected files are not checked`);
    return;
  }
  assert.deepEqual(
    queries.filter((q) => !existsSync(join(LINUX_CORPUS, q.expect))).map((q) => q.expect),
    [],
  );
});
