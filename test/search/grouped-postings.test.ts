// Grouped postings (index/doc-groups.ts): a shard built with its content postings over
// groups of versions of one path answers every query as the same files built with postings
// by document, and as the brute-force scan: the same documents, ranges and branches, zero
// differences. The versions are a history's: each path changed a little at each commit,
// some large enough for segment masks (one with a version whose folding changes its length,
// which leaves its group without masks), one skipped as binary, one too short for a
// trigram; each version on the commits ("branches") that hold it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildShard, type ShardFile } from '../../daemon/index/shard-builder.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { SEGMENT_SHIFT, SEGMENTED_MIN_BYTES } from '../../daemon/index/content-segments.ts';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { jobRepo } from '../helpers/shard-job.ts';

const COMMITS = 12;
const SEGMENT = 1 << SEGMENT_SHIFT;
const IDENTS = ['release_filter', 'mutex_unlock', 'spin_lock', 'refcount_dec', 'page_fault', 'KERNEL_PANIC', 'irq_flags'];

/** A history of `paths` files over COMMITS commits: each commit changes a few of them. */
function history(seed: number): ShardFile[] {
  const r = prng(seed);
  const line = () => {
    const n = 3 + r.int(6);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(r.chance(0.3) ? r.pick(IDENTS) : r.pick(WORDS));
    return `${words.join(r.chance(0.5) ? ' ' : '(')};\n`;
  };
  const files: ShardFile[] = [];
  const addVersions = (path: string, first: string, change: (text: string, commit: number) => string) => {
    let text = first;
    let from = 0;
    for (let c = 1; c <= COMMITS; c++) {
      // Unchanged at commit c: the version holds on.
      if (c < COMMITS && r.chance(0.4)) continue;
      files.push(version(path, text, from, c));
      if (c < COMMITS) {
        text = change(text, c);
        from = c;
      }
    }
  };
  // Small files: lines added, removed and replaced.
  for (let p = 0; p < 14; p++) {
    const base = Array.from({ length: 10 + r.int(30) }, line).join('');
    addVersions(`src/file-${p}.c`, base, (text) => {
      const lines = text.split('\n');
      const at = r.int(lines.length);
      if (r.chance(0.4)) lines.splice(at, 0, line().trimEnd());
      else if (r.chance(0.5) && lines.length > 2) lines.splice(at, 1);
      else lines[at] = line().trimEnd();
      return lines.join('\n');
    });
  }
  // Large files (segment masks): an identifier moved between segments, split across them.
  const filler = 'the quick brown fog jumps over the lazy hen\n';
  const large = (pieces: Array<[number, string]>, size: number) => {
    const bytes = Buffer.from(filler.repeat(Math.ceil(size / filler.length)).slice(0, size));
    for (const [at, text] of pieces) bytes.write(text, at);
    return bytes.toString('latin1');
  };
  for (let p = 0; p < 3; p++) {
    const size = SEGMENTED_MIN_BYTES + p * 3 * SEGMENT;
    addVersions(`gen/large-${p}.h`, large([[100, 'release_filter']], size), (_, c) =>
      large(
        [
          [(((c * 5 + p) % (size / SEGMENT - 2)) + 1) * SEGMENT - 5, 'release_filter'],
          [size / 2, 'ase_fil'],
          [size - 300 - c, c % 2 === 0 ? 'mutex_unlock' : 'MUTEX_UNLOCK'],
        ],
        size + c * 911,
      ),
    );
  }
  // A large file that grew past the masks' threshold; one of its versions holds a Kelvin sign.
  addVersions('gen/grown.h', 'int release_filter;\n', (text, c) =>
    c === 4
      ? `\u212A${large([[SEGMENT + 9, 'spin_lock release_filter']], SEGMENTED_MIN_BYTES)}`
      : c > 5
        ? large([[c * SEGMENT, 'page_fault']], SEGMENTED_MIN_BYTES * 2)
        : `${text}${line()}`,
  );
  // The versions follow an identifier by different bytes: a group's follow mask must hold each one's.
  addVersions('src/follow.c', 'call(spin_lock(m));\n', (_, c) => (c % 2 === 0 ? `call(spin_lock(m${c}));\n` : `call(spin_lock);\nx = refcount_dec;${c}\n`));
  // A version skipped (binary), a version too short for a trigram.
  addVersions('data/blob.bin', 'spin_lock\n', (text, c) => (c === 3 ? 'spin\0lock' : `${text}spin_lock ${c}\n`));
  addVersions('tiny.txt', 'ab', (text, c) => (c % 3 === 0 ? 'x' : `${text}${c} mutex_unlock\n`));
  return files;
}

