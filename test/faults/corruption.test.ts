// One damaged repository index takes out that repository only (docs/security-and-faults.md,
// row 3): for each kind of damage to a manifest, a shard, a membership or a symbols file, a
// running daemon answers searches for the healthy repositories exactly as before, with
// status 200, never gives a result from the damaged one, reports it (trawl repos, one log
// line, /metrics), and after a re-index (trawl index, or a sync) serves it again.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { BROKEN_MARK, readManifest, type Manifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { addSymbols } from '../../daemon/index/symbols-pass.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { openStore } from '../../daemon/store/open.ts';
import { listRepos } from '../../daemon/cli/repos-command.ts';
import { call } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { logRecorder } from '../helpers/log-recorder.ts';
import { sectionTable } from '../helpers/section-table.ts';
import { SHARD_VERSION, SectionKind } from '../../daemon/index/shard-format.ts';

const TRAWL = join(import.meta.dirname, '..', '..', 'bin', 'trawl.js');
const FILES = 6;
const DAMAGED_MSG = 'repository index is damaged: left out of searches and listings until it is re-indexed (the next sync, or trawl index)';

// Three repositories: a healthy git repository; a plain directory (browsed from its
// index); a git repository indexed twice, so that it has a base shard with a membership
// file (and a symbols file, as a large build's symbols pass writes) beside a delta shard.
// Every file of the first two and the live files of the third's base shard hold "needle";
// its delta shard does not.
type Victim = 'notes' | 'lib';

let root: { path: string; cleanup(): void };
let template: string;
let paths: Record<'app' | Victim, string>;
const ids: Record<string, number> = {};

before(async () => {
  root = tempDir('corrupt');
  template = join(root.path, 'template');
  const app = TestRepo.init(join(root.path, 'repos', 'app'));
  const appFiles: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) appFiles[`src/app${i}.c`] = `int needle_app_${i}(void) { return ${i}; }\n`;
  app.commit(appFiles);
  const notes = join(root.path, 'dirs', 'notes');
  mkdirSync(notes, { recursive: true });
  for (let i = 0; i < FILES; i++) writeFileSync(join(notes, `note${i}.txt`), `needle in note ${i}\nsecond line of note ${i}\n`);
  const lib = TestRepo.init(join(root.path, 'repos', 'lib'));
  const libFiles: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) libFiles[`lib${i}.c`] = `int needle_lib_${i};\n`;
  lib.commit(libFiles);
  paths = { app: app.path, notes, lib: lib.path };
  const opts = { dataDir: template, symbols: false, workers: 1 };
  for (const name of ['app', 'notes', 'lib'] as const) ids[name] = (await indexLocal(paths[name], opts)).repoId;
  // A changed file: its old version in the base shard is dead, which a membership file says.
  lib.commit({ [`lib${FILES - 1}.c`]: 'int other_token;\n' });
  const delta = await indexLocal(lib.path, opts);
  assert.equal(delta.mode, 'delta');
  assert.ok(
    readManifest(template, ids.lib!)!.shards.some((s) => s.membership),
    'the base shard has a membership file',
  );
  // Its base shard's symbols in a symbols file, as the symbols pass writes them (symbols-pass.ts).
  const libDir = shardsDir(template, ids.lib!);
  const m = readManifest(template, ids.lib!) as Manifest;
  const symbols = `g${m.generation}-y0.symbols`;
  addSymbols({ from: join(libDir, m.shards[0]!.file), finalPath: join(libDir, symbols) });
  writeFileSync(join(libDir, 'manifest.json'), JSON.stringify({ ...m, shards: m.shards.map((s, i) => (i === 0 ? { ...s, symbols } : s)) }));
});

after(() => root.cleanup());

/** Where a document's bytes start in the shard file. */
function contentOffset(buf: Buffer, path: string): number {
  const s = sectionTable(buf);
  const docs = s.get(SectionKind.Docs)!;
  const names = s.get(SectionKind.Names)!;
  for (let o = docs.offset; o < docs.offset + docs.length; o += 32) {
    const name = buf.toString('utf8', names.offset + buf.readUInt32LE(o), names.offset + buf.readUInt32LE(o) + buf.readUInt32LE(o + 4));
    if (name === path) return s.get(SectionKind.Content)!.offset + buf.readUInt32LE(o + 8);
  }
  throw new Error(`no document ${path}`);
}

