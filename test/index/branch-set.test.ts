// BranchSet against a brute-force oracle: random branch lists survive encoding and the
// membership file, and has() and docsOnAny() agree with plain sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BranchSet, encodeBranchLists, readMembershipFile, writeMembershipFile } from '../../daemon/index/branch-set.ts';
import { prng, tempDir } from '../helpers/corpus.ts';

function randomLists(seed: number, branches: number, docCount: number): number[][] {
  const r = prng(seed);
  return Array.from({ length: branches }, () => {
    const density = r.pick([0, 0.01, 0.3, 0.95, 1]);
    const docs: number[] = [];
    for (let d = 0; d < docCount; d++) if (r.chance(density)) docs.push(d);
    return docs;
  });
}

test('BranchSet agrees with plain sets for random lists (docs, has, docsOnAny)', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const r = prng(seed * 7919);
    const branches = 1 + r.int(seed % 5 === 0 ? 1200 : 12);
    const docCount = r.int(400);
    const lists = randomLists(seed, branches, docCount);
    const names = lists.map((_, i) => `b${i}`);
    const set = new BranchSet(encodeBranchLists({ names, lists: lists.map((l) => Uint32Array.from(l)) }), 'test');
    assert.deepEqual(set.names, names);
    for (let b = 0; b < branches; b++) {
      assert.deepEqual([...set.docs(b)], lists[b], `seed ${seed} branch ${b}`);
      assert.equal(set.count(b), lists[b]!.length);
      const member = new Set(lists[b]);
      for (let d = 0; d < docCount; d += 1 + r.int(5)) assert.equal(set.has(b, d), member.has(d));
    }
    // A few subsets, and all branches twice (the second answer comes from the cache).
    const subsets = [names.map((_, i) => i), names.map((_, i) => i), [r.int(branches)]];
    for (let k = 0; k < 3; k++) subsets.push(names.map((_, i) => i).filter(() => r.chance(0.5)));
    for (const sub of subsets) {
      const expected = [...new Set(sub.flatMap((b) => lists[b]!))].sort((a, b) => a - b);
      assert.deepEqual([...set.docsOnAny(sub, docCount)], expected, `seed ${seed} subset of ${sub.length}`);
    }
  }
});

test('a membership file round-trips, plain (version 1) and compressed (version 2), and refuses corruption', () => {
  const dir = tempDir('branch-set');
  try {
    for (const compressed of [false, true]) {
      const path = join(dir.path, `g2-m${compressed ? 1 : 0}.branches`);
      const lists = randomLists(99, 30, 200);
      const names = lists.map((_, i) => `feature/${i}`);
      writeMembershipFile(path, { names, lists: lists.map((l) => Uint32Array.from(l)) }, compressed);
      assert.equal(readFileSync(path).readUInt32LE(8), compressed ? 2 : 1);
      const set = readMembershipFile(path);
      assert.equal(set.indexOf('feature/7'), 7);
      assert.equal(set.indexOf('nope'), -1);
      for (let b = 0; b < 30; b++) assert.deepEqual([...set.docs(b)], lists[b]);

      const good = readFileSync(path);
      const bytes = Buffer.from(good);
      bytes[bytes.length - 1] ^= 0xff;
      writeFileSync(path, bytes);
      assert.throws(() => readMembershipFile(path), /corrupt \(checksum mismatch\)/);
      const future = Buffer.from(good);
      future.writeUInt32LE(3, 8);
      writeFileSync(path, future);
      assert.throws(() => readMembershipFile(path), /unsupported membership file version 3/);
      writeFileSync(path, 'hello');
      assert.throws(() => readMembershipFile(path), /not a trawl membership file/);
    }
  } finally {
    dir.cleanup();
  }
});
