// Content first, symbols after (symbols-pass.ts, indexer.ts symbolsLater): a shard built
// without symbols, opened with the symbols file the pass wrote for it, holds byte for byte
// the symbol sections of the shard built with them; a symbols file checks that it is its
// shard's; a full build large enough for build threads commits its content (searchable,
// symbols pending) before the pass commits the next generation, which names each shard with
// its symbols file; a run stopped in between leaves the content serving, and a git
// repository's next run builds in full.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { commitManifest, loadManifest, type Manifest } from '../../daemon/index/manifest.ts';
import { buildShard, type ShardJob } from '../../daemon/index/shard-builder.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { ShardError } from '../../daemon/index/shard-error.ts';
import { addSymbols, reusableSymbols } from '../../daemon/index/symbols-pass.ts';
import {
  SECTION_NAMES,
  SYMBOLS_FORMAT,
  SYMBOLS_SECTION_ORDER,
  SYMBOLS_SECTION_ORDER_V1,
  SectionKind,
  type ShardMeta,
} from '../../daemon/index/shard-format.ts';
import { ShardWriter } from '../../daemon/index/shard-writer.ts';
import { sectionTable } from '../helpers/section-table.ts';
import { SYMBOL_RULES, symbolExtraction } from '../../daemon/symbols/extract.ts';
import { Catalog } from '../../daemon/http/catalog.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { ctagsAvailable, ctagsVersion } from '../../daemon/symbols/ctags.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { jobRepo } from '../helpers/shard-job.ts';
import { TestRepo } from '../helpers/git.ts';

const dir = tempDir('symbols-pass');
after(() => dir.cleanup());
const skip = !ctagsAvailable() && 'universal-ctags is not installed';

/** The sections of a file of sections, by kind. */
function sectionsOf(path: string): Map<SectionKind, Buffer> {
  const bytes = readFileSync(path);
  return new Map([...sectionTable(bytes)].map(([kind, s]) => [kind, bytes.subarray(s.offset, s.offset + s.length)]));
}

/** The symbols file at `symbols` holds the symbol sections of the shard at `inline` byte for byte, and the shard at `content` opened with it answers as `inline`. */
function assertSameSymbols(content: string, symbols: string, inline: string): void {
  const given = sectionsOf(symbols);
  const built = sectionsOf(inline);
  assert.deepEqual([...given.keys()], SYMBOLS_SECTION_ORDER);
  for (const kind of SYMBOLS_SECTION_ORDER) {
    if (kind !== SectionKind.Meta) assert.ok(given.get(kind)!.equals(built.get(kind)!), `section ${SECTION_NAMES[kind]}`);
  }
  const a = Shard.open(content, { symbols });
  const b = Shard.open(inline);
  assert.deepEqual(a.meta, b.meta);
  // Every section of the same size but meta: the content shard's own, with the symbols' fields laid over it.
  const sizes = (sh: Shard) => new Map([...sh.sectionBytes].filter(([name]) => name !== 'meta'));
  assert.deepEqual(sizes(a), sizes(b));
  for (let doc = 0; doc < b.docCount; doc++) assert.deepEqual(a.symbolsOf(doc), b.symbolsOf(doc));
  // The content words too (the pass builds them for a shard built without).
  assert.deepEqual(a.contentWords!.docsWith(Buffer.from('return')), b.contentWords!.docsWith(Buffer.from('return')));
}

function cFile(i: number): string {
  return `struct pass_s${i} {\n  int a;\n};\nstatic int pass_f${i}(int x)\n{\n  return x + ${i}; /* needle */\n}\n#define PASS_M${i} ${i}\n`;
}

