// Repository benchmark (issue 4): what several branches and incremental re-indexing cost.
//
//   node --import tsx bench/repos.ts [--corpus DIR] [--out FILE] [--branch-scale N] [--runs N]
//
// Makes a bare git repository of the corpus (default: the Linux 6.1 tree fetched by
// scripts/fetch-linux.sh) beside it, `<corpus>.git`, once, with every file (ignore rules
// bypassed: Debian's linux-source tree ships a .gitignore that ignores everything): one
// commit on main, then nine
// branches that each change three files. Then, each build in a fresh child process
// (`trawl index --no-symbols`, wall time and peak RSS), each --runs times (default 3;
// medians are reported):
//   one-branch   a full build of main
//   ten-branch   a full build of main and the nine branches
//   unchanged    the one-branch index again, refs unmoved
//   one-file     the one-branch index after a commit that changes one file on main
// and a branch-scale run: a small repository (the corpus's fs/ext4 directory) with N
// branches (default 1000) that each change one file, indexed with --branches '*', with
// the index size, the bytes of its branch lists and the latency of `branch:*` searches.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { shardsDir } from '../daemon/index/data-dir.ts';
import { readAllManifests } from '../daemon/index/manifest.ts';
import { Shard } from '../daemon/index/shard-reader.ts';
import { Searcher } from '../daemon/search/searcher.ts';
import { cpuMark, environment, foreignCores, settleIo } from './machine.ts';
import { fmtBytes } from './report.ts';
import { writeResultFiles } from './results-file.ts';

const ROOT = resolve(import.meta.dirname, '..');
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.com', GIT_AUTHOR_DATE: '2026-11-22T00:00:00Z', GIT_COMMITTER_DATE: '2026-11-22T00:00:00Z' };

function git(gitDir: string, args: string[], input?: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...args], { env: { ...GIT_ENV, ...env }, encoding: 'utf8', input, maxBuffer: 1 << 30 }).trim();
}

/** A commit on top of `parent` that replaces the given files' contents (plumbing: no work tree). */
function commitChange(gitDir: string, parent: string, files: Record<string, string>, message: string): string {
  const index = join(tmpdir(), `trawl-bench-index-${process.pid}`);
  const env = { GIT_INDEX_FILE: index };
  git(gitDir, ['read-tree', parent], undefined, env);
  for (const [path, text] of Object.entries(files)) {
    const blob = git(gitDir, ['hash-object', '-w', '--stdin'], text);
    git(gitDir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], undefined, env);
  }
  const tree = git(gitDir, ['write-tree'], undefined, env);
  rmSync(index, { force: true });
  return git(gitDir, ['commit-tree', tree, '-p', parent, '-m', message]);
}

function makeRepository(corpus: string, gitDir: string, log: (s: string) => void): void {
  if (existsSync(join(gitDir, 'refs', 'heads', 'main'))) return;
  rmSync(gitDir, { recursive: true, force: true });
  log(`creating ${gitDir} (git add of the whole corpus: a few minutes)`);
  git(gitDir, ['init', '-q', '--bare', '-b', 'main']);
  execFileSync('git', [`--git-dir=${gitDir}`, `--work-tree=${corpus}`, 'add', '-A', '-f', '.'], { env: GIT_ENV, stdio: 'inherit', cwd: corpus });
  const tree = git(gitDir, ['write-tree']);
  const main = git(gitDir, ['commit-tree', tree, '-m', 'corpus']);
  git(gitDir, ['update-ref', 'refs/heads/main', main]);
  // A mirror fetched from a host is packed; `git add` left loose objects.
  log('packing it (a few minutes)');
  git(gitDir, ['repack', '-a', '-d', '-q']);
}

/** Files of the main tree to change: small text files, spread out. */
function pickFiles(gitDir: string, ref: string, n: number, under = ''): string[] {
  const all = git(gitDir, ['ls-tree', '-r', '--name-only', ref, ...(under ? [under] : [])]).split('\n').filter((p) => /\.(c|h|txt|rst)$/.test(p));
  if (all.length <= n) return all;
  const step = Math.floor(all.length / (n + 1));
  return Array.from({ length: n }, (_, i) => all[(i + 1) * step]!);
}

function show(gitDir: string, ref: string, path: string): string {
  return git(gitDir, ['show', `${ref}:${path}`]);
}

