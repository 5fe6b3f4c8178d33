// Re-indexing (`--reindex`): what branches and an incremental run cost, asked on
// every release. The corpus's files become a bare git repository in the
// work dir (one commit on main, ignore rules bypassed, packed like a fetched mirror), with
// nine branches b1..b9 that each change three files (plumbing only: no work tree). Then,
// each `runs` times, `trawl index REPO --no-symbols` in a child process under GNU time:
//   full       main alone into an empty data dir;
//   branches   main and the nine branches (--branches 'b*') into an empty data dir;
//   unchanged  the full build's index again, no ref moved (no tree is read);
//   oneFile    after a commit on main that changes one file: the delta run (one new file
//              version, membership files for the old shards).
// Then the same repository through `trawl sync`, as a configured source (targets.ts
// syncOneLineSeconds: a one-line change searchable soon after the sync starts): `first` into an
// empty data dir (main only: a full build), then `runs` times (at least 3) `oneLine`, after a commit on
// main that appends one line to one file, checked searchable when the sync returns.
// Node's start-up is in every figure, as an operator sees it: `unchanged` is about that.

import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTimed } from './build.ts';
import { GIT_ENV, TEXT_FILE } from './git-env.ts';
import { liveIndex } from './live-index.ts';
import { cpuMark, foreignCores, settleIo } from './machine.ts';
import type { ReindexBuild, ReindexPhase } from './result.ts';
import { assertSearchable, timeTrawl } from './trawl-process.ts';

export interface ReindexPhaseOptions {
  root: string;
  corpus: string;
  work: string;
  runs: number;
  /** Bytes of the corpus's files (corpus.ts), recorded for the full builds' MB/s. */
  corpusBytes: number;
}

const BRANCHES = 9;
const FILES_PER_BRANCH = 3;

function git(gitDir: string, args: string[], input?: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...args], { env: { ...GIT_ENV, ...env }, encoding: 'utf8', input, maxBuffer: 1 << 30 }).trim();
}