test('a shard opened with the symbols file the pass wrote holds the symbol sections of the shard built with them', { skip }, () => {
  const src = join(dir.path, 'bytes');
  mkdirSync(src, { recursive: true });
  const files = Array.from({ length: 40 }, (_, i) => {
    const path = `src/${i % 3}/f${i}.${i % 5 === 0 ? 'py' : 'c'}`;
    const text = i % 5 === 0 ? `def py_fn${i}(x):\n    return x\n\nclass PyC${i}:\n    pass\n` : cFile(i);
    const absPath = join(src, `f${i}`);
    writeFileSync(absPath, text);
    return { path, size: Buffer.byteLength(text), absPath };
  });
  // As a large build builds them: without symbols, and with its content words left to the pass.
  const job = (finalPath: string, symbols: boolean): ShardJob => ({
    finalPath,
    repo: jobRepo(src),
    shardIndex: 0,
    files,
    maxFileSize: 1 << 20,
    maxTrigrams: 20_000,
    indexedAt: '2026-11-25T00:00:00.000Z',
    branches: ['HEAD'],
    symbols,
    later: !symbols,
  });
  const inline = buildShard(job(join(dir.path, 'inline.trawl'), true));
  const content = buildShard(job(join(dir.path, 'content.trawl'), false));
  assert.equal(content.symbolCount, 0);
  assert.equal(Shard.open(join(dir.path, 'content.trawl')).meta.symbolsIndexed, false);
  // No word listed until the pass: a search decides by the bytes meanwhile.
  const word = Buffer.from('return');
  assert.equal(Shard.open(join(dir.path, 'content.trawl')).contentWords!.docsWith(word), null);
  assert.equal(Shard.open(join(dir.path, 'inline.trawl')).contentWords!.docsWith(word)!.length, 40); // every file says return
  const added = addSymbols({ from: join(dir.path, 'content.trawl'), finalPath: join(dir.path, 'added.symbols') });
  assert.ok(inline.symbolCount >= 100, `${inline.symbolCount} symbols`);
  assert.deepEqual(added, { symbolCount: inline.symbolCount, symbolFailures: inline.symbolFailures, symbolsReused: 0 });
  assertSameSymbols(join(dir.path, 'content.trawl'), join(dir.path, 'added.symbols'), join(dir.path, 'inline.trawl'));
  assert.deepEqual(
    readdirSync(dir.path).filter((f) => f.includes('.tmp-')),
    [],
  );

  // A symbols file is its shard's: another shard's, or a damaged one, is refused.
  buildShard({ ...job(join(dir.path, 'other.trawl'), false), files: files.slice(1) });
  assert.throws(
    () => Shard.open(join(dir.path, 'other.trawl'), { symbols: join(dir.path, 'added.symbols') }),
    (err) => err instanceof ShardError && /added\.symbols: belongs to another shard/.test(err.message),
  );
  const damaged = join(dir.path, 'damaged.symbols');
  copyFileSync(join(dir.path, 'added.symbols'), damaged);
  const bytes = readFileSync(damaged);
  bytes[bytes.length - 40]! ^= 1; // in the meta section, the last
  writeFileSync(damaged, bytes);
  assert.throws(() => Shard.open(join(dir.path, 'content.trawl'), { symbols: damaged }), /damaged\.symbols: section meta is corrupt/);
  assert.throws(() => Shard.open(join(dir.path, 'content.trawl'), { symbols: join(dir.path, 'inline.trawl') }), /not a trawl symbols file/);

  // A version 1 symbols file (before the pass built the content words) still opens: the
  // symbols from it, the content words the shard's own.
  const v1 = join(dir.path, 'v1.symbols');
  const given = sectionsOf(join(dir.path, 'added.symbols'));
  const writer = new ShardWriter(v1, { ...SYMBOLS_FORMAT, version: 1 });
  writer.finish(new Map(SYMBOLS_SECTION_ORDER_V1.map((kind) => [kind, given.get(kind)!])));
  const old = Shard.open(join(dir.path, 'inline.trawl'), { symbols: v1 });
  const inlineShard = Shard.open(join(dir.path, 'inline.trawl'));
  for (let doc = 0; doc < inlineShard.docCount; doc++) assert.deepEqual(old.symbolsOf(doc), inlineShard.symbolsOf(doc));
  assert.equal(old.contentWords!.docsWith(word)!.length, 40);
});

