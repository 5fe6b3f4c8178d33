// The web UI's time to first result, this work tree against an earlier revision, on the
// same machine in one run: `bench/web-first-result.ts` runs alternately in a temporary
// git worktree of the base revision and here (base, this, base, this, ...), so drift in
// the machine's load lands on both sides. Each side's rounds are pooled per query; the
// summary is the median over queries of each query's median, and the ratio base/this
// (above 1: this tree is faster). Usage:
//   node --import tsx bench/web-first-result-compare.ts --base REV [--rounds N] [--runs N] [--out FILE.json]
// The base revision must have bench/web-first-result.ts (issue 9 on). The worktree
// borrows this tree's node_modules and core/build (the WebAssembly core), so both sides
// run the same dependencies and engine; what differs is the daemon and the page.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { commandOutput, environment } from './machine.ts';
import { summarize } from './stats.ts';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    runs: { type: 'string', default: '5' },
    corpus: { type: 'string', default: join(ROOT, 'corpus/linux-6.1') },
    out: { type: 'string' },
  },
});
const fail = (message: string): never => {
  process.stderr.write(`web-first-result-compare: ${message}\n`);
  process.exit(2);
};
if (!values.base) fail('--base REV is required (a commit, tag or branch)');
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) fail(`--rounds must be a positive integer, got ${values.rounds}`);
const baseCommit = commandOutput('git', ['rev-parse', '--verify', `${values.base}^{commit}`], ROOT) ?? fail(`not a revision: ${values.base}`);
const corpus = resolve(values.corpus!);

interface Row { name: string; firstResultMs: number[]; doneMs: number[] }
interface Run { summary: Record<string, number>; rows: Row[]; environment: { chromium?: string } }

const tmp = mkdtempSync(join(tmpdir(), 'trawl-web-compare-'));
const worktree = join(tmp, 'base');
try {
  const added = spawnSync('git', ['worktree', 'add', '--detach', '--quiet', worktree, baseCommit], { cwd: ROOT, stdio: 'inherit' });
  if (added.status !== 0) fail('git worktree add failed');
  if (!existsSync(join(worktree, 'bench/web-first-result.ts'))) fail(`${baseCommit} has no bench/web-first-result.ts`);
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
  symlinkSync(join(ROOT, 'core/build'), join(worktree, 'core/build'));

  const runSide = (dir: string, label: string, round: number): Run => {
    const out = join(tmp, `${label}-${round}.json`);
    process.stderr.write(`round ${round}: ${label}\n`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/web-first-result.ts', '--corpus', corpus, '--runs', values.runs!, '--out', out], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) fail(`the ${label} run of round ${round} failed (exit ${r.status})`);
    return JSON.parse(readFileSync(out, 'utf8')) as Run;
  };
  const base: Run[] = [];
  const here: Run[] = [];
  for (let round = 1; round <= rounds; round++) {
    base.push(runSide(worktree, 'base', round));
    here.push(runSide(ROOT, 'this', round));
  }

  /** Per query, every sample of every round; then the median over queries of the per-query medians. */
  const pooled = (runs: Run[]) => {
    const byName = new Map<string, Row>();
    for (const run of runs) {
      for (const row of run.rows) {
        const into = byName.get(row.name) ?? { name: row.name, firstResultMs: [], doneMs: [] };
        into.firstResultMs.push(...row.firstResultMs);
        into.doneMs.push(...row.doneMs);
        byName.set(row.name, into);
      }
    }
    const rows = [...byName.values()];
    const median = (xs: number[]) => summarize(xs).p50;
    return {
      medianFirstResultMs: median(rows.filter((r) => r.firstResultMs.length > 0).map((r) => median(r.firstResultMs))),
      medianDoneMs: median(rows.map((r) => median(r.doneMs))),
      medianNoHitDoneMs: rows.some((r) => r.firstResultMs.length === 0) ? median(rows.filter((r) => r.firstResultMs.length === 0).map((r) => median(r.doneMs))) : null,
      perRound: runs.map((r) => r.summary),
    };
  };
  const b = pooled(base);
  const h = pooled(here);
  const result = {
    format: 'trawl-web-first-result-compare/1',
    date: new Date().toISOString(),
    environment: { ...environment(ROOT), chromium: here[0]!.environment.chromium },
    corpus,
    rounds,
    runsPerQuery: Number(values.runs),
    base: { commit: baseCommit, ...b },
    this: h,
    ratio: {
      firstResult: b.medianFirstResultMs / h.medianFirstResultMs,
      done: b.medianDoneMs / h.medianDoneMs,
      noHitDone: b.medianNoHitDoneMs !== null && h.medianNoHitDoneMs !== null ? b.medianNoHitDoneMs / h.medianNoHitDoneMs : null,
    },
  };
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
  process.stderr.write(
    `first result: base ${b.medianFirstResultMs.toFixed(1)} ms, this ${h.medianFirstResultMs.toFixed(1)} ms (${result.ratio.firstResult.toFixed(2)}×); ` +
    `done: base ${b.medianDoneMs.toFixed(1)} ms, this ${h.medianDoneMs.toFixed(1)} ms (${result.ratio.done.toFixed(2)}×)\n`,
  );
} finally {
  spawnSync('git', ['worktree', 'remove', '--force', worktree], { cwd: ROOT, stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
}