interface Files {
  dir: string;
  manifest: Manifest;
  /** The (base) shard holding "needle" documents, and its membership and symbols files if any. */
  shard: string;
  membership?: string;
  symbols?: string;
}

function filesOf(data: string, victim: Victim): Files {
  const dir = shardsDir(data, ids[victim]!);
  const manifest = readManifest(data, ids[victim]!) as Manifest;
  const base = manifest.shards[0]!;
  return {
    dir,
    manifest,
    shard: join(dir, base.file),
    ...(base.membership ? { membership: join(dir, base.membership) } : {}),
    ...(base.symbols ? { symbols: join(dir, base.symbols) } : {}),
  };
}

function edit(path: string, change: (b: Buffer) => Buffer): void {
  writeFileSync(path, change(Buffer.from(readFileSync(path))));
}

interface Case {
  name: string;
  victim: Victim;
  damage(f: Files): void;
  /**
   * Found when the daemon reads the index (manifest, header), only when a search (or a
   * browse) reads the shard, or by the scrub that verifies the large sections in the
   * background (index/section-scrub.ts): a search before it may read the damage unchecked.
   */
  found: 'at start' | 'by a search' | 'by a browse' | 'by the scrub';
  /** The first search (default "needle"); a file-name query reads the content only while shaping results. */
  query?: string;
}

