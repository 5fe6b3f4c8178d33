// `trawl bench compare` as an operator runs it, on two committed result files: two full
// runs of the same commit on the Linux source (bench/results/history/*-issue8-*), the
// table, the JSON for CI and the chart, and an exit status that agrees with the verdicts.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import type { CompareReport } from '../../bench/suite/compare-report.ts';
import { readResult } from '../../bench/suite/result-file.ts';
import { tempDir } from '../helpers/corpus.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OLD = join(ROOT, 'bench', 'results', 'history', '2026-11-22-issue8-linux-6.1.json');
const NEW = join(ROOT, 'bench', 'results', 'history', '2026-11-22-issue8-linux-6.1-rerun.json');
const tmp = tempDir('bench-compare-cli');
after(() => tmp.cleanup());

const trawl = (args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'bin', 'trawl.js'), ...args], { encoding: 'utf8', cwd: tmp.path, maxBuffer: 64 << 20 });

test('the committed results are valid result files of the same corpus and mix', () => {
  const a = readResult(OLD);
  const b = readResult(NEW);
  assert.equal(a.corpus.sha256, b.corpus.sha256);
  assert.equal(a.options.queriesSha256, b.options.queriesSha256);
  assert.equal(a.search.queries.length, 50);
});

test('bench compare prints the table; --json and the exit status agree', () => {
  const chart = join(tmp.path, 'latency.svg');
  const text = trawl(['bench', 'compare', OLD, NEW, '--chart', chart]);
  assert.equal(text.stderr, '');
  const json = trawl(['bench', 'compare', OLD, NEW, '--json']);
  const report = JSON.parse(json.stdout) as CompareReport;
  assert.equal(report.format, 'trawl-bench-compare/1');
  assert.equal(text.status, report.exitStatus);
  assert.equal(json.status, report.exitStatus);
  assert.equal(report.exitStatus, report.regressions > 0 ? 1 : 0);
  // Every query of the mix has its row, and the other groups their tables.
  const old = readResult(OLD);
  assert.equal(report.metrics.filter((m) => m.group === 'search').length, old.search.queries.length);
  for (const q of old.search.queries.slice(0, 10)) assert.ok(text.stdout.includes(q.query.slice(0, 20)), q.query);
  for (const heading of ['Repeated search latency per query', 'HTTP', 'Memory', 'Index']) assert.match(text.stdout, new RegExp(`^${heading}`, 'm'));
  assert.match(text.stdout, /Machine drift/);
  const svg = readFileSync(chart, 'utf8');
  assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  // --threshold reaches the verdicts: the idle RSS fell 4.7% between the two runs (certain:
  // the samples barely vary), no change at 5%, an improvement at 1%. The search queries'
  // noise floor does not depend on the threshold.
  const strict = JSON.parse(trawl(['bench', 'compare', OLD, NEW, '--json', '--threshold', '1']).stdout) as CompareReport;
  const idle = (r: CompareReport) => r.metrics.find((m) => m.id === 'memory/idle')!;
  assert.equal(idle(report).verdict, 'no change');
  assert.equal(idle(strict).verdict, 'improvement');
  assert.equal(strict.options.threshold, 0.01);
  assert.equal(strict.searchNoiseFloor, report.searchNoiseFloor);
});
