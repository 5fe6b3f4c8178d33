// The many-repositories phase end to end (`trawl bench run --only many-repos`), on five
// repositories cut from a tree written here and five tiny ones, kept in a cache directory of
// the test's: the result file valid against bench/result.schema.json with every figure the
// phase must have measured, the queries drawn from the corpus finding what they look for,
// the cache left as it was made (the change is committed to a copy), the report's tables.
// The peers' figures are checked where csearch and rg are installed. Durations are printed,
// not asserted.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureManyCorpus } from '../../bench/suite/many-repos-setup.ts';
import { median } from '../../bench/suite/percentiles.ts';
import { resultErrors } from '../../bench/suite/result-file.ts';
import type { AnyBenchResult, ManyReposCorpus } from '../../bench/suite/result.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { runTrawl as trawl } from '../helpers/trawl-cli.ts';

const installed = (cmd: string) => !spawnSync(cmd, ['--version'], { stdio: 'ignore' }).error;

/** Six directories of C files, each defining functions with names of its own. */
function writeTree(root: string): void {
  const r = prng(3);
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi'];
  const word = (n: number) => Array.from({ length: n }, () => r.pick(syllables)).join('');
  for (const dir of ['drivers/net', 'drivers/usb', 'fs/ext9', 'kernel/sched', 'lib/zz', 'net/core']) {
    mkdirSync(join(root, dir), { recursive: true });
    for (let f = 0; f < 4; f++) {
      const lines = ['#include <stdio.h>', ''];
      for (let i = 0; i < 12; i++) lines.push(`static int ${word(3)}_${word(2)}(int ${word(2)}_arg)`, '{', `\treturn ${word(3)}_call(${i});`, '}', '');
      writeFileSync(join(root, dir, `${word(2)}.c`), lines.join('\n'));
    }
  }
}

