// `trawl bench run --quick` end to end on a small generated tree: the command as an
// operator runs it (bin/trawl.js in a child process), its result file checked against
// bench/result.schema.json and against what the run must have measured; and the CLI's
// answers to bad input. The run's duration is printed, not asserted (timings belong to
// benchmarks, not tests); the test's own timeout only stops a hung run.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadQueries } from '../../bench/suite/queries.ts';
import { resultErrors } from '../../bench/suite/result-file.ts';
import type { BenchResult } from '../../bench/suite/result.ts';
import { median } from '../../bench/suite/percentiles.ts';
import { generateCorpus, tempDir } from '../helpers/corpus.ts';
import { runTrawl as trawl } from '../helpers/trawl-cli.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** A small source tree on which the default mix finds something. */
function writeCorpus(dir: string): void {
  generateCorpus(dir, 8, 60);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(
    join(dir, 'src', 'main.c'),
    '#include <setjmp.h>\n// TODO: handle errors\nstatic jmp_buf env;\nint main(void) {\n  if (setjmp(env)) return 1;\n  longjmp(env, 1);\n  return 0;\n}\n',
  );
  writeFileSync(
    join(dir, 'src', 'app.ts'),
    "import { readFile } from 'node:fs';\n// FIXME: error handling\nexport function init_app(): number {\n  return 1234567890;\n}\n",
  );
}