test('the pass takes the definitions of an unchanged path and blob from the previous shards, and gives the same bytes', { skip }, () => {
  const blob = (i: number, text: string) => ({ path: `src/f${i}.${i % 4 === 0 ? 'py' : 'c'}`, text, oid: createHash('sha1').update(text).digest('hex') });
  const texts = (changed: number) =>
    Array.from({ length: 30 }, (_, i) => blob(i, i % 4 === 0 ? `def py_fn${i}(x):\n    return x\n` : cFile(i === changed ? 1000 + i : i)));
  const job = (finalPath: string, files: ReturnType<typeof texts>, symbols: boolean): ShardJob => ({
    finalPath,
    repo: {
      name: 'g',
      id: 2,
      codeHostType: 'genericGitHost',
      source: '/g',
      kind: 'git',
      branch: 'main',
      commit: 'c',
      remoteUrl: '',
      archived: false,
      fork: false,
      visibility: 'public',
    },
    shardIndex: 0,
    files: files.map((f) => ({ path: f.path, size: Buffer.byteLength(f.text), oid: f.oid, data: Buffer.from(f.text) })),
    maxFileSize: 1 << 20,
    maxTrigrams: 20_000,
    indexedAt: '2026-11-25T00:00:00.000Z',
    branches: ['main'],
    symbols,
  });
  const at = (name: string) => join(dir.path, `reuse-${name}.trawl`);
  const sym = join(dir.path, 'reuse-added.symbols');
  buildShard(job(at('previous'), texts(-1), true));
  // One file changed (its blob, so it is asked of ctags), one moved to another path.
  const now = texts(7);
  now[9] = { ...now[9]!, path: 'src/moved/f9.c' };
  now.sort((a, b) => (a.path < b.path ? -1 : 1));
  const inline = buildShard(job(at('inline'), now, true));
  buildShard(job(at('content'), now, false));
  const added = addSymbols({ from: at('content'), finalPath: sym, previous: [{ path: at('previous') }, { path: join(dir.path, 'gone.trawl') }] });
  assert.deepEqual(added, { symbolCount: inline.symbolCount, symbolFailures: 0, symbolsReused: 28 });
  assertSameSymbols(at('content'), sym, at('inline'));
  assert.equal(reusableSymbols(Shard.open(at('previous')).meta), true);
  // A previous shard whose symbols are in a symbols file gives them as well.
  buildShard(job(at('previous-content'), texts(-1), false));
  const previousSymbols = join(dir.path, 'reuse-previous.symbols');
  addSymbols({ from: at('previous-content'), finalPath: previousSymbols });
  const again = addSymbols({
    from: at('content'),
    finalPath: join(dir.path, 'reuse-again.symbols'),
    previous: [{ path: at('previous-content'), symbols: previousSymbols }],
  });
  assert.deepEqual(again, added);
  assertSameSymbols(at('content'), join(dir.path, 'reuse-again.symbols'), at('inline'));
});

test('definitions from other extraction rules or another ctags are not reused', { skip }, () => {
  const meta = { symbolsIndexed: true, symbolExtraction: symbolExtraction() } as ShardMeta;
  assert.match(meta.symbolExtraction!, new RegExp(`^${SYMBOL_RULES}; Universal Ctags \\d`));
  assert.equal(reusableSymbols(meta), true);
  assert.equal(reusableSymbols({ ...meta, symbolExtraction: undefined }), false, 'a shard from before the rules had a version');
  assert.equal(reusableSymbols({ ...meta, symbolExtraction: `${SYMBOL_RULES - 1}; ${ctagsVersion()}` }), false, 'other rules');
  assert.equal(reusableSymbols({ ...meta, symbolExtraction: `${SYMBOL_RULES}; Universal Ctags 0.1` }), false, 'another ctags');
  assert.equal(reusableSymbols({ ...meta, symbolsIndexed: false }), false);
});

