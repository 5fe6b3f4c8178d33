// `trawl bench compare` (bench/suite/compare.ts, compare-text.ts, chart.ts) on synthetic
// results (test/helpers/bench-fixture.ts): a 30% slowdown of every sample is a regression
// of every query and exit status 1; another run of the same distributions is no change and
// no warning; throughput is judged the other way round; single measurements are judged
// against the wider threshold and deterministic sizes exactly; what makes two runs unlike
// is warned about; stats deltas name the work that changed; the text fits 120 columns and
// the SVG is well-formed, escaped and deterministic.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareResults } from '../../bench/suite/compare.ts';
import type { CompareReport, MetricComparison } from '../../bench/suite/compare-report.ts';
import { compareText } from '../../bench/suite/compare-text.ts';
import { compareChartSvg, escapeXml } from '../../bench/suite/chart.ts';
import type { BenchResult } from '../../bench/suite/result.ts';
import { resultErrors } from '../../bench/suite/result-file.ts';
import { SYNTHETIC_QUERIES, syntheticResult } from '../helpers/bench-fixture.ts';

const byId = (r: CompareReport, id: string): MetricComparison => {
  const m = r.metrics.find((x) => x.id === id);
  assert.ok(m, `metric ${id} in ${r.metrics.map((x) => x.id).join(', ')}`);
  return m;
};
const searchMetrics = (r: CompareReport) => r.metrics.filter((m) => m.group === 'search');
const close = (actual: number | null, expected: number, tolerance: number, what: string) =>
  assert.ok(actual !== null && Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} ± ${tolerance}`);
/** The 30%-slower comparison, shared by the tests that only read it (each comparison bootstraps ~15 metrics). */
let slowedReport: CompareReport | undefined;
const slowedDown = () => (slowedReport ??= compareResults(syntheticResult({ seed: 1 }), syntheticResult({ seed: 1, latencyScale: 1.3 })));
const describe = (m: MetricComparison) => `${m.id}: ${m.verdict} (${m.basis}, ratio ${m.ratio} [${m.ratioLow}, ${m.ratioHigh}], p ${m.p})`;

/** Fewer samples, for tests about figures other than the search and HTTP latencies: quicker to compare. */
const SMALL = { iterations: 20, responses: 40 } as const;

/** A copy of `r` changed by `change`: the fixture's results are plain data. */
function edited(r: BenchResult, change: (r: BenchResult) => void): BenchResult {
  const copy = structuredClone(r);
  change(copy);
  return copy;
}

test('every sample 30% slower: every query regresses, exit status 1; 30% faster: improvements', () => {
  const report = slowedDown();
  const queries = searchMetrics(report);
  assert.equal(queries.length, SYNTHETIC_QUERIES.length);
  for (const m of queries) {
    assert.equal(m.verdict, 'regression', describe(m));
    assert.equal(m.basis, 'test');
    close(m.ratio, 1.3, 1e-9, `${m.id} ratio`);
    assert.ok(m.ratioLow! > 1.05 && m.ratioLow! <= 1.3 && m.ratioHigh! >= 1.3, describe(m));
    assert.ok(m.p! < 0.01, describe(m));
  }
  assert.equal(byId(report, 'http/search/latency').verdict, 'regression');
  // Throughput, memory and index were not scaled.
  for (const id of ['http/search/throughput', 'memory/idle', 'index/seconds', 'index/bytes']) assert.equal(byId(report, id).verdict, 'no change', id);
  assert.equal(report.exitStatus, 1);
  assert.equal(report.regressions, report.metrics.filter((m) => m.verdict === 'regression').length);
  assert.ok(report.regressions >= SYNTHETIC_QUERIES.length);

  const text = compareText(report);
  for (const m of queries) {
    const row = text.split('\n').find((l) => l.startsWith(`  ${m.label.slice(0, 20)}`));
    assert.ok(row, `a row for ${m.label} in\n${text}`);
    assert.match(row, /\+30\.0%.*REGRESSION/);
  }
  assert.match(text, new RegExp(`^${report.regressions} regressions, 0 improvements, \\d+ unchanged; exit status 1`, 'm'));

  const faster = compareResults(syntheticResult({ seed: 1 }), syntheticResult({ seed: 1, latencyScale: 1 / 1.3 }));
  for (const m of searchMetrics(faster)) assert.equal(m.verdict, 'improvement', describe(m));
  assert.equal(faster.exitStatus, 0);
  assert.match(compareText(faster), /exit status 0: no regression/);
});

test('another run of the same distributions: no change anywhere, no warning', () => {
  for (const seed of [2, 3]) {
    const report = compareResults(syntheticResult({ seed: 1 }), syntheticResult({ seed }));
    assert.deepEqual(report.metrics.filter((m) => m.verdict !== 'no change').map(describe), [], `seed ${seed}`);
    assert.deepEqual(report.warnings, []);
    assert.equal(report.exitStatus, 0);
    assert.equal(report.regressions + report.improvements + report.notJudged, 0);
    for (const m of searchMetrics(report)) assert.deepEqual(m.statsChanged, [], m.id);
    // The peers did not change: ripgrep's medians moved by noise only; csearch was not installed.
    assert.deepEqual(
      report.machineDrift.map((d) => d.peer),
      ['rg'],
    );
    close(report.machineDrift[0]!.ratio, 1, 0.1, 'rg drift');
    // Printed as is by --json: nothing may be lost (undefined) or turned into null (NaN) on the way.
    assert.deepEqual(JSON.parse(JSON.stringify(report)), report);
  }
});

test('throughput: fewer requests per second is a regression, more an improvement', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const slower = compareResults(old, syntheticResult({ seed: 1, ...SMALL, throughputScale: 0.8 }));
  for (const id of ['http/search/throughput', 'http/stream/throughput']) {
    const m = byId(slower, id);
    assert.equal(m.better, 'higher');
    assert.equal(m.verdict, 'regression', describe(m));
    assert.equal(m.basis, 'test');
    // The ratio is of the values as measured, not of their reciprocals.
    close(m.ratio, 0.8, 2e-3, `${id} ratio`);
    assert.ok(m.ratioHigh! < 0.95, describe(m));
  }
  assert.equal(slower.exitStatus, 1);
  const faster = compareResults(old, syntheticResult({ seed: 1, ...SMALL, throughputScale: 1.25 }));
  for (const id of ['http/search/throughput', 'http/stream/throughput']) assert.equal(byId(faster, id).verdict, 'improvement', describe(byId(faster, id)));
  assert.equal(faster.exitStatus, 0);
});

test('single measurements are judged against the 25% threshold; a missing figure is not judged', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const withSeconds = (k: number) => compareResults(old, syntheticResult({ seed: 1, ...SMALL, indexSecondsScale: k }));
  const cases: Array<[number, string]> = [
    [1.1, 'no change'],
    [1.4, 'regression'],
    [0.7, 'improvement'],
  ];
  for (const [k, verdict] of cases) {
    const m = byId(withSeconds(k), 'index/seconds');
    assert.equal(m.basis, 'threshold', describe(m));
    assert.equal(m.verdict, verdict, `index seconds ×${k}: ${describe(m)}`);
    close(m.ratio, k, 1e-9, 'ratio');
    assert.equal(m.p, null);
  }
  const lost = compareResults(
    old,
    edited(old, (r) => {
      r.indexing.runs[0]!.peakRssBytes = null;
      r.memory.idleSamplesBytes = [];
      r.memory.idleMedianBytes = null;
    }),
  );
  for (const id of ['index/peakRss', 'memory/idle']) {
    const m = byId(lost, id);
    assert.equal(m.verdict, 'not judged', describe(m));
    assert.equal(m.basis, 'none');
    assert.equal(m.new.n, 0);
  }
  assert.equal(lost.notJudged, 2);
  assert.equal(lost.exitStatus, 0);
});

test('index bytes are deterministic: any change beyond 5% counts', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const resized = (k: number) =>
    compareResults(
      old,
      edited(old, (r) => {
        const run = r.indexing.runs[0]!;
        run.indexBytes = Math.round(run.indexBytes * k);
        run.sizeRatio = run.indexBytes / run.contentBytes;
      }),
    );
  const cases: Array<[number, string]> = [
    [1.1, 'regression'],
    [1.03, 'no change'],
    [0.9, 'improvement'],
  ];
  for (const [k, verdict] of cases) {
    const report = resized(k);
    for (const id of ['index/bytes', 'index/sizeRatio']) {
      const m = byId(report, id);
      assert.equal(m.basis, 'exact', describe(m));
      assert.equal(m.verdict, verdict, `index bytes ×${k}: ${describe(m)}`);
    }
  }
});

test('warnings: corpus, machine, query mix, busy machine, results changed, missing and failed queries, drift', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const report = compareResults(
    old,
    edited(syntheticResult({ seed: 2, ...SMALL }), (r) => {
      r.corpus.sha256 = 'd'.repeat(64);
      r.environment.machine.cores = 4;
      r.options.queriesSha256 = 'b'.repeat(64);
      r.options.quick = true;
      r.foreignCores.http = 0.6;
      r.search.queries[1]!.stats!.totalMatchCount = 190;
      r.search.queries[2]!.error = 'worker crashed';
      r.search.queries = r.search.queries.filter((q) => q.name !== 'quoted');
      for (const q of r.peers[0]!.queries) q.medianMs! *= 1.2;
    }),
  );
  const expected = [
    /^corpus differs .*sha256 cccccccccccc.*sha256 dddddddddddd.*not like for like/,
    /^machine differs .*2 cores.*4 cores/,
    /^query mix differs/,
    /^quick and full runs mixed/,
    /^new run: the machine was busy \(foreign cores http 0\.60/,
    /^query "include-angle": results changed \(totalMatchCount 200→190\)$/,
    /^query "re-and" failed in new: worker crashed$/,
    /^query "quoted" only in old$/,
    /^machine drift: rg .* moved \+(1[5-9]|2[0-5])% over 3 queries/,
  ];
  for (const re of expected) assert.equal(report.warnings.filter((w) => re.test(w)).length, 1, `${re} in\n${report.warnings.join('\n')}`);
  assert.equal(report.warnings.length, expected.length, report.warnings.join('\n'));
  // A query missing or failed on a side has no latency to judge.
  for (const id of ['search/quoted/latency', 'search/re-and/latency']) {
    const m = byId(report, id);
    assert.equal(m.verdict, 'not judged', describe(m));
    assert.equal(m.new.n, 0);
  }
  close(report.machineDrift[0]!.ratio, 1.2, 0.1, 'rg drift');
  const text = compareText(report);
  assert.match(text, /Warnings \(9\)/);
  assert.match(text, /! query "include-angle": results changed/);
  assert.match(text, /Machine drift .*rg new\/old ×1\.\d+ \(\+\d+\.\d%\) over 3 queries/);
});

test('stats deltas name the work that changed', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const report = compareResults(
    old,
    edited(syntheticResult({ seed: 1, ...SMALL }), (r) => {
      r.search.queries[0]!.stats!.filesLoaded = 15;
      r.search.queries[0]!.stats!.duration *= 3; // a timing: the samples' business, not a stats change
    }),
  );
  const m = byId(report, 'search/rare-literal/latency');
  assert.deepEqual(m.statsChanged, ['filesLoaded 12→15']);
  assert.deepEqual(m.stats!.filesLoaded, { old: 12, new: 15, delta: 3 });
  assert.deepEqual(m.stats!.totalMatchCount, { old: 100, new: 100, delta: 0 });
  for (const excluded of ['duration', 'wait', 'matchTreeConstruction', 'matchTreeSearch', 'flushReason']) assert.ok(!(excluded in m.stats!), excluded);
  assert.equal(byId(report, 'http/search/latency').stats, null);
  assert.match(compareText(report), /\n {6}work: filesLoaded 12→15\n/);
});

test('the text fits 120 columns and truncates long queries', () => {
  const report = slowedDown();
  const text = compareText(report);
  for (const line of text.split('\n')) assert.ok([...line].length <= 120, `${[...line].length} columns: ${line}`);
  const long = SYNTHETIC_QUERIES.find((q) => q.name === 'long-or')!.query;
  assert.ok(!text.includes(long), 'the long query is cut');
  assert.match(text, new RegExp(`\\n  ${long.slice(0, 30).replace(/[()]/g, '\\$&')}[^\\n]*… `));
  assert.match(text, /^ {2}old {6}000000100000 {2}trawl 0\.1\.0 {2}Node v20\.20\.0 {2}2026-12-02T10:00:00\.000Z {2}full run$/m);
  assert.match(text, /^ {2}corpus {3}linux-6\.1, 78000 files, 1\.30 GB, sha256 cccccccccccc \(same on both sides\)$/m);
  assert.match(text, /^ {2}index size +2\.40 GB +2\.40 GB +0\.0% +— +— +no change +exact$/m);
});

/**
 * Well-formedness as far as this SVG goes: tags nest and close, attribute values are quoted
 * and free of < and raw &, and text holds no < or > (all escaped) and only known entities.
 */
function assertWellFormed(svg: string): void {
  const entity = /&(amp|lt|gt|quot|apos);/g;
  const stack: string[] = [];
  let at = 0;
  while (at < svg.length) {
    const lt = svg.indexOf('<', at);
    const text = svg.slice(at, lt < 0 ? svg.length : lt);
    assert.ok(!/[<>]/.test(text) && !text.replace(entity, '').includes('&'), `text ${JSON.stringify(text)}`);
    if (lt < 0) break;
    const gt = svg.indexOf('>', lt);
    assert.ok(gt > lt, `unclosed tag at ${lt}`);
    const tag = svg.slice(lt + 1, gt);
    const m = /^(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<&]*(?:&(?:amp|lt|gt|quot|apos);[^"<&]*)*")*)\s*(\/?)$/.exec(tag);
    assert.ok(m, `malformed tag <${tag}>`);
    const [, closing, name, , selfClosing] = m;
    if (closing) assert.equal(stack.pop(), name, `</${name}> closes the wrong element`);
    else if (!selfClosing) stack.push(name!);
    at = gt + 1;
  }
  assert.deepEqual(stack, [], 'every element closed');
}

test('the SVG chart: well-formed, every query escaped, regressions marked in text, deterministic', () => {
  const old = syntheticResult({ seed: 1 });
  const report = compareResults(
    old,
    edited(syntheticResult({ seed: 1, latencyScale: 1.3 }), (r) => {
      r.search.queries[4]!.samplesMs = r.search.queries[4]!.samplesMs.map((x) => x / 1.3 / 1.3); // sym-kmalloc: faster
    }),
  );
  const svg = compareChartSvg(report);
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.trimEnd().endsWith('</svg>'));
  assertWellFormed(svg);
  for (const q of SYNTHETIC_QUERIES) assert.ok(svg.includes(escapeXml(q.query)), `${q.name} escaped in the chart`);
  assert.ok(svg.includes('#include &lt;linux/module.h&gt;'));
  assert.ok(svg.includes('&amp;&amp;') && svg.includes('&quot;struct') && svg.includes('&apos;x&apos;'));
  const regressions = searchMetrics(report).filter((m) => m.verdict === 'regression').length;
  assert.equal(regressions, SYNTHETIC_QUERIES.length - 1);
  assert.equal(svg.match(/>▲ \+30\.0% REGRESSION</g)?.length, regressions);
  assert.equal(svg.match(/>▼ -23\.1% improvement</g)?.length, 1);
  // Log axis over the mix's 0.6 ms to 480 ms (and p95 above).
  assert.ok(svg.includes('>0.1 ms<') && svg.includes('>1 s<'), 'decade ticks from 0.1 ms to 1 s');
  // Deterministic, and the same from the report read back from --json.
  assert.equal(compareChartSvg(report), svg);
  assert.equal(compareChartSvg(JSON.parse(JSON.stringify(report)) as CompareReport), svg);
  // Without search queries there is still a chart, saying so.
  const empty = compareChartSvg({ ...report, metrics: report.metrics.filter((m) => m.group !== 'search') });
  assertWellFormed(empty);
  assert.match(empty, /no search queries to compare/);
});

test('a result of another format is refused', () => {
  const old = syntheticResult({ seed: 1 });
  const other = { ...old, format: 'trawl-bench/2' } as unknown as BenchResult;
  assert.throws(() => compareResults(old, other), /new result has format "trawl-bench\/2", expected trawl-bench\/1/);
});

test('the synthetic results are valid result files (bench/result.schema.json)', () => {
  assert.deepEqual(resultErrors(syntheticResult({ seed: 5 })), []);
  assert.deepEqual(resultErrors(syntheticResult({ seed: 6, latencyScale: 1.3, throughputScale: 0.7 })), []);
});

test('run-to-run noise: queries that wobble together raise the floor; a query far beyond it still regresses', () => {
  // Twelve queries; between the runs each median moves by its own run-level factor (as two
  // runs of one commit do: most within ±5%, a few up to ±14%), one query is 60% slower.
  const widen = (r: BenchResult, factors: number[] | null): BenchResult => {
    const copy = structuredClone(r);
    const base = copy.search.queries;
    copy.search.queries = [0, 1].flatMap((k) => base.map((q) => ({ ...q, name: `${q.name}-${k}` })));
    if (factors) copy.search.queries.forEach((q, i) => (q.samplesMs = q.samplesMs.map((x) => x * factors[i]!)));
    return copy;
  };
  const oldR = widen(syntheticResult({ seed: 11 }), null);
  assert.ok(oldR.search.queries.length >= 12);
  const jitter = [1.02, 0.97, 1.04, 0.99, 1.12, 0.96, 1.01, 0.88, 1.03, 0.98, 1.14, 1.6];
  const newR = widen(syntheticResult({ seed: 12 }), jitter);
  const report = compareResults(oldR, newR);
  assert.ok(report.searchNoiseFloor! > 0.14 && report.searchNoiseFloor! < 0.5, String(report.searchNoiseFloor));
  const search = report.metrics.filter((m) => m.group === 'search');
  assert.deepEqual(
    search.filter((m) => m.verdict === 'regression').map((m) => m.queryName),
    [oldR.search.queries[11]!.name],
  );
  assert.equal(search.filter((m) => m.verdict === 'improvement').length, 0);
  // Without the floor, the wobble alone would be called regressions and improvements.
  const judgedAlone = search.filter((m) => m.ratioLow !== null && (m.ratioLow > 1.05 || m.ratioHigh! < 0.95));
  assert.ok(judgedAlone.length >= 4, String(judgedAlone.length));
  // Under NOISE_MIN_QUERIES queries no floor is estimated.
  assert.equal(compareResults(syntheticResult({ seed: 1 }), syntheticResult({ seed: 2 })).searchNoiseFloor, null);
});

/** `r` with the whole-process timings, every sample times `scale`. */
function withCommands(r: BenchResult, scale = 1): BenchResult {
  return edited(r, (x) => {
    const runs = (...s: number[]) => ({ secondsSamples: s.map((v) => v * scale) });
    x.commands = {
      runs: 10,
      help: runs(0.071, 0.07, 0.072, 0.069, 0.073, 0.07, 0.071, 0.074, 0.07, 0.072),
      search: {
        query: 'spin_lock_irqsave',
        caseSensitive: true,
        index: { files: 3100, contentBytes: 45e6, indexBytes: 66e6, symbols: true, seconds: 4.2 },
        ...runs(0.145, 0.141, 0.15, 0.139, 0.144, 0.147, 0.143, 0.146, 0.142, 0.148),
      },
      sync: { files: 190, first: runs(1.1), oneFile: runs(0.34, 0.33, 0.35, 0.34, 0.36, 0.33, 0.34, 0.35, 0.34, 0.33) },
      foreignCores: 0.01,
    };
  });
}

/** `r` with a re-indexing phase, with or without its syncs (older results have none). */
function withReindex(r: BenchResult, sync: boolean, scale = 1): BenchResult {
  return edited(r, (x) => {
    const build = (s: number, bytes: number) => ({ secondsSamples: [s], peakRssBytes: 1e9, indexBytes: bytes, branchListBytes: 1000 });
    x.reindex = {
      branches: 10,
      changedFilesPerBranch: 3,
      builds: { full: build(10.7, 1.5e9), branches: build(11.2, 1.51e9), unchanged: build(0.4, 1.5e9), oneFile: build(1.2, 1.5e9) },
      foreignCores: 0,
    };
    if (sync) Object.assign(x.reindex, { corpusBytes: 1.3e9, sync: { first: { secondsSamples: [17 * scale] }, oneLine: { secondsSamples: [1.3 * scale] } } });
  });
}

test('whole-process timings: judged when both sides have them, not judged against an older result, absent when neither has them', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const ids = ['commands/help/seconds', 'commands/search/seconds', 'commands/sync/first/seconds', 'commands/sync/oneFile/seconds'];
  for (const r of [withCommands(old), withReindex(old, true), withReindex(old, false)]) assert.deepEqual(resultErrors(r), []);

  const slower = compareResults(withCommands(old), withCommands(old, 1.5));
  for (const id of ids) {
    const m = byId(slower, id);
    assert.equal(m.group, 'commands');
    assert.equal(m.unit, 's');
    assert.equal(m.verdict, 'regression', describe(m));
    close(m.ratio, 1.5, 1e-9, `${id} ratio`);
  }
  assert.equal(byId(slower, 'commands/help/seconds').basis, 'test');
  assert.equal(byId(slower, 'commands/sync/first/seconds').basis, 'threshold');
  assert.match(
    compareText(slower),
    /^Whole trawl processes \(spawn to exit\)\n(.*\n)* {2}trawl search spin_lock_irqsave, small index +0\.14\d s +0\.2\d\d s +\+50\.0%/m,
  );

  const same = compareResults(withCommands(old), withCommands(old));
  for (const id of ids) assert.equal(byId(same, id).verdict, 'no change', id);

  // An older result (no commands object) on either side: the metrics are listed, not judged.
  for (const [a, b] of [
    [old, withCommands(old)],
    [withCommands(old), old],
  ] as const) {
    const report = compareResults(a, b);
    for (const id of ids) assert.equal(byId(report, id).verdict, 'not judged', id);
    assert.equal(report.exitStatus, 0);
  }
  // A side whose mix had no identifier to search for.
  const noSearch = edited(withCommands(old), (x) => (x.commands!.search = null));
  assert.deepEqual(resultErrors(noSearch), []);
  assert.equal(byId(compareResults(withCommands(old), noSearch), 'commands/search/seconds').verdict, 'not judged');
  assert.equal(compareResults(old, old).metrics.filter((m) => m.group === 'commands').length, 0);
});

test('re-indexing syncs: judged when both sides have them, not judged against a result from before them', () => {
  const old = syntheticResult({ seed: 1, ...SMALL });
  const ids = ['reindex/syncFirst/seconds', 'reindex/syncOneLine/seconds'];
  const slower = compareResults(withReindex(old, true), withReindex(old, true, 1.5));
  for (const id of ids) assert.equal(byId(slower, id).verdict, 'regression', id);
  const before = compareResults(withReindex(old, false), withReindex(old, true));
  for (const id of ids) assert.equal(byId(before, id).verdict, 'not judged', id);
  assert.equal(byId(before, 'reindex/full/seconds').verdict, 'no change');
  assert.equal(compareResults(withReindex(old, false), withReindex(old, false)).metrics.filter((m) => ids.includes(m.id)).length, 0);
});