describe('trawl bench run --quick', () => {
  const tmp = tempDir('bench-run');
  const corpus = join(tmp.path, 'tree');
  const out = join(tmp.path, 'result.json');
  let result: BenchResult;
  let run: Awaited<ReturnType<typeof trawl>>;

  before(
    async () => {
      writeCorpus(corpus);
      run = await trawl(['bench', 'run', '--corpus', corpus, '--quick', '--iterations', '8', '--http-seconds', '2', '--out', out], tmp.path);
      process.stderr.write(`# bench run --quick took ${(run.ms / 1000).toFixed(1)} s\n`);
    },
    { timeout: 180_000 },
  );
  after(() => tmp.cleanup());

  it('exits 0 and writes a result file valid against its JSON Schema', () => {
    assert.equal(run.code, 0, run.stderr);
    result = JSON.parse(readFileSync(out, 'utf8')) as BenchResult;
    assert.deepEqual(resultErrors(result), []);
  });

  it('records what was measured on what', () => {
    assert.equal(result.format, 'trawl-bench/1');
    assert.equal(result.options.quick, true);
    assert.equal(result.options.queries, 'bench/queries/default.json');
    assert.match(result.environment.gitCommit, /^([0-9a-f]{40}(\+uncommitted)?|uncommitted)$/);
    assert.equal(result.environment.node, process.version);
    assert.ok(result.environment.machine.cores >= 1 && result.environment.machine.totalMemoryBytes > 0);
    assert.equal(result.corpus.path, corpus);
    assert.equal(result.corpus.files, readdirSync(corpus, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length);
    assert.match(result.corpus.sha256, /^[0-9a-f]{64}$/);
  });

  it('has every query of the default mix with its raw samples, percentiles and search stats', () => {
    const mix = loadQueries(join(ROOT, 'bench', 'queries', 'default.json'));
    assert.deepEqual(
      result.search.queries.map((q) => q.name),
      mix.map((q) => q.name),
    );
    for (const q of result.search.queries) {
      assert.equal(q.error, null, q.name);
      assert.equal(q.samplesMs.length, 8, q.name);
      const l = q.latencyMs!;
      assert.ok(l.min <= l.p50 && l.p50 <= l.p95 && l.p95 <= l.p99 && l.p99 <= l.max, q.name);
      for (const field of [
        'filesConsidered',
        'filesLoaded',
        'contentBytesLoaded',
        'indexBytesLoaded',
        'ngramLookups',
        'ngramMatches',
        'shardsScanned',
        'shardsSkippedFilter',
        'regexpsConsidered',
      ] as const) {
        assert.equal(typeof q.stats![field], 'number', `${q.name}.${field}`);
      }
    }
    const byName = new Map(result.search.queries.map((q) => [q.name, q]));
    // The tree was written so that these find what they look for.
    assert.equal(byName.get('rare-longjmp')!.stats!.totalMatchCount, 1);
    assert.equal(byName.get('re-ten-digits')!.stats!.actualMatchCount >= 1, true);
    assert.equal(byName.get('sym-main')!.stats!.totalMatchCount >= 1, true);
    assert.equal(byName.get('nohit-symbol')!.stats!.totalMatchCount, 0);
  });

  it('measures indexing, HTTP, streaming and memory', () => {
    const idx = result.indexing.runs[0]!;
    assert.ok(idx.seconds > 0 && idx.indexBytes > 0 && idx.files > 0);
    assert.equal(idx.sizeRatio, idx.indexBytes / idx.contentBytes);
    const h = result.http.search;
    assert.equal(h.query, 'longjmp');
    assert.ok(h.requestsPerSecond > 0 && h.samplesMs.length > 0 && h.perSecondSamples.length >= 1);
    assert.equal(h.non2xx + h.errors, 0);
    assert.equal(result.http.stream.runs.length, 2);
    assert.ok(result.http.stream.runs.every((r) => r.bytes > 0 && r.matches! > 0));
    if (process.platform === 'linux') {
      assert.ok(result.memory.idleSamplesBytes.length > 0 && result.memory.loadSamplesBytes.length > 0);
      assert.ok(result.memory.idleMedianBytes! > 10e6);
    }
  });

  it('times every query of the mix over HTTP, one client, with the daemon CPU per request', () => {
    const h = result.httpQueries!;
    assert.equal(result.options.httpQueryIterations, 5);
    assert.equal(h.iterations, 5);
    assert.deepEqual(
      h.queries.map((q) => q.name),
      result.search.queries.map((q) => q.name),
    );
    for (const q of h.queries) {
      assert.equal(q.error, null, q.name);
      assert.equal(q.samplesMs.length, 5, q.name);
      assert.deepEqual(
        q.samplesMs,
        [...q.samplesMs].sort((a, b) => a - b),
        `${q.name}: ascending`,
      );
      assert.equal(q.latencyMs!.p50, median(q.samplesMs), q.name);
      if (process.platform === 'linux') assert.ok(q.serverCpuMsPerRequest !== null && q.serverCpuMsPerRequest >= 0, q.name);
    }
    assert.equal(h.medianP50Ms, median(h.queries.map((q) => q.latencyMs!.p50)));
    assert.equal(h.allSamplesMs!.max, Math.max(...h.queries.flatMap((q) => q.samplesMs)));
    assert.match(run.stdout, /\| repeated: the same over HTTP, one client/);
  });

  it('takes the headline latency on held-out identifiers of the corpus, each sent once after a warm-up on others', () => {
    const d = result.distinct!;
    assert.equal(result.options.distinct, 30);
    const ids = d.identifiers;
    assert.equal(ids.queries.length, 30);
    assert.equal(new Set(ids.queries).size, 30, 'each once');
    assert.equal(ids.errors, 0, ids.firstError ?? '');
    assert.equal(ids.samplesMs.length, 30);
    assert.equal(ids.found, 30, 'every identifier drawn from the corpus is found');
    assert.ok(d.candidates >= 31 + 10);
    assert.ok(!ids.queries.includes(d.start.firstSearch));
    // None of them is a name of the tuning mix.
    const mix = loadQueries(join(ROOT, 'bench', 'queries', 'default.json'))
      .map((q) => q.query)
      .join(' ');
    for (const q of ids.queries) assert.ok(!new RegExp(`\\b${q}\\b`).test(mix), q);
    assert.ok(d.start.readyMs >= d.start.listeningMs && d.start.firstSearchMs! > 0);
    assert.ok(d.warmup.requests >= 2);
    assert.equal(d.cold, undefined);
    assert.equal(result.summary.distinctP50Ms, ids.latencyMs!.p50);
    assert.equal(result.summary.distinctP99Ms, ids.latencyMs!.p99);
    assert.match(run.stdout, /^\| \*\*search latency: 30 held-out identifiers of the corpus, each sent once\*\* over HTTP/m);
    // The peers on the same identifiers, where installed: csearch on each, rg on the first three (--quick).
    const installed = (cmd: string) => !spawnSync(cmd, ['--version'], { stdio: 'ignore' }).error;
    if (installed('cindex') && installed('csearch')) {
      assert.equal(d.csearch!.samplesMs.length, 30);
      assert.equal(d.csearch!.errors, 0, d.csearch!.firstError ?? '');
      assert.ok(Math.abs(d.csearch!.ratio! - d.csearch!.medianMs! / d.csearch!.trawlMedianMs!) < 1e-3);
    } else assert.equal(d.csearch, null);
    if (installed('rg')) assert.equal(d.rg!.samplesMs.length, 3);
    else assert.equal(d.rg, null);
    assert.match(run.stdout, /^\| repeated: median latency over all \d+ queries of the mix, in process/m);
  });

  it('times whole trawl processes: --help, search on a small index, sync of a one-file change', () => {
    const c = result.commands!;
    assert.equal(c.runs, 3);
    assert.equal(c.help.secondsSamples.length, 3);
    // The mix's first plain-identifier literal, over a copy of the whole (small) corpus.
    const s = c.search!;
    assert.equal(s.query, 'longjmp');
    assert.equal(s.caseSensitive, true);
    assert.equal(s.secondsSamples.length, 3);
    assert.equal(s.index.symbols, true);
    assert.ok(s.index.files > 0 && s.index.files <= result.indexing.runs[0]!.files, `${s.index.files} files`);
    assert.ok(s.index.indexBytes > s.index.contentBytes && s.index.contentBytes > 0);
    // The repository holds the corpus's text files (fewer than 190 here).
    const text = readdirSync(corpus, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && /\.(c|h|go|ts|py|md|txt)$/.test(e.name));
    assert.ok(c.sync.files > 0 && c.sync.files <= text.length, `${c.sync.files} of ${text.length}`);
    assert.equal(c.sync.first.secondsSamples.length, 1);
    assert.equal(c.sync.oneFile.secondsSamples.length, 3);
    const all = [...c.help.secondsSamples, ...s.secondsSamples, ...c.sync.first.secondsSamples, ...c.sync.oneFile.secondsSamples];
    assert.ok(
      all.every((x) => x > 0 && x < 120),
      all.join(', '),
    );
    assert.match(run.stdout, /^\| whole process: spawn to exit, Node's start-up included \(median of 3; .*\| target \|$/m);
    assert.match(run.stdout, /^\| `trawl --help` \| .* \| ≤ 150 ms: (met|missed) \|$/m);
    assert.match(
      run.stdout,
      /^\| `trawl search longjmp --case` on .* of index \(\d+ files, .* of content, with symbols; 1 matches\) \| .* \| ≤ 150 ms: (met|missed) \|$/m,
    );
    assert.match(run.stdout, /^\| `trawl sync`, one file changed in a \d+-file git repository \| .* \| ≤ 400 ms: (met|missed) \|$/m);
    // The work dir is gone with everything the phase made.
    assert.match(run.stderr, /work dir (\S+)/);
    assert.equal(existsSync(/work dir (\S+)/.exec(run.stderr)![1]!), false);
  });

  it('runs the installed peers on the same queries, as ratios', () => {
    for (const p of result.peers) {
      if (!p.available) {
        assert.match(p.note!, /not installed|no cindex/);
        continue;
      }
      assert.ok(p.queries.length > 0, p.peer);
      for (const q of p.queries) {
        assert.equal(q.error, null, `${p.peer} ${q.name}`);
        const trawlP50 = result.search.queries.find((t) => t.name === q.name)!.latencyMs!.p50;
        assert.ok(Math.abs(q.ratioToTrawl! - q.medianMs! / trawlP50) < 1e-9);
      }
    }
    assert.deepEqual(
      result.peers.map((p) => p.peer),
      ['csearch', 'rg'],
    );
  });

  it('prints the report on stdout', () => {
    assert.match(run.stdout, /^### trawl .* on tree: .*\(quick\)/);
    assert.match(run.stdout, /\| `longjmp` \| rare-literal \|/);
    assert.match(run.stdout, /POST \/api\/search/);
  });

  it('the schema rejects a damaged result', () => {
    const damaged = structuredClone(result) as unknown as { search: { queries: Array<Record<string, unknown>> }; corpus: Record<string, unknown> };
    delete damaged.search.queries[0]!.samplesMs;
    damaged.corpus.sha256 = 'not a hash';
    const errors = resultErrors(damaged);
    assert.ok(
      errors.some((e) => e.includes('samplesMs')),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((e) => e.startsWith('/corpus/sha256')),
      errors.join('\n'),
    );
  });
});

describe('trawl bench: bad input', () => {
  const tmp = tempDir('bench-input');
  after(() => tmp.cleanup());

  const table: Array<{ args: string[]; code: number; stderr: RegExp }> = [
    { args: ['bench'], code: 2, stderr: /bench needs a subcommand/ },
    { args: ['bench', 'walk'], code: 2, stderr: /unknown bench subcommand "walk"/ },
    { args: ['bench', 'run'], code: 2, stderr: /needs --corpus/ },
    { args: ['bench', 'run', '--corpus', '/nonexistent/tree'], code: 2, stderr: /--corpus \/nonexistent\/tree: not a directory/ },
    { args: ['bench', 'run', '--corpus', '.', '--iterations', '0'], code: 2, stderr: /--iterations must be a positive integer/ },
    { args: ['bench', 'run', '--corpus', '.', '--queries', 'missing.json'], code: 2, stderr: /--queries missing.json: no such file/ },
    { args: ['bench', 'run', '--corpus', '.', '--queries', 'bad.json'], code: 2, stderr: /bad.json\[0\]: kind must be one of/ },
    { args: ['bench', 'run', '--corpus', '.', '--only', 'web'], code: 2, stderr: /--only takes "cluster", "viewer", "many-repos"/ },
    { args: ['bench', 'run', '--corpus', '.', '--only', 'viewer', '--web'], code: 2, stderr: /--only viewer runs that phase alone/ },
    {
      args: ['bench', 'run', '--corpus', '.', '--only', 'viewer', '--cluster'],
      code: 2,
      stderr: /--only viewer runs the code viewer phase alone: drop --cluster/,
    },
    { args: ['bench', 'run', '--corpus', '.', '--only', 'cluster', '--auth'], code: 2, stderr: /--auth, --web and --reindex need the core phases/ },
    { args: ['bench', 'run', '--corpus', '.', '--cluster-nodes', '1,2'], code: 2, stderr: /--cluster-nodes is for the cluster phase/ },
    { args: ['bench', 'run', '--corpus', '.', '--cluster', '--cluster-nodes', '0,2'], code: 2, stderr: /--cluster-nodes takes node counts from 1 to 16/ },
    { args: ['bench', 'compare', 'a.json'], code: 2, stderr: /needs two result files/ },
    { args: ['bench', 'compare', 'missing.json', 'missing.json'], code: 1, stderr: /missing.json: no such file/ },
    { args: ['bench', 'compare', 'bad.json', 'bad.json'], code: 1, stderr: /bad.json: not a trawl bench run result/ },
    { args: ['bench', 'compare', 'a.json', 'b.json', '--threshold', 'x'], code: 2, stderr: /--threshold must be a number/ },
  ];
  for (const t of table) {
    it(`trawl ${t.args.join(' ')}`, async () => {
      writeFileSync(
        join(tmp.path, 'bad.json'),
        JSON.stringify([{ name: 'x', query: 'x', regex: false, caseSensitive: true, kind: 'fast', set: 's', peer: null }]),
      );
      writeFileSync(join(tmp.path, 'a.json'), '{}');
      writeFileSync(join(tmp.path, 'b.json'), '{}');
      const r = await trawl(t.args, tmp.path);
      assert.equal(r.code, t.code, r.stderr);
      assert.match(r.stderr, t.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    });
  }
});