test('a large full build commits its content first, then its symbols files as the next generation', { skip }, async () => {
  const corpus = join(dir.path, 'corpus');
  // More files than a build on the calling thread takes (indexer.ts INLINE_BUILD_FILES).
  for (let i = 0; i < 300; i++) {
    mkdirSync(join(corpus, `d${i % 10}`), { recursive: true });
    writeFileSync(join(corpus, `d${i % 10}`, `f${i}.c`), cFile(i));
  }
  const dataDir = join(dir.path, 'data');
  let mid: { manifest: Manifest; docs: number; symbolsIndexed: boolean[]; listed: boolean[]; words: number[] } | undefined;
  const summary = await indexLocal(corpus, {
    dataDir,
    symbols: true,
    onSymbolsProgress: (p) => {
      if (p.shards > 0) return;
      // Between the two commits: what a search opens while the symbols are being added.
      const manifest = loadManifest(dataDir, 1) as Manifest;
      const shards = manifest.shards.map((s) => Shard.open(join(shardsDir(dataDir, 1), s.file)));
      mid = {
        manifest,
        docs: shards.reduce((n, s) => n + s.docCount, 0),
        symbolsIndexed: shards.map((s) => s.meta.symbolsIndexed),
        listed: new Catalog(dataDir).list().map((r) => r.symbolsPending),
        words: shards.map((s) => s.contentWords!.docsWith(Buffer.from('return'))?.length ?? 0),
      };
    },
  });
  assert.equal(summary.symbols, 300 * 4); // a struct, its member, a function, a macro
  assert.ok(summary.contentSeconds !== undefined && summary.contentSeconds <= summary.seconds);
  assert.ok(mid, 'the symbols pass ran');
  assert.equal(mid.manifest.symbolsPending, true);
  assert.equal(mid.docs, 300, 'the content was committed before the symbols came');
  assert.deepEqual(
    mid.symbolsIndexed,
    mid.manifest.shards.map(() => false),
  );
  assert.deepEqual(mid.listed, [true], 'GET /api/repos says symbolsPending');
  assert.deepEqual(
    mid.words,
    mid.manifest.shards.map(() => 0),
    'the content words come with the symbols',
  );
  assert.deepEqual(
    new Catalog(dataDir).list().map((r) => r.symbolsPending),
    [false],
  );
  const end = loadManifest(dataDir, 1) as Manifest;
  assert.equal(end.generation, mid.manifest.generation + 1);
  assert.equal(end.symbolsPending, undefined);
  // The same shards, each named with its symbols file; nothing retired, nothing left over.
  assert.deepEqual(
    end.shards.map((s) => s.file),
    mid.manifest.shards.map((s) => s.file),
  );
  assert.deepEqual(
    end.shards.map((s) => s.symbols),
    end.shards.map((_, i) => `g${end.generation}-y${i}.symbols`),
  );
  assert.deepEqual(end.retired, []);
  assert.deepEqual(readdirSync(shardsDir(dataDir, 1)).sort(), ['manifest.json', ...end.shards.flatMap((s) => [s.file, s.symbols!])].sort());
  const withSymbols = end.shards.map((s) => Shard.open(join(shardsDir(dataDir, 1), s.file), { symbols: join(shardsDir(dataDir, 1), s.symbols!) }));
  assert.equal(
    withSymbols.reduce((n, s) => n + (s.contentWords!.docsWith(Buffer.from('return'))?.length ?? 0), 0),
    300,
    'every file says return',
  );
  const searcher = new Searcher({ dataDir, workers: 0 });
  try {
    const r = await searcher.search({
      query: 'sym:^pass_f7$',
      matches: 10,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: false,
    });
    assert.deepEqual(
      r.files.map((f) => f.fileName.text),
      ['d7/f7.c'],
    );
  } finally {
    await searcher.close();
  }
});

test('committing the content before its symbols leaves the symbols files the pass has written already', async () => {
  // Threads with no shard left to build start the pass before the content is committed
  // (build-pool.ts): the commit's cleanup took their files, and the pass failed.
  const corpus = join(dir.path, 'early');
  mkdirSync(corpus, { recursive: true });
  writeFileSync(join(corpus, 'a.c'), cFile(1));
  const dataDir = join(dir.path, 'early-data');
  await indexLocal(corpus, { dataDir, symbols: false });
  const shards = shardsDir(dataDir, 1);
  const built = loadManifest(dataDir, 1) as Manifest;
  const g = built.generation;
  const pass = [`g${g + 1}-y0.symbols`, `g${g + 1}-y1.symbols.tmp-1-abcd`];
  const strays = [`g${g + 1}-0.trawl`, `g${g}-y0.symbols`, `g${g + 2}-y0.symbols`];
  for (const f of [...pass, ...strays]) writeFileSync(join(shards, f), 'x');
  const pending = commitManifest(dataDir, { ...built, symbolsPending: true }, built);
  assert.deepEqual(readdirSync(shards).sort(), ['manifest.json', ...pending.shards.map((s) => s.file), ...pass].sort());
  // Committed without them (the pass failed, or a run that is not the pass's): they go too.
  commitManifest(dataDir, { ...built }, loadManifest(dataDir, 1) as Manifest);
  assert.deepEqual(readdirSync(shards).sort(), ['manifest.json', ...pending.shards.map((s) => s.file)].sort());
});