const CASES: Case[] = [
  {
    name: 'manifest with flipped bytes (not JSON)',
    victim: 'notes',
    found: 'at start',
    damage: (f) => edit(join(f.dir, 'manifest.json'), (b) => ((b[0] = 0x78), b)),
  },
  { name: 'truncated manifest', victim: 'lib', found: 'at start', damage: (f) => edit(join(f.dir, 'manifest.json'), (b) => b.subarray(0, b.length >> 1)) },
  { name: 'empty manifest', victim: 'notes', found: 'at start', damage: (f) => writeFileSync(join(f.dir, 'manifest.json'), '') },
  {
    name: 'manifest of an unknown version',
    victim: 'lib',
    found: 'at start',
    damage: (f) => writeFileSync(join(f.dir, 'manifest.json'), JSON.stringify({ ...f.manifest, version: 99 })),
  },
  { name: 'manifest naming a missing shard', victim: 'notes', found: 'at start', damage: (f) => rmSync(f.shard) },
  { name: 'manifest naming a missing membership file', victim: 'lib', found: 'at start', damage: (f) => rmSync(f.membership!) },
  { name: 'manifest naming a missing symbols file', victim: 'lib', found: 'at start', damage: (f) => rmSync(f.symbols!) },
  {
    name: 'manifest naming a file outside its directory',
    victim: 'notes',
    found: 'at start',
    damage: (f) =>
      writeFileSync(join(f.dir, 'manifest.json'), JSON.stringify({ ...f.manifest, shards: [{ ...f.manifest.shards[0]!, file: '../2/g1-0.trawl' }] })),
  },
  {
    name: 'shard of another format version',
    victim: 'notes',
    found: 'at start',
    damage: (f) => edit(f.shard, (b) => (b.writeUInt32LE(SHARD_VERSION + 1, 8), b)),
  },
  { name: 'truncated shard', victim: 'lib', found: 'at start', damage: (f) => edit(f.shard, (b) => b.subarray(0, b.length - 100)) },
  { name: 'shard with a flipped byte in its header', victim: 'notes', found: 'at start', damage: (f) => edit(f.shard, (b) => ((b[40] ^= 0x01), b)) },
  {
    name: 'shard with a flipped byte in its table of contents',
    victim: 'lib',
    found: 'at start',
    damage: (f) => edit(f.shard, (b) => ((b[64 + 4] ^= 0x10), b)),
  },
  {
    name: 'shard with a flipped byte in a section (the file names)',
    victim: 'notes',
    found: 'by a search',
    damage: (f) => edit(f.shard, (b) => ((b[sectionTable(b).get(SectionKind.Names)!.offset] ^= 0x20), b)),
  },
  {
    name: 'shard with a flipped byte in a document',
    victim: 'notes',
    found: 'by a search',
    damage: (f) => edit(f.shard, (b) => ((b[contentOffset(b, 'note3.txt') + 12] ^= 0x01), b)),
  },
  {
    name: 'shard with a flipped byte in a document a file-name match shows',
    victim: 'notes',
    found: 'by a search',
    query: 'file:^note3\\.txt$',
    damage: (f) => edit(f.shard, (b) => ((b[contentOffset(b, 'note3.txt') + 12] ^= 0x01), b)),
  },
  {
    name: 'shard with a flipped byte in a document that is browsed',
    victim: 'notes',
    found: 'by a browse',
    damage: (f) => edit(f.shard, (b) => ((b[contentOffset(b, 'note3.txt') + 12] ^= 0x01), b)),
  },
  {
    name: 'membership file with a flipped byte',
    victim: 'lib',
    found: 'by a search',
    damage: (f) => edit(f.membership!, (b) => ((b[b.length - 1] ^= 0x01), b)),
  },
  {
    // The first byte of the first list: a first document of 64 or more, which a shard of six does not have.
    name: 'shard with a flipped byte in a posting list',
    victim: 'notes',
    found: 'by the scrub',
    damage: (f) => edit(f.shard, (b) => ((b[sectionTable(b).get(SectionKind.ContentPostings)!.offset] ^= 0x40), b)),
  },
  {
    name: 'shard with a flipped byte in its follow masks',
    victim: 'notes',
    found: 'by the scrub',
    damage: (f) => edit(f.shard, (b) => ((b[sectionTable(b).get(SectionKind.ContentFollow)!.offset] ^= 0x01), b)),
  },
  {
    name: 'symbols file with a flipped byte in its symbol index',
    victim: 'lib',
    found: 'by the scrub',
    damage: (f) => edit(f.symbols!, (b) => ((b[sectionTable(b).get(SectionKind.SymbolIndex)!.offset + 20] ^= 0x01), b)),
  },
  { name: 'symbols file with a flipped byte in its header', victim: 'lib', found: 'at start', damage: (f) => edit(f.symbols!, (b) => ((b[40] ^= 0x01), b)) },
  {
    name: 'symbols file with a flipped byte in a section',
    victim: 'lib',
    found: 'by a search',
    damage: (f) => edit(f.symbols!, (b) => ((b[b.length - 1] ^= 0x01), b)),
  },
];

interface Hit {
  repository: string;
  path: string;
  text: string;
}

async function search(url: string, query: string): Promise<{ status: number; hits: Hit[]; crashes: number; exhaustive: boolean }> {
  const r = await call(`${url}/api/search`, { json: { query, matches: 1000, contextLines: 0 } });
  if (r.status !== 200) return { status: r.status, hits: [], crashes: 0, exhaustive: false };
  const hits = (r.json.files as Array<{ repository: string; fileName: { text: string }; chunks: Array<{ content: string }> }>).map((f) => ({
    repository: f.repository,
    path: f.fileName.text,
    text: f.chunks.map((c) => c.content).join('|'),
  }));
  hits.sort((a, b) => (`${a.repository}/${a.path}` < `${b.repository}/${b.path}` ? -1 : 1));
  return { status: r.status, hits, crashes: r.json.stats.crashes, exhaustive: r.json.isSearchExhaustive };
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  assert.ok(m, `${name} is in /metrics`);
  return Number(m[1]);
}

/**
 * What `trawl repos` says of the repository's index: the command's own listing (a fresh
 * store handle and a fresh read of the data dir, as another process makes), or with `cli`
 * the real command in another process, whose table must say "damaged (not served)".
 */
