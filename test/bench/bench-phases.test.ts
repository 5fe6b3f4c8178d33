// The opt-in phases of `trawl bench run` (--auth, --web with the code viewer, --reindex) end to end on a small
// generated tree: the command as an operator runs it, the result file valid against
// bench/result.schema.json with each phase's figures, the report's tables, and
// `trawl bench compare` judging the phases (and not judging them against a run without
// them). Durations are printed, not asserted.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CompareReport } from '../../bench/suite/compare-report.ts';
import { resultErrors } from '../../bench/suite/result-file.ts';
import type { BenchResult } from '../../bench/suite/result.ts';
import { generateCorpus, tempDir } from '../helpers/corpus.ts';
import { runTrawl as trawl, TRAWL } from '../helpers/trawl-cli.ts';

describe('trawl bench run --quick --auth --web --reindex', () => {
  const tmp = tempDir('bench-phases');
  const corpus = join(tmp.path, 'tree');
  const out = join(tmp.path, 'result.json');
  let result: BenchResult;
  let run: Awaited<ReturnType<typeof trawl>>;

  before(
    async () => {
      generateCorpus(corpus, 11, 60);
      mkdirSync(join(corpus, 'src'), { recursive: true });
      writeFileSync(
        join(corpus, 'src', 'main.c'),
        '#include <setjmp.h>\nstatic jmp_buf env;\nint main(void) {\n  if (setjmp(env)) return 1;\n  longjmp(env, 1);\n  return 0;\n}\n',
      );
      run = await trawl(
        ['bench', 'run', '--corpus', corpus, '--quick', '--no-peers', '--iterations', '5', '--http-seconds', '2', '--auth', '--web', '--reindex', '--out', out],
        tmp.path,
      );
      process.stderr.write(`# bench run with the three phases took ${(run.ms / 1000).toFixed(1)} s\n`);
    },
    { timeout: 300_000 },
  );
  after(() => tmp.cleanup());

  it('exits 0 and writes a result valid against the schema, with the three phases', () => {
    assert.equal(run.code, 0, run.stderr);
    result = JSON.parse(readFileSync(out, 'utf8')) as BenchResult;
    assert.deepEqual(resultErrors(result), []);
    assert.ok(result.auth && result.web && result.reindex);
  });

  it('auth: both variants loaded without an error, the key counted, its step costed', () => {
    const a = result.auth!;
    assert.equal(a.request, 'GET /api/repos');
    assert.deepEqual(
      a.variants.map((v) => v.name),
      ['anonymous', 'apiKey'],
    );
    for (const v of a.variants) {
      assert.ok(v.requestsPerSecond > 0 && v.samplesMs.length > 0 && v.perSecondSamples.length >= 1, v.name);
      assert.equal(v.non2xx + v.errors + v.timeouts, 0, v.name);
    }
    if (process.platform === 'linux') {
      assert.equal(typeof a.stepCpuUsPerRequest, 'number');
      assert.ok(a.variants.every((v) => v.serverCpuMsPerRequest! > 0));
    }
  });

  it('web: every query of the mix loaded in Chromium, the hits with a first result', () => {
    const w = result.web!;
    assert.equal(w.queries.length, result.search.queries.length);
    for (const q of w.queries) {
      assert.equal(q.doneMsSamples.length, w.runs, q.name);
      const api = result.search.queries.find((s) => s.name === q.name)!;
      // The page shows a first result exactly when the search finds something.
      assert.equal(q.firstResultMsSamples.length, api.stats!.actualMatchCount > 0 ? w.runs : 0, q.name);
    }
    assert.ok(w.medianDoneMs! > 0 && w.medianFirstResultMs! > 0);
  });

  it('viewer: the 200,000-line file opened at line 150,000 in every load, drawn virtualised', () => {
    const v = result.viewer!;
    assert.ok(v, 'with --web, the code viewer is measured too');
    assert.equal(v.lines, 200_000);
    assert.equal(v.targetLine, 150_000);
    assert.equal(v.openMsSamples.length, v.runs);
    assert.equal(v.jumpMsSamples.length, 2 * v.runs);
    assert.ok(v.medianOpenMs > 0 && v.medianJumpMs >= 0);
    assert.ok(v.drawnLines > 0 && v.drawnLines < 2_000, `${v.drawnLines} lines in the page`);
    assert.match(run.stdout, /^\| open at line 150,000 \(navigation to the line drawn\) \| /m);
  });

  it('reindex: ten branches hold more than one, an unmoved re-run changes nothing, a changed file adds a version', () => {
    const b = result.reindex!.builds;
    for (const [name, build] of Object.entries(b)) assert.equal(build.secondsSamples.length, result.options.indexRuns, name);
    assert.equal(result.reindex!.branches, 10);
    assert.ok(b.branches.indexBytes > b.full.indexBytes);
    assert.ok(b.branches.branchListBytes > b.full.branchListBytes);
    assert.equal(b.unchanged.indexBytes, b.full.indexBytes);
    assert.ok(b.oneFile.indexBytes > b.full.indexBytes);
    assert.equal(result.reindex!.corpusBytes, result.corpus.totalBytes);
    assert.ok(b.full.contentBytes! > 0 && b.branches.contentBytes! > b.full.contentBytes!);
  });

  it('reindex: trawl sync of the repository, first and after each one-line commit (checked searchable by the phase)', () => {
    const sync = result.reindex!.sync!;
    assert.equal(sync.first.secondsSamples.length, 1);
    assert.equal(sync.oneLine.secondsSamples.length, Math.max(3, result.options.indexRuns), 'at least three: the target is a median');
    assert.ok([...sync.first.secondsSamples, ...sync.oneLine.secondsSamples].every((x) => x > 0));
    assert.match(run.stdout, /^\| `trawl sync` after one line changed in one file on main \| /m);
    // In the whole-process table, without a verdict: the target is about Linux-sized sources.
    assert.match(
      run.stdout,
      /^\| `trawl sync`, one line changed in one file of the corpus as a git repository \| .* \| ≤ 2\.00 s \(for a source of ≥ 500 MB: not this one\) \|$/m,
    );
    assert.match(
      run.stdout,
      /^\| the corpus as a git repository, `trawl index --no-symbols` \(full build\), corpus MB\/s \| [\d.]+ MB\/s \| \| ≥ 100 MB\/s \(for a source/m,
    );
  });

  it('prints a table per phase', () => {
    assert.match(run.stdout, /^\| `GET \/api\/repos`.*\| req\/s \|/m);
    assert.match(run.stdout, /^\| the authentication and rate-limit step adds \|/m);
    assert.match(run.stdout, /^\| web UI, Chromium .* page loads per query \| first result \| done \|$/m);
    assert.match(run.stdout, /^\| again after one file changed on main \(delta\) \|/m);
  });

  it('compare judges the phases, and does not judge them against a run without them', () => {
    const slower = structuredClone(result);
    for (const build of Object.values(slower.reindex!.builds)) build.secondsSamples = build.secondsSamples.map((s) => s * 2);
    const sync = slower.reindex!.sync!;
    sync.oneLine.secondsSamples = sync.oneLine.secondsSamples.map((s) => s * 2);
    const without = structuredClone(result) as Partial<BenchResult>;
    delete without.auth;
    delete without.web;
    delete without.viewer;
    delete without.reindex;
    delete without.commands;
    writeFileSync(join(tmp.path, 'slower.json'), JSON.stringify(slower));
    writeFileSync(join(tmp.path, 'without.json'), JSON.stringify(without));
    assert.deepEqual(resultErrors(without), []);
    const compare = (a: string, b: string, json: boolean) =>
      spawnSync(process.execPath, [TRAWL, 'bench', 'compare', a, b, ...(json ? ['--json'] : [])], { cwd: tmp.path, encoding: 'utf8', maxBuffer: 64 << 20 });
    const same = compare(out, out, false);
    for (const heading of ['Whole trawl processes', 'Authentication and rate limit', 'Web UI', 'Re-indexing'])
      assert.match(same.stdout, new RegExp(`^${heading}`, 'm'));
    const r = JSON.parse(compare(out, 'slower.json', true).stdout) as CompareReport;
    for (const name of ['full', 'branches', 'unchanged', 'oneFile', 'syncOneLine'])
      assert.equal(r.metrics.find((m) => m.id === `reindex/${name}/seconds`)!.verdict, 'regression', name);
    assert.equal(r.metrics.find((m) => m.id === 'reindex/syncFirst/seconds')!.verdict, 'no change');
    const w = JSON.parse(compare('without.json', out, true).stdout) as CompareReport;
    const phases = w.metrics.filter((m) => ['commands', 'auth', 'web', 'reindex'].includes(m.group));
    assert.equal(phases.length, 21);
    assert.ok(phases.every((m) => m.verdict === 'not judged'));
    const plain = JSON.parse(compare('without.json', 'without.json', true).stdout) as CompareReport;
    assert.equal(plain.metrics.filter((m) => ['commands', 'auth', 'web', 'reindex'].includes(m.group)).length, 0);
  });
});

describe('a result of the code viewer alone (--only viewer)', () => {
  // The committed run of the code viewer: the schema's "one phase alone" branch takes it, with
  // none of the core phases, and compare reads it (judging nothing against itself).
  const file = join(import.meta.dirname, '..', '..', 'bench', 'results', '2026-11-27-issue23-viewer-linux-6.1.json');

  it('matches the schema, and a core phase added to it does not', () => {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<BenchResult>;
    assert.equal(r.options!.only, 'viewer');
    assert.deepEqual(resultErrors(r), []);
    assert.notDeepEqual(resultErrors({ ...r, summary: {} }), [], 'a viewer-only run has no summary');
    const noViewer = structuredClone(r);
    delete noViewer.viewer;
    assert.notDeepEqual(resultErrors(noViewer), [], '--only viewer needs the viewer object');
  });

  it('compare takes it: the viewer figures, not judged for want of a difference', () => {
    const res = spawnSync(process.execPath, [TRAWL, 'bench', 'compare', file, file, '--json'], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr);
    const r = JSON.parse(res.stdout) as CompareReport;
    assert.deepEqual(r.metrics.map((m) => m.id).sort(), ['viewer/jump', 'viewer/open']);
    assert.ok(r.metrics.every((m) => m.verdict === 'no change'));
  });
});