test('a git repository whose last run stopped before its symbols came is built in full', { skip }, async () => {
  const repo = TestRepo.init(join(dir.path, 'git'));
  repo.commit({ 'a.c': cFile(1), 'b.c': cFile(2) });
  const dataDir = join(dir.path, 'git-data');
  const first = await indexLocal(repo.path, { dataDir, symbols: true });
  assert.equal(first.mode, 'full');
  assert.equal((await indexLocal(repo.path, { dataDir, symbols: true })).mode, 'unchanged');
  // As a run killed between its content commit and its symbols pass's leaves it.
  const path = join(shardsDir(dataDir, first.repoId), 'manifest.json');
  writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), symbolsPending: true }));
  const again = await indexLocal(repo.path, { dataDir, symbols: true });
  assert.equal(again.mode, 'full');
  assert.equal(again.fullReason, 'the previous build did not finish adding its symbols');
  assert.equal(again.symbols, 8);
  assert.equal((loadManifest(dataDir, first.repoId) as Manifest).symbolsPending, undefined);
  // Without symbols wanted, nothing is pending that a run would add.
  writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), symbolsPending: true }));
  assert.equal((await indexLocal(repo.path, { dataDir, symbols: false })).mode, 'unchanged');
});

test('a full rebuild of a git repository takes the symbols of its unchanged files from the previous index', { skip }, async () => {
  const repo = TestRepo.init(join(dir.path, 'git-reuse'));
  // More files than a build on the calling thread takes, so that the symbols come in a pass.
  repo.commit(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`d${i % 10}/f${i}.c`, cFile(i)])));
  const dataDir = join(dir.path, 'git-reuse-data');
  const first = await indexLocal(repo.path, { dataDir, symbols: true });
  assert.equal(first.symbolsReused, 0);
  // An incremental run keeps the shards with their symbols files, beside its delta shard.
  repo.commit({ 'd5/f5.c': cFile(5000) });
  const delta = await indexLocal(repo.path, { dataDir, symbols: true });
  assert.equal(delta.mode, 'delta');
  const kept = loadManifest(dataDir, first.repoId) as Manifest;
  assert.ok(
    kept.shards.filter((s) => !s.delta).every((s) => s.symbols?.endsWith('.symbols')),
    'the base shards keep their symbols files',
  );
  const seen = new Searcher({ dataDir, workers: 0 });
  try {
    for (const name of ['pass_f5000', 'pass_f7']) {
      const res = await seen.search({
        query: `sym:^${name}$`,
        matches: 10,
        contextLines: 0,
        whole: false,
        isRegexEnabled: false,
        isCaseSensitivityEnabled: true,
      });
      assert.equal(res.stats.actualMatchCount, 1, name);
    }
  } finally {
    await seen.close();
  }
  repo.commit({ 'd3/f3.c': cFile(3000) });
  const rebuilt = await indexLocal(repo.path, { dataDir, symbols: true, incremental: false });
  assert.equal(rebuilt.mode, 'full');
  assert.equal(rebuilt.symbolsReused, 299, 'every file but the changed one');
  assert.equal(rebuilt.symbols, first.symbols);
  const searcher = new Searcher({ dataDir });
  try {
    const res = await searcher.search({
      query: 'sym:pass_f3000',
      matches: 10,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: true,
    });
    assert.equal(res.stats.actualMatchCount, 1);
    const old = await searcher.search({
      query: 'sym:pass_f299',
      matches: 10,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: true,
    });
    assert.equal(old.stats.actualMatchCount, 1, 'a reused definition is found');
  } finally {
    await searcher.close();
  }
});