/** The corpus as a bare repository with one commit on main; returns that commit. Also the cluster phase's repository (phase-cluster.ts). */
export function makeRepository(corpus: string, gitDir: string, work: string): string {
  git(gitDir, ['init', '-q', '--bare', '-b', 'main']);
  // -f: a tree may ship a .gitignore that ignores much of itself (Debian's Linux source does).
  const index = { GIT_INDEX_FILE: join(work, 'reindex.index') };
  execFileSync('git', [`--git-dir=${gitDir}`, `--work-tree=${corpus}`, 'add', '-A', '-f', '.'], {
    env: { ...GIT_ENV, ...index },
    cwd: corpus,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const tree = git(gitDir, ['write-tree'], undefined, index);
  rmSync(index.GIT_INDEX_FILE, { force: true });
  const main = git(gitDir, ['commit-tree', tree, '-m', 'corpus']);
  git(gitDir, ['update-ref', 'refs/heads/main', main]);
  git(gitDir, ['repack', '-a', '-d', '-q']);
  return main;
}

/** A commit on `parent` that appends a line to each of `paths` (no work tree). */
function commitChange(gitDir: string, work: string, parent: string, paths: string[], mark: string): string {
  const env = { GIT_INDEX_FILE: join(work, 'reindex.index') };
  git(gitDir, ['read-tree', parent], undefined, env);
  for (const path of paths) {
    const blob = git(gitDir, ['hash-object', '-w', '--stdin'], `${git(gitDir, ['show', `${parent}:${path}`])}\n/* ${mark} */\n`);
    git(gitDir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], undefined, env);
  }
  const tree = git(gitDir, ['write-tree'], undefined, env);
  rmSync(env.GIT_INDEX_FILE, { force: true });
  return git(gitDir, ['commit-tree', tree, '-p', parent, '-m', mark]);
}

/** `n` text files of the commit, spread over its tree (evenly spaced in path order). */
function pickFiles(gitDir: string, commit: string, n: number): string[] {
  const all = git(gitDir, ['ls-tree', '-r', '--name-only', commit])
    .split('\n')
    .filter((p) => p !== '');
  const text = all.filter((p) => TEXT_FILE.test(p));
  const from = text.length > 0 ? text : all;
  if (from.length <= n) return from;
  const step = Math.floor(from.length / (n + 1));
  return Array.from({ length: n }, (_, i) => from[(i + 1) * step]!);
}

export async function reindexPhase(o: ReindexPhaseOptions, log: (s: string) => void): Promise<ReindexPhase> {
  const gitDir = join(o.work, 'reindex.git');
  const started = performance.now();
  const main = makeRepository(o.corpus, gitDir, o.work);
  // The same three files on every branch, each branch with its own change to them.
  const changed = pickFiles(gitDir, main, FILES_PER_BRANCH);
  for (let b = 1; b <= BRANCHES; b++) git(gitDir, ['update-ref', `refs/heads/b${b}`, commitChange(gitDir, o.work, main, changed, `branch b${b}`)]);
  log(`reindex the corpus as a bare git repository with main and ${BRANCHES} branches (${((performance.now() - started) / 1000).toFixed(1)} s)`);

  const mark = cpuMark();
  const samples: Record<keyof ReindexPhase['builds'], number[]> = { full: [], branches: [], unchanged: [], oneFile: [] };
  const last: Partial<Record<keyof ReindexPhase['builds'], Omit<ReindexBuild, 'secondsSamples'>>> = {};
  const index = (name: keyof ReindexPhase['builds'], dataDir: string, extra: string[]) => {
    const t = runTimed(
      process.execPath,
      [join(o.root, 'bin', 'trawl.js'), 'index', gitDir, '--no-symbols', '--data-dir', dataDir, ...extra],
      process.env,
      join(o.work, 'reindex.rss'),
    );
    samples[name].push(t.seconds);
    const live = liveIndex(dataDir);
    last[name] = { peakRssBytes: t.peakRssBytes, indexBytes: live.indexBytes, branchListBytes: live.branchListBytes, contentBytes: live.contentBytes };
    log(
      `reindex ${name}: ${t.seconds.toFixed(2)} s, live index ${(last[name].indexBytes / 1e6).toFixed(1)} MB (branch lists ${(last[name].branchListBytes / 1e3).toFixed(1)} KB)`,
    );
  };
  const full = join(o.work, 'reindex-full');
  const branches = join(o.work, 'reindex-branches');
  // Full builds alternate, each into an empty data dir once the disk is quiet.
  for (let i = 0; i < o.runs; i++) {
    for (const [name, dir, extra] of [
      ['full', full, []],
      ['branches', branches, ['--branches', 'b*']],
    ] as const) {
      rmSync(dir, { recursive: true, force: true });
      await settleIo();
      index(name, dir, [...extra]);
    }
  }
  rmSync(branches, { recursive: true, force: true });
  for (let i = 0; i < o.runs; i++) index('unchanged', full, []);
  // Each run commits a different change to the same file: one new file version each time.
  const [path] = pickFiles(gitDir, main, 1);
  for (let i = 0; i < o.runs; i++) {
    git(gitDir, ['update-ref', 'refs/heads/main', commitChange(gitDir, o.work, main, [path!], `one-file change ${i + 1}`)]);
    index('oneFile', full, []);
  }
  rmSync(full, { recursive: true, force: true });
  const sync = await syncRuns(o, gitDir, path!, log);
  const cores = foreignCores(mark, cpuMark());
  const build = (name: keyof ReindexPhase['builds']): ReindexBuild => ({ secondsSamples: samples[name].map((s) => Math.round(s * 1e4) / 1e4), ...last[name]! });
  return {
    branches: BRANCHES + 1,
    changedFilesPerBranch: FILES_PER_BRANCH,
    builds: { full: build('full'), branches: build('branches'), unchanged: build('unchanged'), oneFile: build('oneFile') },
    corpusBytes: o.corpusBytes,
    sync,
    foreignCores: cores === null ? null : Math.round(cores * 100) / 100,
  };
}

/**
 * The repository as a configured source of `trawl sync` (a connection naming it directly:
 * a local repository is read in place), first into an empty data dir, then after each of
 * `runs` (at least 3) one-line commits on main to `path`.
 */
async function syncRuns(o: ReindexPhaseOptions, gitDir: string, path: string, log: (s: string) => void): Promise<NonNullable<ReindexPhase['sync']>> {
  const config = join(o.work, 'reindex-sync.json');
  const dataDir = join(o.work, 'reindex-sync');
  writeFileSync(config, JSON.stringify({ settings: { symbols: false }, connections: { bench: { type: 'git', url: gitDir } } }, null, 2));
  const args = ['sync', '--config', config, '--data-dir', dataDir];
  await settleIo();
  const first = timeTrawl(o.root, args);
  log(`reindex trawl sync, first: ${first.toFixed(2)} s`);
  // The first sync's index on disk before the timed ones, as for the builds.
  await settleIo();
  const oneLine: number[] = [];
  // At least three: the target is a median, and a run is short.
  for (let i = 1; i <= Math.max(3, o.runs); i++) {
    const mark = `trawl_bench_sync_one_line_${i}`;
    git(gitDir, ['update-ref', 'refs/heads/main', commitChange(gitDir, o.work, git(gitDir, ['rev-parse', 'refs/heads/main']), [path], mark)]);
    oneLine.push(timeTrawl(o.root, args));
    assertSearchable(o.root, dataDir, mark);
    log(`reindex trawl sync after a one-line change: ${oneLine.at(-1)!.toFixed(2)} s`);
  }
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(config, { force: true });
  return { first: { secondsSamples: [first] }, oneLine: { secondsSamples: oneLine } };
}