interface Build {
  name: string;
  /** The median of `runs`. */
  seconds: number;
  runs: number[];
  peakRssBytes: number | null;
  summary: string;
  indexBytes: number;
  /** Bytes of the branch lists: the shards' branches sections, or the membership files that replace them. */
  branchListBytes: number;
  /** Cores other processes kept busy during the run (machine.ts foreignCores; the highest of the runs). */
  foreignCores: number | null;
}

/** Bytes of the live index (the shard and membership files the manifests name: retired files wait on disk for their grace period) and of its branch lists. */
function indexBytes(dataDir: string): { indexBytes: number; branchListBytes: number } {
  let n = 0;
  let lists = 0;
  for (const m of readAllManifests(dataDir)) {
    const dir = shardsDir(dataDir, m.repoId);
    for (const s of m.shards) {
      n += statSync(join(dir, s.file)).size;
      const membership = 'membership' in s ? s.membership : undefined;
      if (membership) {
        const bytes = statSync(join(dir, membership)).size;
        n += bytes;
        lists += bytes;
      } else {
        const shard = Shard.open(join(dir, s.file));
        lists += shard.sectionBytes.get('branches') ?? 0;
      }
    }
  }
  return { indexBytes: n, branchListBytes: lists };
}

function runIndex(name: string, repo: string, dataDir: string, extra: string[]): Build {
  const rss = join(tmpdir(), `trawl-bench-rss-${process.pid}`);
  const args = ['-o', rss, '-f', '%M', process.execPath, join(ROOT, 'bin/trawl.js'), 'index', repo, '--no-symbols', '--data-dir', dataDir, ...extra];
  const mark = cpuMark();
  const start = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const foreign = foreignCores(mark, cpuMark());
  if (r.status !== 0) throw new Error(`${name}: trawl index failed: ${r.stderr}`);
  const peak = existsSync(rss) ? Number(readFileSync(rss, 'utf8').trim().split('\n').pop()) * 1024 : null;
  const build = { name, seconds, runs: [seconds], peakRssBytes: peak, summary: r.stdout.trim(), ...indexBytes(dataDir), foreignCores: foreign };
  process.stderr.write(`  ${describe(build)}\n`);
  return build;
}

/** Runs `once` n times (run i gets i); the last run's build with the median time of all. */
function repeated(n: number, once: (i: number) => Build): Build {
  const all = Array.from({ length: n }, (_, i) => once(i));
  const runs = all.map((b) => b.seconds);
  const sorted = [...runs].sort((a, b) => a - b);
  const foreign = all.map((b) => b.foreignCores).filter((c): c is number => c !== null);
  return { ...all[n - 1]!, runs, seconds: sorted[Math.floor(n / 2)]!, foreignCores: foreign.length > 0 ? Math.max(...foreign) : null };
}