describe('trawl bench run --only many-repos', () => {
  const tmp = tempDir('bench-many');
  const tree = join(tmp.path, 'tree');
  const cache = join(tmp.path, 'many');
  const out = join(tmp.path, 'result.json');
  let run: Awaited<ReturnType<typeof trawl>>;
  let result: AnyBenchResult;
  const corpus = (name: string): ManyReposCorpus => result.manyRepos!.corpora.find((c) => c.name === name)!;

  before(
    async () => {
      writeTree(tree);
      run = await trawl(
        [
          'bench',
          'run',
          '--corpus',
          tree,
          '--only',
          'many-repos',
          '--corpus-repos',
          '5',
          '--tiny-repos',
          '5',
          '--many-dir',
          cache,
          '--quick',
          '--distinct',
          '12',
          '--out',
          out,
        ],
        tmp.path,
      );
      process.stderr.write(`# bench run --only many-repos took ${(run.ms / 1000).toFixed(1)} s\n`);
    },
    { timeout: 300_000 },
  );
  after(() => tmp.cleanup());

  it('exits 0 and writes a result valid against its JSON Schema, with the phase alone', () => {
    assert.equal(run.code, 0, run.stderr);
    result = JSON.parse(readFileSync(out, 'utf8')) as AnyBenchResult;
    assert.deepEqual(resultErrors(result), []);
    assert.equal(result.options.only, 'many-repos');
    assert.equal(result.options.corpusRepos, 5);
    assert.equal(result.options.tinyRepos, 5);
    assert.equal(result.options.distinct, 12);
    assert.equal(result.search, undefined);
    assert.deepEqual(
      result.manyRepos!.corpora.map((c) => c.name),
      ['tree-5', 'tiny-5'],
    );
  });

  it('syncs every repository and times the daemon from its start', () => {
    for (const c of result.manyRepos!.corpora) {
      assert.equal(c.repos, 5, c.name);
      assert.deepEqual([c.sync.indexed, c.sync.failed], [5, 0], c.name);
      assert.ok(c.sync.seconds > 0 && c.sync.indexFiles > 0 && c.sync.indexBytes > 0, c.name);
      assert.ok(c.start.listeningMs > 0 && c.start.readyMs >= c.start.listeningMs, c.name);
      assert.equal(typeof c.start.firstSearchMs, 'number', c.name);
      assert.ok(c.madeSeconds !== null && c.madeSeconds > 0, `${c.name}: made by this run`);
      assert.match(c.sha256, /^[0-9a-f]{64}$/);
      assert.ok(c.warmup.requests >= 2, c.name);
    }
    assert.equal(corpus('tree-5').files, 20);
    assert.equal(corpus('tiny-5').files, 15);
  });

  it('sends each query once, and the queries drawn from the corpus find what they look for', () => {
    for (const c of result.manyRepos!.corpora) {
      assert.deepEqual(
        c.queries.map((q) => q.kind),
        ['identifier', 'noHit', 'repo', 'lang', 'sym', 'reposPage'],
        c.name,
      );
      for (const q of c.queries) {
        assert.equal(q.errors, 0, `${c.name} ${q.kind}: ${q.firstError}`);
        assert.equal(q.samplesMs.length, q.queries.length, `${c.name} ${q.kind}`);
        assert.equal(new Set(q.queries).size, q.queries.length, `${c.name} ${q.kind}: each once`);
        if (q.samplesMs.length > 0) assert.ok(Math.abs(q.latencyMs!.p50 - median(q.samplesMs)) < 1e-4, `${c.name} ${q.kind}: p50`);
      }
      const kind = (k: string) => c.queries.find((q) => q.kind === k)!;
      assert.equal(kind('identifier').queries.length, 12, c.name);
      for (const k of ['identifier', 'repo', 'lang', 'sym']) assert.equal(kind(k).found, kind(k).queries.length, `${c.name} ${k}: every one found`);
      assert.equal(kind('noHit').found, 0, c.name);
      assert.equal(kind('reposPage').found, null);
      assert.deepEqual(kind('reposPage').queries, ['/api/repos?page=1&perPage=30']);
      assert.ok(kind('identifier').serverDurationP50Ms! > 0);
      // The warm-up, the first search and the timed identifiers are all distinct.
      assert.ok(!kind('identifier').queries.includes(c.start.firstSearch) && !kind('identifier').queries.includes(c.load.query));
    }
  });

  it('loads the daemon, samples its memory and times a one-line change until searchable', () => {
    for (const c of result.manyRepos!.corpora) {
      assert.equal(c.load.connections, 8);
      assert.ok(c.load.requestsPerSecond > 0 && c.load.non2xx + c.load.errors === 0, c.name);
      if (process.platform === 'linux')
        assert.ok(c.memory.idleAnonBytes! > 0 && c.memory.anonPerByte! > 0 && c.memory.settledAnonBytes! > 0 && c.memory.settledAnonPerByte! > 0, c.name);
      assert.ok(c.change.searchableMs !== null && c.change.searchableMs > 0, `${c.name}: the change was found`);
      assert.match(c.change.token, /^trawl_bench_change_[0-9a-f]{8}$/);
      assert.ok(c.change.syncSeconds > 0 && c.change.polls >= 1);
    }
  });

  it('leaves the cache as made: the change went to a copy, and a second run finds the corpus made', async () => {
    for (const c of result.manyRepos!.corpora) {
      const repo = join(cache, c.name, c.change.repo);
      assert.ok(!readFileSync(join(repo, c.change.file), 'utf8').includes(c.change.token), c.name);
      const log = spawnSync('git', ['rev-list', '--count', 'HEAD'], { cwd: repo, encoding: 'utf8' });
      assert.equal(log.stdout.trim(), '1', c.name);
      assert.equal(spawnSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' }).stdout, '', c.name);
    }
    const again = await ensureManyCorpus({ kind: 'tiny', count: 5 }, tree, join(cache, 'tiny-5'));
    assert.equal(again.madeSeconds, null);
    assert.equal(again.made.repos, 5);
    // The work dir is gone with the views and the data dirs.
    assert.equal(existsSync(/work dir (\S+)/.exec(run.stderr)![1]!), false);
  });

  it('runs the installed peers on the same queries, as ratios', () => {
    for (const c of result.manyRepos!.corpora) {
      const kind = (k: string) => c.queries.find((q) => q.kind === k)!;
      for (const k of ['sym', 'reposPage']) assert.deepEqual([kind(k).csearch, kind(k).rg], [null, null]);
      if (installed('cindex') && installed('csearch')) {
        assert.ok(c.cindex && c.cindex.indexBytes > 0, c.name);
        for (const k of ['identifier', 'noHit', 'repo', 'lang']) {
          const p = kind(k).csearch!;
          assert.equal(p.errors, 0, `${c.name} ${k}: ${p.firstError}`);
          assert.equal(p.samplesMs.length, kind(k).queries.length, `${c.name} ${k}: every query`);
          assert.ok(Math.abs(p.ratio! - p.medianMs! / p.trawlMedianMs!) < 1e-3, `${c.name} ${k}`);
        }
      } else assert.equal(c.cindex, null);
      if (installed('rg')) {
        const p = kind('identifier').rg!;
        assert.equal(p.samplesMs.length, 3, `${c.name}: rg's sample under --quick`);
        assert.equal(p.errors, 0, `${c.name}: ${p.firstError}`);
      } else assert.equal(kind('identifier').rg, null);
    }
  });

  it('prints the tables on stdout', () => {
    assert.match(run.stdout, /^### trawl .* on tree: .*\(quick\), the many-repos phase alone$/m);
    assert.match(run.stdout, /^\| many repositories \(seed \d+\) \| repos \|/m);
    assert.match(run.stdout, /^\| tree-5 \| 5 \| 20, /m);
    assert.match(run.stdout, /^\| tiny-5: each query sent once, one client, after a warm-up on \d+ other identifiers \|/m);
    assert.match(run.stdout, /^\| `repo:\^NAME\$ IDENT`, e\.g\. `repo:\^/m);
  });
});

describe('a cut into one repository', () => {
  const tmp = tempDir('bench-whole');
  after(() => tmp.cleanup());

  it('is the whole tree, subdirectories included, committed and clean', async () => {
    const tree = join(tmp.path, 'tree');
    writeTree(tree);
    const { made } = await ensureManyCorpus({ kind: 'cut', count: 1 }, tree, join(tmp.path, 'many', 'tree-1'));
    assert.deepEqual([made.repos, made.files], [1, 24]);
    const repo = join(made.dir, 'tree');
    const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, encoding: 'utf8' }).stdout.trim();
    assert.equal(git('ls-tree', '-r', '--name-only', 'main').split('\n').length, 24);
    assert.match(git('ls-tree', '-r', '--name-only', 'main'), /^kernel\/sched\/\w+\.c$/m);
    assert.equal(git('status', '--porcelain'), '');
  });
});
