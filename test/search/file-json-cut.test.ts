// A shaped file cut from its JSON (search/file-json-cut.ts) against the shard's writer
// given the same budget (file-json.ts shapeInto): byte for byte, for every budget of every
// hit of a real index (context, whole files, symbols, name ranges, matches on one line, on
// adjacent lines and across lines); and it declines only where the budget ends inside a
// chunk that names definitions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutFile } from '../../daemon/search/file-json-cut.ts';
import { resultRepo, shapeInto, unshapedFile, type ShapeOptions } from '../../daemon/search/file-json.ts';
import type { FileResult } from '../../daemon/search/types.ts';
import { hitsOf, indexedShard } from '../helpers/one-shard.ts';

const TREE: Record<string, string | Buffer> = {
  // Locks inside functions (chunks with symbols) and at the top (without), on adjacent
  // lines, several on a line, and a file that ends without a newline.
  'kernel/lock.c': [
    'static DEFINE_SPINLOCK(lock); /* lock lock */',
    'int lock_count;',
    '',
    'void take_lock(void)',
    '{',
    '\tspin_lock(&lock); spin_lock(&lock);',
    '\tspin_lock(&lock);',
    '\tlock_count++;',
    '}',
    '',
    'EXPORT_SYMBOL_GPL(take_lock); EXPORT_SYMBOL_GPL(lock_count);',
    'EXPORT_SYMBOL_GPL(lock);',
    '',
    '',
    'EXPORT_SYMBOL_GPL(drop_lock);',
    'static int drop_lock(void)',
    '{',
    '\treturn lock_count--; /* lock */',
    '}',
    'EXPORT_SYMBOL_GPL(last_lock);',
  ].join('\n'),
  'lock/lock-notes.txt': 'lock\r\nlock lock\r\n\r\nno\r\nlock é lock 😀 lock\r\n',
  // Quotes and backslashes in content and path: escaped in the JSON, which the cut walks.
  'src/quo"tes\\lock.c': 'char *s = "lock \\"lock\\" \\\\lock\\\\";\nchar *t = "\\\\" lock "\\\\";\n"lock"\n\\\\\n"lock\\\\"lock\n',
  'docs/locks.md': '# lock\n\nA lock.\nAnother lock\nand a lock\n\n\n\nlock\n',
  'src/bad-utf8-lock.txt': Buffer.concat([
    Buffer.from('lock '),
    Buffer.from([0xff, 0xc3, 0x0a]),
    Buffer.from('x lock\n'),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from(' lock\nlock'),
  ]),
};

test('a file cut from its JSON is what the shard gives for the same budget, and is cut unless the budget ends inside a chunk with symbols', async () => {
  const { shard, repoId, cleanup } = await indexedShard('cut-file', TREE);
  try {
    const repo = resultRepo(repoId, undefined, shard, 'http://127.0.0.1:3000');
    let cut = 0;
    let declined = 0;
    let withNames = 0;
    for (const [query, regex] of [
      ['lock', false],
      ['EXPORT_SYMBOL_GPL', false],
      ['spin_lock\\(&lock\\);\\s+spin', true],
      ['lock\\s*\\n', true],
      ['lock file:lock', false],
      ['o', false],
    ] as const) {
      const hits = hitsOf(shard, query, regex, true);
      assert.ok(hits.length > 0, `${query}: some hit`);
      for (const hit of hits) {
        for (const o of [
          { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://127.0.0.1:3000' },
          { contextLines: 1, whole: true, maxWholeBytes: 30, baseUrl: 'http://h' },
          { contextLines: 3, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://h:1/base' },
        ] satisfies ShapeOptions[]) {
          const whole = unshapedFile(hit, repo, shard.name(hit.doc), 0);
          shapeInto(whole, shard, repo, o);
          const file = JSON.parse(Buffer.from(whole.json).toString('utf8')) as FileResult;
          if (file.fileName.matchRanges.length > 0) withNames++;
          for (let budget = 1; budget < whole.count; budget++) {
            const want = unshapedFile(hit, repo, shard.name(hit.doc), 0);
            shapeInto(want, shard, repo, o, budget);
            const got = cutFile(whole, budget, o.contextLines);
            const where = `${query} in ${shard.name(hit.doc)}, budget ${budget} of ${whole.count}, context ${o.contextLines}`;
            if (got === undefined) {
              // Only where the budget ends inside a chunk that names definitions.
              let left = budget - file.fileName.matchRanges.length;
              const inside = file.chunks.find((c) => {
                const n = c.matchRanges.length;
                const at = left > 0 && left < n;
                left -= n;
                return at;
              });
              assert.ok(inside && inside.symbols.length > 0, `${where}: declined without a reason`);
              declined++;
              continue;
            }
            assert.deepEqual(Buffer.from(got.json), Buffer.from(want.json), where);
            assert.equal(got.count, want.count, where);
            assert.equal(got.total, whole.total);
            cut++;
          }
          // Not more ranges than it holds, none (a file without ranges counts one), and none of a file never shaped.
          assert.equal(cutFile(whole, whole.count, o.contextLines), undefined);
          assert.equal(cutFile(whole, 0, o.contextLines), undefined);
          assert.equal(cutFile(unshapedFile(hit, repo, shard.name(hit.doc), 0), 1, o.contextLines), undefined);
        }
      }
    }
    assert.ok(cut > 150, `cut ${cut}`);
    assert.ok(declined > 0, `declined ${declined}: the corpus has chunks with symbols cut inside`);
    assert.ok(withNames > 0, 'a hit with name ranges');
  } finally {
    cleanup();
  }
});