/** A version of `path` on commits [from, to). */
function version(path: string, text: string, from: number, to: number): ShardFile {
  const data = Buffer.from(text, 'latin1');
  const branches: number[] = [];
  for (let c = from; c < to; c++) branches.push(c);
  return { path, size: data.length, data, branches, oid: Buffer.from(`${path}@${from}`).toString('hex').padEnd(40, '0').slice(0, 40) };
}

function build(path: string, files: ShardFile[], grouped: boolean): Shard {
  buildShard({
    finalPath: path,
    repo: jobRepo('/r', { kind: 'git', branch: 'c0' }),
    shardIndex: 0,
    files,
    maxFileSize: 1 << 20,
    maxTrigrams: 20000,
    branches: Array.from({ length: COMMITS }, (_, c) => `c${c}`),
    indexedAt: '2026-11-28T00:00:00.000Z',
    symbols: false,
    grouped,
  });
  return Shard.open(path);
}

function run(shard: Shard, query: string, caseSensitive: boolean, regex: boolean, useIndex: boolean) {
  const plan = planQuery({ query, isRegexEnabled: regex, isCaseSensitivityEnabled: caseSensitive });
  const result = searchShard(shard, {
    plan,
    matchers: planTerms(plan).map((t) => new Matcher(t, useIndex ? 'indexed' : 'reference')),
    limit: 100_000,
    useIndex,
  });
  return result.hits.map((h) => ({ doc: h.doc, ranges: h.ranges, nameRanges: h.nameRanges, branches: h.branches })).sort((a, b) => a.doc - b.doc);
}

test('grouped postings answer as postings by document and as the brute-force scan, with far fewer postings', () => {
  const dir = tempDir('grouped-postings');
  try {
    const files = history(7);
    const byDoc = build(join(dir.path, 'docs.trawl'), files, false);
    const grouped = build(join(dir.path, 'groups.trawl'), files, true);
    assert.equal(byDoc.groups, undefined);
    assert.ok(grouped.groups !== undefined, 'the grouped shard has groups');
    assert.equal(grouped.docCount, byDoc.docCount);
    // One group per path indexed, the versions of each adjacent.
    const paths = new Set(Array.from({ length: grouped.docCount }, (_, d) => grouped.name(d)));
    assert.equal(grouped.groups.count, paths.size);
    for (let d = 0; d < grouped.docCount; d++) {
      assert.equal(grouped.name(d), byDoc.name(d), 'the same document order');
      if (d > 0) assert.equal(grouped.unitOf(d) === grouped.unitOf(d - 1), grouped.name(d) === grouped.name(d - 1), `document ${d}'s group`);
    }
    assert.ok(grouped.contentSegments !== undefined, 'large groups have segment masks');
    const sizes = (s: Shard) => (s.sectionBytes.get('content-postings') ?? 0) + (s.sectionBytes.get('content-follow') ?? 0);
    assert.ok(sizes(grouped) * 3 < sizes(byDoc), `grouped postings ${sizes(grouped)} bytes, by document ${sizes(byDoc)}`);

    const queries: Array<[string, boolean, boolean]> = [];
    for (const q of [...IDENTS, 'ase_fil', 'release_fil', 'Kelvin', 'café', 'the lazy', 'e_f', 'spin', 'lock;']) {
      queries.push([q, true, false], [q, false, false]);
    }
    queries.push(
      ['spin_lock)', true, false],
      ['spin_lock(', true, false],
      ['refcount_dec;', true, false],
      ['release_filter -mutex_unlock', true, false],
      ['spin_lock -static', true, false],
      ['mutex_unlock -release_filter', false, false],
      ['release_filter or page_fault', true, false],
      ['spin_lock branch:c3', true, false],
      ['release_filter branch:c5', false, false],
      ['mutex_unlock branch:c0 or refcount_dec', true, false],
      ['release_fil+ter', true, true],
      ['(spin|mutex)_(un)?lock', false, true],
      ['page_fa.lt -file:large', true, true],
      ['file:large release_filter', true, false],
    );
    let answered = 0;
    for (const [query, cs, regex] of queries) {
      const what = `${query} (case ${cs ? 'sensitive' : 'insensitive'}${regex ? ', regex' : ''})`;
      const want = run(byDoc, query, cs, regex, false);
      assert.deepEqual(run(byDoc, query, cs, regex, true), want, `by document: ${what}`);
      assert.deepEqual(run(grouped, query, cs, regex, true), want, `grouped: ${what}`);
      assert.deepEqual(run(grouped, query, cs, regex, false), want, `grouped, brute force: ${what}`);
      if (want.length > 0) answered++;
    }
    assert.ok(answered > queries.length / 2, `${answered} of ${queries.length} queries match something`);
  } finally {
    dir.cleanup();
  }
});
