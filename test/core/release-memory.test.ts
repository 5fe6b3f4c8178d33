// releaseFreeMemory (core/instance.ts): the free runs of the core's memory it hands out are
// whole pages between the live blocks, and the core works as before once their pages are
// dropped (a build thread does it between a content build and a symbols pass).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostingsBuilder, WordsBuilder, releaseFreeMemory, scanC } from '../../core/index.ts';
import { mmap } from '../../daemon/index/mmap.ts';

function postings(docs: Buffer[]) {
  const b = new PostingsBuilder();
  docs.forEach((d, i) => b.addContent(i, d, 1 << 20));
  return b.finish();
}

test('free memory is let go in whole pages outside the live blocks, and the core works after', () => {
  const docs = Array.from({ length: 400 }, (_, i) => Buffer.from(`int f${i}(void) { return ${i * 7919}; } /* ${'x'.repeat(i % 97)} */\n`.repeat(1 + (i % 13))));
  const before = postings(docs);
  // A live region while the rest is let go: a words builder holding its documents.
  const words = new WordsBuilder();
  docs.forEach((d, i) => words.add(i, d));
  const runs: Array<[number, number]> = [];
  const released = releaseFreeMemory((memory, offset, length) => {
    assert.equal(offset % 65536, 0);
    assert.equal(length % 65536, 0);
    assert.ok(offset + length <= memory.length);
    runs.push([offset, length]);
    mmap.advise(memory, offset, length, mmap.MADV_DONTNEED);
  });
  assert.ok(released > 0 && runs.length > 0, "the finished builder's regions are free");
  for (let i = 1; i < runs.length; i++) assert.ok(runs[i - 1]![0] + runs[i - 1]![1] <= runs[i]![0], 'runs in order, apart');
  // The live builder's regions kept their bytes: its words are those of a builder that never saw a release.
  const kept = words.finish(2);
  const fresh = new WordsBuilder();
  docs.forEach((d, i) => fresh.add(i, d));
  assert.deepEqual(kept, fresh.finish(2));
  // ... and the dropped pages serve new builders as before.
  assert.deepEqual(postings(docs), before);
  assert.equal(scanC(Buffer.from('int x;\nstruct s { int m; };\n'), false, 1)?.count, 3);
});
