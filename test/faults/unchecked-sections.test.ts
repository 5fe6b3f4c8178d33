// A search may read a shard's large sections before the scrub has verified their checksums
// (daemon/index/section-checks.ts): over a shard whose posting lists, n-gram tables, follow
// masks, content words or symbol sections are garbage (their checksums left as they were,
// the scrub off), every search ends, the process and its worker threads survive, every
// file a search gives holds what the query's positive terms ask for (candidates are checked
// against the content, which keeps its checksums; a negated term whose candidates come from
// a damaged section may let a file through that holds it: section-checks.ts), and a shard
// that fails does so as corrupt (reported, as the scrub would), never as a crash.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IndexView } from '../../daemon/index/index-health.ts';
import { SECTION_NAMES, SectionKind } from '../../daemon/index/shard-format.ts';
import { takeWritten } from '../../daemon/index/section-checks.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { sectionTable } from '../helpers/section-table.ts';

const FILES = 60;

let root: { path: string; cleanup(): void };
let intact: string;
/** Each query's files (repository/path) from the intact index. */
const truth = new Map<string, Set<string>>();

/** `within`: the query whose intact files bound this one's (default itself): a negation's positive part. */
const QUERIES: Array<{ query: string; regex?: boolean; caseSensitive?: boolean; within?: string }> = [
  { query: 'spin_lock_irqsave' },
  { query: 'device_probe_7' },
  { query: 'counter' },
  { query: 'counter -spin_lock', within: 'counter' },
  { query: 'static int', caseSensitive: true },
  { query: 'probe_[0-9]+\\(', regex: true },
  { query: 'file:drv3' },
  { query: 'sym:device_probe_1' },
  { query: 'sym:^device_probe' },
  { query: 'lang:c release' },
  { query: 'counter or unlock_all' },
  { query: 'DEVICE_PROBE' },
];

function request(q: (typeof QUERIES)[number]) {
  return { query: q.query, matches: 1000, contextLines: 1, whole: false, isRegexEnabled: q.regex ?? false, isCaseSensitivityEnabled: q.caseSensitive ?? false };
}

/** Searches each query; per query, its files and how many shards failed. */
async function searchAll(dataDir: string, view: IndexView): Promise<Array<{ files: Set<string>; crashes: number }>> {
  const searcher = new Searcher({ dataDir, workers: 1, view, scrub: false });
  try {
    const out: Array<{ files: Set<string>; crashes: number }> = [];
    for (const q of QUERIES) {
      const res = await searcher.search(request(q));
      out.push({ files: new Set(res.files.map((f) => `${f.repository}/${f.fileName.text}`)), crashes: res.stats.crashes });
    }
    return out;
  } finally {
    await searcher.close();
  }
}

/** An index view that records what a search reports broken instead of marking it, so that every query meets the damage. */
class Reports extends IndexView {
  readonly findings: string[] = [];
  override report(_repoId: number, _generation: number, message: string): void {
    this.findings.push(message);
  }
}

before(async () => {
  root = tempDir('unchecked');
  const corpus = join(root.path, 'drivers');
  mkdirSync(corpus, { recursive: true });
  for (let i = 0; i < FILES; i++) {
    const lines = [
      '#include <linux/spinlock.h>',
      `static int counter_${i % 7};`,
      `static int device_probe_${i}(struct device *dev)`,
      '{',
      i % 3 === 0 ? '\tspin_lock_irqsave(&dev->lock, flags);' : '\tmutex_lock(&dev->mutex);',
      `\tcounter_${i % 7}++;`,
      i % 5 === 0 ? '\tunlock_all(dev);' : '\trelease(dev);',
      '\treturn 0;',
      '}',
    ];
    writeFileSync(join(corpus, `drv${i}.c`), `${lines.join('\n')}\n`);
  }
  intact = join(root.path, 'intact');
  await indexLocal(corpus, { dataDir: intact, symbols: true, workers: 1, shardTargetBytes: 4096 });
  // As a process that did not write the index: nothing counts as checked.
  for (const f of readdirSync(join(intact, 'shards'), { recursive: true, encoding: 'utf8' })) takeWritten(join(intact, 'shards', f));
  const view = new Reports(intact);
  const results = await searchAll(intact, view);
  QUERIES.forEach((q, i) => {
    assert.equal(results[i]!.crashes, 0, `${q.query}: the intact index answers`);
    assert.ok(results[i]!.files.size > 0, `${q.query}: matches something`);
    truth.set(q.query, results[i]!.files);
  });
  assert.deepEqual(view.findings, []);
});

after(() => root.cleanup());

/** A deterministic stream of bytes. */
function garbage(seed: number, n: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Where a section's bytes are overwritten: all of them past `keep` bytes, its second half, or one byte in 37 past `keep` (structures stay mostly whole). */
type Spread = 'past the header' | 'second half' | 'sparse flips';

const DAMAGE: Array<{ kind: SectionKind; keep: number }> = [
  { kind: SectionKind.ContentPostings, keep: 0 },
  { kind: SectionKind.ContentNgrams, keep: 8 },
  { kind: SectionKind.ContentFollow, keep: 0 },
  { kind: SectionKind.NamePostings, keep: 0 },
  { kind: SectionKind.NameNgrams, keep: 8 },
  { kind: SectionKind.ContentWords, keep: 16 },
  { kind: SectionKind.SymbolPostings, keep: 0 },
  { kind: SectionKind.SymbolNgrams, keep: 8 },
  { kind: SectionKind.Symbols, keep: 8 },
  { kind: SectionKind.SymbolIndex, keep: 16 },
];

for (const d of DAMAGE) {
  for (const spread of ['past the header', 'second half', 'sparse flips'] as const satisfies readonly Spread[]) {
    test(`garbage in section ${SECTION_NAMES[d.kind]} (${spread}): searches end, nothing crashes, every file found holds what the query asks for`, {
      timeout: 120_000,
    }, async () => {
      const dir = tempDir('unchecked-case');
      try {
        const data = join(dir.path, 'data');
        cpSync(intact, data, { recursive: true });
        let damaged = 0;
        const shards = join(data, 'shards');
        for (const f of readdirSync(shards, { recursive: true, encoding: 'utf8' })) {
          if (!f.endsWith('.trawl') && !f.endsWith('.symbols')) continue;
          const path = join(shards, f);
          const b = Buffer.from(readFileSync(path));
          const s = sectionTable(b).get(d.kind);
          if (!s) continue;
          const from = spread === 'second half' ? Math.max(d.keep, s.length >> 1) : Math.min(s.length, d.keep);
          if (from >= s.length) continue;
          const bytes = garbage(s.offset ^ d.kind, s.length - from);
          if (spread === 'sparse flips') for (let i = 0; i < bytes.length; i += 37) b[s.offset + from + i] ^= bytes[i]! | 1;
          else bytes.copy(b, s.offset + from);
          writeFileSync(path, b);
          damaged++;
        }
        assert.ok(damaged > 0, 'some file has the section');
        const view = new Reports(data);
        const results = await searchAll(data, view);
        let failed = 0;
        QUERIES.forEach((q, i) => {
          const r = results[i]!;
          const extra = [...r.files].filter((f) => !truth.get(q.within ?? q.query)!.has(f));
          assert.deepEqual(extra, [], `${q.query}: only files the intact index gives for ${q.within ?? 'it'}`);
          failed += r.crashes;
        });
        // Every shard that failed failed as corrupt (reported), not as a crash of its worker.
        assert.equal(view.findings.length, failed, `every failure is a finding of damage: ${view.findings.join('; ')}`);
      } finally {
        dir.cleanup();
      }
    });
  }
}