async function reposDamage(data: string, name: string, cli = false): Promise<string | undefined> {
  if (cli) {
    const r = spawnSync(process.execPath, [TRAWL, 'repos', '--data-dir', data], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => l.split(/\s+/)[1] === name);
    assert.ok(line, `trawl repos lists ${name}`);
    return /damaged \(not served\)/.test(line) ? line : undefined;
  }
  const rec = (await listRepos(data, false)).find((x) => x.repoName === name);
  assert.ok(rec, `trawl repos lists ${name}`);
  return rec.indexDamage;
}

async function start(data: string, logger: ReturnType<typeof logRecorder>): Promise<Daemon> {
  const config = parseConfig(JSON.stringify({ settings: { anonymousAccess: true, symbols: false } }), join(data, 'trawl.json'));
  return startDaemon({ config, dataDir: data, host: '127.0.0.1', port: 0, logger, workers: 1, sync: false });
}

/** Polls `done` until it holds (the test's own timeout bounds the wait). */
async function until(done: () => boolean, what: string): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
  assert.ok(done(), what);
}

const damagedLines = (logger: ReturnType<typeof logRecorder>) =>
  logger
    .text()
    .split('\n')
    .filter((l) => l.includes(DAMAGED_MSG));

for (const c of CASES) {
  test(`damage: ${c.name} takes out ${c.victim} only`, async (t) => {
    const dir = tempDir('corrupt-case');
    const data = join(dir.path, 'data');
    cpSync(template, data, { recursive: true });
    const query = c.query ?? 'needle';
    const logger = logRecorder();
    let daemon = await start(data, logger);
    try {
      // What the index answers intact.
      const intact = await search(daemon.url, query);
      assert.equal(intact.status, 200);
      assert.equal(intact.crashes, 0);
      assert.ok(
        intact.hits.some((h) => h.repository === c.victim),
        `${c.victim} answers "${query}" before the damage`,
      );
      const others = intact.hits.filter((h) => h.repository !== c.victim);
      await daemon.close();

      c.damage(filesOf(data, c.victim));
      daemon = await start(data, logger);
      const url = daemon.url;
      if (c.found === 'at start') {
        assert.equal(damagedLines(logger).length, 1, 'reported when the daemon reads the index');
        assert.equal(await metric(url, 'trawl_index_broken_repositories'), 1);
      }
      if (c.found === 'by the scrub') {
        // Before the scrub has reported it, a search answers as if intact or without the
        // repository (its shard failed cleanly, or the scrub was first): never otherwise.
        const early = await search(url, query);
        assert.equal(early.status, 200);
        const asIntact = JSON.stringify(early.hits) === JSON.stringify(intact.hits) && early.crashes === 0;
        const without = JSON.stringify(early.hits) === JSON.stringify(others) && early.crashes >= 1;
        assert.ok(asIntact || without, `a search before the scrub: ${JSON.stringify(early)}`);
        await until(() => existsSync(join(shardsDir(data, ids[c.victim]!), BROKEN_MARK)), 'the scrub marks the repository broken');
      }
      if (c.found === 'by a browse') {
        const r = await call(`${url}/api/source?repo=${c.victim}&path=note3.txt`);
        assert.equal(r.status, 404, r.text);
        assert.equal(r.json.errorCode, 'REPOSITORY_NOT_FOUND');
        assert.match(r.json.message, /damaged/);
      }
      for (let round = 0; round < 3; round++) {
        const r = await search(url, query);
        assert.equal(r.status, 200);
        assert.deepEqual(r.hits, others, `round ${round}: the healthy repositories answer exactly as before, and ${c.victim} not at all`);
        assert.equal(r.exhaustive, false, 'a search that leaves a repository out is not exhaustive');
        assert.ok(r.crashes >= 1);
      }
      const stream = await call(`${url}/api/stream_search`, { json: { query, matches: 1000, contextLines: 0 } });
      assert.equal(stream.status, 200);
      assert.match(stream.text, /"type":"final"/);
      assert.doesNotMatch(stream.text, /"type":"error"/);
      const repos = await call(`${url}/api/repos`);
      assert.equal(repos.status, 200);
      assert.deepEqual(
        repos.json.map((r: { repoName: string }) => r.repoName).sort(),
        ['app', 'lib', 'notes'].filter((n) => n !== c.victim),
      );
      const other = c.victim === 'notes' ? 'lib' : 'notes';
      assert.equal(
        (await call(`${url}/api/source?repo=${other === 'notes' ? 'notes&path=note1.txt' : 'lib&path=lib1.c'}`)).status,
        200,
        'the other repositories still browse',
      );

      // Reported: once in the log, in /metrics, in `trawl repos` (another process: through the mark when found at run time).
      const lines = damagedLines(logger);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.equal(JSON.parse(lines[0]!).repoId, ids[c.victim]);
      t.diagnostic(`reported: ${JSON.parse(lines[0]!).reason}`);
      assert.equal(await metric(url, 'trawl_index_broken_repositories'), 1);
      const shardErrors = await metric(url, 'trawl_index_shard_errors_total');
      if (c.found === 'at start') assert.equal(shardErrors, 0);
      else assert.ok(shardErrors >= 1);
      if (c.found !== 'at start') assert.ok(existsSync(join(shardsDir(data, ids[c.victim]!), BROKEN_MARK)), 'marked for the other processes');
      assert.ok(await reposDamage(data, c.victim, c === CASES[0]), 'trawl repos says the index is damaged');
      assert.equal(await reposDamage(data, 'app'), undefined);

      // The next re-index builds it afresh (never on top of the damage) and clears the mark.
      if (c.victim === 'lib') {
        const store = openStore(data);
        try {
          const cfg = parseConfig(
            JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(root.path, 'repos', 'lib') } } }),
            join(dir.path, 'trawl.json'),
          );
          const report = await syncOnce({ config: cfg, dataDir: data, store });
          assert.deepEqual(
            report.repos.map((r) => [r.repoName, r.outcome, r.mode]),
            [['lib', 'indexed', 'full']],
          );
        } finally {
          await store.close();
        }
      } else {
        const again = await indexLocal(paths[c.victim], { dataDir: data, symbols: false, workers: 1 });
        assert.equal(again.mode, 'full');
      }
      assert.equal(existsSync(join(shardsDir(data, ids[c.victim]!), BROKEN_MARK)), false);
      const healed = await search(url, query);
      assert.deepEqual(healed.hits, intact.hits, 'after the re-index the answer is the intact one');
      assert.equal(healed.crashes, 0);
      assert.equal(healed.exhaustive, true);
      assert.equal(await metric(url, 'trawl_index_broken_repositories'), 0);
      assert.equal((await call(`${url}/api/repos`)).json.length, 3);
      assert.equal(await reposDamage(data, c.victim), undefined);
      assert.deepEqual(
        readdirSync(shardsDir(data, ids[c.victim]!)).filter((f) => f.includes('.tmp-')),
        [],
      );
    } finally {
      await daemon.close();
      dir.cleanup();
    }
  });
}

test('an index run over a damaged base that nobody has noticed yet rebuilds it in full', async () => {
  const dir = tempDir('corrupt-unnoticed');
  const data = join(dir.path, 'data');
  cpSync(template, data, { recursive: true });
  try {
    // A section or membership file is checked only when a shard is opened: no daemon did.
    edit(filesOf(data, 'lib').membership!, (b) => ((b[b.length - 1] ^= 0x01), b));
    // A new commit (in a copy: the other tests use the repository as it is), so that the run
    // plans an incremental build on the damaged base.
    cpSync(paths.lib, join(dir.path, 'lib'), { recursive: true });
    const lib = new TestRepo(join(dir.path, 'lib'));
    lib.commit({ 'more.c': 'int needle_more;\n' });
    const again = await indexLocal(lib.path, { dataDir: data, symbols: false, workers: 1 });
    assert.equal(again.repoId, ids.lib);
    assert.equal(again.mode, 'full');
    assert.match(again.fullReason ?? '', /damaged.*membership file is corrupt/);
    assert.equal(again.files, FILES + 1);
  } finally {
    dir.cleanup();
  }
});