function describe(b: Build): string {
  return `${b.name.padEnd(16)} ${b.seconds.toFixed(2).padStart(7)} s  ${(b.indexBytes / 1e6).toFixed(1).padStart(8)} MB (branch lists ${(b.branchListBytes / 1e3).toFixed(1)} kB)  rss ${((b.peakRssBytes ?? 0) / 1e6).toFixed(0)} MB  | ${b.summary}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { corpus: { type: 'string' }, out: { type: 'string' }, 'branch-scale': { type: 'string' }, runs: { type: 'string' } } });
  const corpus = resolve(values.corpus ?? join(ROOT, 'corpus', 'linux-6.1'));
  if (!existsSync(corpus)) throw new Error(`no corpus at ${corpus}: run scripts/fetch-linux.sh or pass --corpus DIR`);
  const scale = Number(values['branch-scale'] ?? 1000);
  const runs = Number(values.runs ?? 3);
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const gitDir = `${corpus}.git`;
  makeRepository(corpus, gitDir, log);
  const main = git(gitDir, ['rev-parse', 'refs/heads/main']);
  // Nine branches, three changed files each (recreated every run, so the run is reproducible).
  for (let b = 1; b <= 9; b++) {
    const files = Object.fromEntries(pickFiles(gitDir, main, 3).map((p, i) => [p, `${show(gitDir, main, p)}\n/* branch b${b} change ${i} */\n`]));
    git(gitDir, ['update-ref', `refs/heads/b${b}`, commitChange(gitDir, main, files, `b${b}`)]);
  }
  git(gitDir, ['update-ref', 'refs/heads/main', main]);
  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-repos-'));
  const builds: Build[] = [];
  try {
    const one = join(work, 'one');
    const ten = join(work, 'ten');
    // Full builds alternate between one and ten branches, each into an empty data directory.
    const fulls: Record<string, Build[]> = { 'one-branch': [], 'ten-branch': [] };
    for (let i = 0; i < runs; i++) {
      for (const [name, dir, extra] of [['one-branch', one, []], ['ten-branch', ten, ['--branches', 'b*']]] as const) {
        log(`${name} full build, run ${i + 1} of ${runs}`);
        rmSync(dir, { recursive: true, force: true });
        await settleIo();
        fulls[name]!.push(runIndex(name, gitDir, dir, [...extra]));
      }
    }
    for (const name of ['one-branch', 'ten-branch']) builds.push(repeated(runs, (i) => fulls[name]![i]!));
    log('unchanged re-runs');
    builds.push(repeated(runs, () => runIndex('unchanged', gitDir, one, [])));
    // Each run commits a different change to the same file on main: one new file version.
    const [path] = pickFiles(gitDir, main, 1, 'kernel');
    const original = show(gitDir, main, path!);
    log('one-file changes');
    builds.push(repeated(runs, (i) => {
      git(gitDir, ['update-ref', 'refs/heads/main', commitChange(gitDir, main, { [path!]: `${original}\n/* one-file change ${i} */\n` }, `one file ${i}`)]);
      return runIndex('one-file', gitDir, one, []);
    }));
    git(gitDir, ['update-ref', 'refs/heads/main', main]);

    // Branch scale: a smaller repository, many branches.
    const small = join(work, 'small.git');
    const sub = 'fs/ext4';
    git(small, ['init', '-q', '--bare', '-b', 'main']);
    execFileSync('git', [`--git-dir=${small}`, `--work-tree=${join(corpus, sub)}`, 'add', '-A', '-f', '.'], { env: GIT_ENV, cwd: join(corpus, sub) });
    const smallMain = git(small, ['commit-tree', git(small, ['write-tree']), '-m', 'ext4']);
    git(small, ['update-ref', 'refs/heads/main', smallMain]);
    log(`branch scale: ${scale} branches`);
    const targets = pickFiles(small, smallMain, Math.min(scale, 50));
    const refs: string[] = [];
    for (let b = 0; b < scale; b++) {
      const p = targets[b % targets.length]!;
      refs.push(`create refs/heads/s${b} ${commitChange(small, smallMain, { [p]: `${show(small, smallMain, p)}\n/* scale branch ${b} */\n` }, `s${b}`)}`);
    }
    git(small, ['update-ref', '--stdin'], refs.join('\n') + '\n');
    const scaleData = join(work, 'scale');
    builds.push(runIndex(`${scale}-branches`, small, scaleData, ['--branches', '*']));
    builds.push(runIndex('1-branch-small', small, join(work, 'scale1'), []));
    const searcher = new Searcher({ dataDir: scaleData, workers: 2 });
    const latency: Record<string, number> = {};
    let superC: { results: number; branchesReported: number[] } = { results: 0, branchesReported: [] };
    try {
      for (const q of ['ext4_fill_super', 'ext4_fill_super branch:*', '"scale branch 7" branch:*']) {
        const times: number[] = [];
        for (let i = 0; i < 30; i++) {
          const t = process.hrtime.bigint();
          await searcher.search({ query: q, matches: 100, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false });
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        times.sort((a, b) => a - b);
        latency[q] = times[Math.floor(times.length / 2)]!;
      }
      // super.c changes on some scale branches: one result per version of it, together on every ref.
      const r = await searcher.search({ query: 'ext4_fill_super file:super.c branch:*', matches: 100, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false });
      superC = { results: r.files.length, branchesReported: r.files.map((f) => f.branches.length).sort((a, b) => b - a) };
    } finally {
      await searcher.close();
    }
    const by = Object.fromEntries(builds.map((b) => [b.name, b]));
    const result = {
      date: new Date().toISOString(),
      environment: environment(ROOT),
      corpus,
      builds,
      ratios: {
        tenBranchOverOneBranchTime: by['ten-branch']!.seconds / by['one-branch']!.seconds,
        tenBranchOverOneBranchIndexBytes: by['ten-branch']!.indexBytes / by['one-branch']!.indexBytes,
        oneFileOverFullTime: by['one-file']!.seconds / by['one-branch']!.seconds,
        unchangedOverFullTime: by['unchanged']!.seconds / by['one-branch']!.seconds,
        scaleOverOneBranchTime: by[`${scale}-branches`]!.seconds / by['1-branch-small']!.seconds,
        scaleOverOneBranchIndexBytes: by[`${scale}-branches`]!.indexBytes / by['1-branch-small']!.indexBytes,
      },
      branchScaleSearchMedianMs: latency,
      branchScaleSuperC: superC,
    };
    const out = values.out ?? join(ROOT, 'bench', 'results', `${result.date.slice(0, 10)}-issue4-repos.json`);
    writeResultFiles(out, result, markdown(result, scale, runs));
    for (const b of builds) log(describe(b));
    log(JSON.stringify(result.ratios, null, 2));
    log(JSON.stringify(latency, null, 2));
    log(`super.c with branch:*: ${superC.results} versions, refs each: ${superC.branchesReported.join(' ')}`);
    log(`wrote ${out}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

interface Result {
  date: string;
  environment: ReturnType<typeof environment>;
  corpus: string;
  builds: Build[];
  ratios: Record<string, number>;
  branchScaleSearchMedianMs: Record<string, number>;
  branchScaleSuperC: { results: number; branchesReported: number[] };
}

function markdown(r: Result, scale: number, runs: number): string {
  const e = r.environment;
  const by = Object.fromEntries(r.builds.map((b) => [b.name, b]));
  const x = (v: number) => `${v.toFixed(v < 10 ? 2 : 1)}×`;
  const sec = (b: Build) => `${b.seconds.toFixed(2)} s`;
  const row = (label: string, b: Build) =>
    `| ${label} | ${sec(b)} | ${b.runs.map((t) => t.toFixed(2)).join(' / ')} | ${fmtBytes(b.indexBytes)} | ${fmtBytes(b.branchListBytes)} | ${b.peakRssBytes === null ? '—' : fmtBytes(b.peakRssBytes)} | ${b.foreignCores === null ? '—' : b.foreignCores.toFixed(2)} |`;
  const lines = [
    `### trawl ${e.trawlVersion}: repositories and branches on ${r.corpus.split('/').pop()} — ${r.date.slice(0, 10)}`,
    '',
    `${e.machine.cpuModel}, ${e.machine.cores} cores, ${fmtBytes(e.machine.totalMemoryBytes)} RAM; Node ${e.node}; commit ${e.gitCommit}. Each build is \`trawl index <repo>.git --no-symbols\` in a fresh process (Node start-up included: see the refs-unmoved row); ${runs} runs each, medians; the repository is a packed bare clone of the corpus.`,
    '',
    '| build | median | runs (s) | live index | branch lists | peak RSS | other processes (cores) |',
    '|---|--:|--:|--:|--:|--:|--:|',
    row('one branch, full', by['one-branch']!),
    row('main + 9 branches (3 files changed each), full', by['ten-branch']!),
    row('one branch, refs unmoved', by['unchanged']!),
    row('one branch, one file changed (delta)', by['one-file']!),
    row(`fs/ext4 with ${scale} branches (1 file changed each), full`, by[`${scale}-branches`]!),
    row('fs/ext4, one branch, full', by['1-branch-small']!),
    '',
    `- Ten branches over one: build time ${x(r.ratios.tenBranchOverOneBranchTime!)}, index size ${x(r.ratios.tenBranchOverOneBranchIndexBytes!)} (a file the same on several branches is stored once; each branch adds a posting list).`,
    `- One-file change over a full build: ${x(r.ratios.oneFileOverFullTime!)} of the time (${sec(by['one-file']!)} against ${sec(by['one-branch']!)}); refs unmoved: ${x(r.ratios.unchangedOverFullTime!)}.`,
    `- ${scale} branches over one: build time ${x(r.ratios.scaleOverOneBranchTime!)}, index size ${x(r.ratios.scaleOverOneBranchIndexBytes!)}: the ${scale} changed file versions are new content; the branch lists are ${fmtBytes(by[`${scale}-branches`]!.branchListBytes)}.`,
    '',
    `Searches on the ${scale}-branch index (in-process Searcher, 2 workers, 30 runs, median):`,
    '',
    '| query | p50 |',
    '|---|--:|',
    ...Object.entries(r.branchScaleSearchMedianMs).map(([q, ms]) => `| \`${q.replace(/\|/g, '\\|')}\` | ${ms.toFixed(2)} ms |`),
    '',
    `\`ext4_fill_super file:super.c branch:*\` returns ${r.branchScaleSuperC.results} versions of super.c; the refs reported on each: ${r.branchScaleSuperC.branchesReported.join(', ')}.`,
    '',
  ];
  return lines.join('\n');
}

await main();
