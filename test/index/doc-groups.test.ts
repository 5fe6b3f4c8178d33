// The doc-groups section (index/doc-groups.ts): its worked example byte for byte, what a
// grouped shard's content postings stand for, and the sections its reader refuses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildShard } from '../../daemon/index/shard-builder.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { DocGroups } from '../../daemon/index/doc-groups.ts';
import { SectionDamage } from '../../daemon/index/section-checks.ts';
import { checkShardHeader } from '../../daemon/index/section-file.ts';
import { SectionKind } from '../../daemon/index/shard-format.ts';
import { readFileSync } from 'node:fs';
import { tempDir } from '../helpers/corpus.ts';
import { jobRepo } from '../helpers/shard-job.ts';

function grouped(dir: string, files: Array<{ path: string; text: string }>, isGrouped = true): Shard {
  const finalPath = join(dir, `g${isGrouped ? 1 : 2}-0.trawl`);
  buildShard({
    finalPath,
    repo: jobRepo(dir, { kind: 'git' }),
    shardIndex: 0,
    files: files.map((f, i) => ({ path: f.path, size: Buffer.byteLength(f.text), data: Buffer.from(f.text), oid: i.toString(16).padStart(40, '0') })),
    maxFileSize: 1 << 20,
    maxTrigrams: 20000,
    branches: ['HEAD'],
    indexedAt: '2026-11-28T00:00:00.000Z',
    symbols: false,
    grouped: isGrouped,
  });
  return Shard.open(finalPath);
}

test('the worked example of doc-groups.ts holds byte for byte', () => {
  const dir = tempDir('doc-groups');
  try {
    // Same-rank paths, so the documents are in this order: a.c's three versions, b.c, c.c's two.
    const shard = grouped(dir.path, [
      { path: 'a.c', text: 'int alpha;\n' },
      { path: 'a.c', text: 'int alpha, beta;\n' },
      { path: 'a.c', text: 'long alpha;\n' },
      { path: 'b.c', text: 'int beta;\n' },
      { path: 'c.c', text: 'int gamma;\n' },
      { path: 'c.c', text: 'short gamma;\n' },
    ]);
    assert.deepEqual(
      Array.from({ length: shard.docCount }, (_, d) => shard.name(d)),
      ['a.c', 'a.c', 'a.c', 'b.c', 'c.c', 'c.c'],
    );
    const at = checkShardHeader(shard.path).get(SectionKind.DocGroups)!;
    const bytes = readFileSync(shard.path).subarray(at.offset, at.offset + at.length);
    assert.deepEqual([...new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)], [0, 3, 4, 6]);
    assert.equal(shard.groups?.count, 3);
    // A posting is a group: "bet" is in a.c's second version and in b.c; "gam" in c.c.
    const bet = shard.content.postingList((0x62 << 16) | (0x65 << 8) | 0x74).docs;
    assert.deepEqual([...bet], [0, 1]);
    assert.deepEqual([...shard.unitDocs(bet)], [0, 1, 2, 3]);
    assert.deepEqual([...shard.unitDocs(Uint32Array.of(2))], [4, 5]);
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((d) => shard.unitOf(d)),
      [0, 0, 0, 1, 2, 2],
    );
    assert.deepEqual(
      [0, 1, 2].map((g) => shard.unitSize(g)),
      [3, 1, 2],
    );
    assert.equal(shard.unitLength(0), Buffer.byteLength('int alpha, beta;\n'));
    // Built without groups: an empty section, postings by document.
    const plain = grouped(dir.path, [{ path: 'a.c', text: 'int alpha;\n' }], false);
    assert.equal(plain.groups, undefined);
    assert.equal(plain.sectionBytes.get('doc-groups'), 0);
  } finally {
    dir.cleanup();
  }
});

test('a doc-groups section that does not cover the documents in ascending runs is refused', () => {
  const section = (...firsts: number[]) => Buffer.from(Uint32Array.from(firsts).buffer);
  const cases: Array<[string, Buffer, number]> = [
    ['one number', section(0), 0],
    ['not from 0', section(1, 4), 4],
    ['not to the document count', section(0, 3), 4],
    ['past the document count', section(0, 5), 4],
    ['an empty group', section(0, 2, 2, 4), 4],
    ['descending', section(0, 3, 2, 4), 4],
    ['a partial number', Buffer.concat([section(0, 4), Buffer.from([1, 0])]), 4],
  ];
  for (const [what, bytes, docs] of cases) assert.throws(() => new DocGroups(bytes, docs), SectionDamage, what);
  const good = new DocGroups(section(0, 2, 3, 4), 4);
  assert.equal(good.count, 3);
  assert.deepEqual([...good.docs(Uint32Array.of(0, 2))], [0, 1, 3]);
});
