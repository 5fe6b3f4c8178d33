// Repository benchmark (issue 4): what several branches and incremental re-indexing cost.
//
//   node --import tsx bench/repos.ts [--corpus DIR] [--out FILE] [--branch-scale N]
//
// Makes a bare git repository of the corpus (every file, ignore rules bypassed: Debian's
// linux-source tree ships a .gitignore that ignores everything) (default: the Linux 6.1 tree fetched by
// scripts/fetch-linux.sh) beside it, `<corpus>.git`, once: one commit on main, then nine
// branches that each change three files. Then, each build in a fresh child process
// (`trawl index --no-symbols`, wall time and peak RSS):
//   one-branch   a full build of main
//   ten-branch   a full build of main and the nine branches
//   unchanged    the one-branch index again, refs unmoved
//   one-file     the one-branch index after a commit that changes one file on main
// and a branch-scale run: a small repository (the corpus's fs/ext4 directory) with N branches (default 1000) that each change one file, indexed with
// --branches '*', with the index size and the latency of a `branch:*` search.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { shardsDir } from '../daemon/index/data-dir.ts';
import { readAllManifests } from '../daemon/index/manifest.ts';
import { Shard } from '../daemon/index/shard-reader.ts';
import { Searcher } from '../daemon/search/searcher.ts';
import { environment } from './machine.ts';

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
  seconds: number;
  peakRssBytes: number | null;
  summary: string;
  indexBytes: number;
  /** Bytes of the branch lists: the shards' branches sections, or the membership files that replace them. */
  branchListBytes: number;
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
  const start = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (r.status !== 0) throw new Error(`${name}: trawl index failed: ${r.stderr}`);
  const peak = existsSync(rss) ? Number(readFileSync(rss, 'utf8').trim().split('\n').pop()) * 1024 : null;
  const build = { name, seconds, peakRssBytes: peak, summary: r.stdout.trim(), ...indexBytes(dataDir) };
  process.stderr.write(`  ${describe(build)}\n`);
  return build;
}

function describe(b: Build): string {
  return `${b.name.padEnd(16)} ${b.seconds.toFixed(2).padStart(7)} s  ${(b.indexBytes / 1e6).toFixed(1).padStart(8)} MB (branch lists ${(b.branchListBytes / 1e3).toFixed(1)} kB)  rss ${((b.peakRssBytes ?? 0) / 1e6).toFixed(0)} MB  | ${b.summary}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { corpus: { type: 'string' }, out: { type: 'string' }, 'branch-scale': { type: 'string' } } });
  const corpus = resolve(values.corpus ?? join(ROOT, 'corpus', 'linux-6.1'));
  if (!existsSync(corpus)) throw new Error(`no corpus at ${corpus}: run scripts/fetch-linux.sh or pass --corpus DIR`);
  const scale = Number(values['branch-scale'] ?? 1000);
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
    log('one-branch full build');
    builds.push(runIndex('one-branch', gitDir, one, []));
    log('ten-branch full build');
    builds.push(runIndex('ten-branch', gitDir, ten, ['--branches', 'b*']));
    log('unchanged re-run');
    builds.push(runIndex('unchanged', gitDir, one, []));
    const [path] = pickFiles(gitDir, main, 1, 'kernel');
    git(gitDir, ['update-ref', 'refs/heads/main', commitChange(gitDir, main, { [path!]: `${show(gitDir, main, path!)}\n/* one-file change */\n` }, 'one file')]);
    log('one-file change');
    builds.push(runIndex('one-file', gitDir, one, []));
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
    mkdirSync(join(out, '..'), { recursive: true });
    writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
    for (const b of builds) log(describe(b));
    log(JSON.stringify(result.ratios, null, 2));
    log(JSON.stringify(latency, null, 2));
    log(`super.c with branch:*: ${superC.results} versions, refs each: ${superC.branchesReported.join(' ')}`);
    log(`wrote ${out}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
