// What the many-repositories phase measures on (phase-many-repos.ts), made before it runs:
//
//   - the corpus: N repositories cut from the run's corpus, or N synthetic tiny ones
//     (many-repos.ts), kept under the cache directory (`--many-dir`) as `<name>/`, so that a
//     second run finds them made (their `.complete` file) instead of making them again;
//   - a view of it in the run's work dir: one symbolic link per repository, except the one
//     whose change is timed, which is copied (the cache is never written to: several runs,
//     or several checkouts, may read it at once). trawl's `git` connection follows the
//     links (`<view>/*`); the peers read the cache itself, whose files are the same;
//   - two configuration files: `sync.json` names the view as a `git` connection;
//     `serve.json` has the same settings and no connection, so that the daemon measured
//     runs no sync pass of its own meanwhile (`trawl sync` is run beside it where a
//     change is timed).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { GIT_ENV, TEXT_FILE } from './git-env.ts';
import { cutTree, repoDirs, tinyRepos, type ManyRepos } from './many-repos.ts';
import { seededRandom } from './stats.ts';

/** A corpus of the phase: `count` repositories cut from the run's corpus, or `count` tiny ones. */
export interface ManySpec {
  kind: 'cut' | 'tiny';
  count: number;
}

/** A `.partial` directory younger than this is taken to be another process making the corpus. */
const PARTIAL_BUSY_MS = 5 * 60_000;

/** The corpus's directory name under the cache: `linux-2000` (cut from `--corpus linux`), `<tree>-N`, `tiny-N`. */
export function manyCorpusName(spec: ManySpec, corpusArg: string, corpusDir: string): string {
  if (spec.kind === 'tiny') return `tiny-${spec.count}`;
  return `${corpusArg === 'linux' ? 'linux' : basename(corpusDir)}-${spec.count}`;
}

/**
 * The corpus under `cacheDir/name`, made now unless an earlier run completed it.
 * Throws when another process seems to be making it (a recent `.partial` beside it):
 * making it here would remove that process's work.
 */
export async function ensureManyCorpus(spec: ManySpec, source: string, dir: string): Promise<{ made: ManyRepos; madeSeconds: number | null }> {
  if (existsSync(join(dir, '.complete'))) {
    const made = JSON.parse(readFileSync(join(dir, '.complete'), 'utf8')) as ManyRepos;
    return { made: { ...made, dir }, madeSeconds: null };
  }
  const partial = `${dir}.partial`;
  if (existsSync(partial) && Date.now() - statSync(partial).mtimeMs < PARTIAL_BUSY_MS) {
    throw new Error(
      `${partial} was written to in the last ${PARTIAL_BUSY_MS / 60_000} minutes: another process seems to be making this corpus; wait for ${dir}/.complete (or remove ${partial} if nothing is)`,
    );
  }
  mkdirSync(dirname(dir), { recursive: true });
  const started = performance.now();
  const made = spec.kind === 'cut' ? await cutTree(source, dir, spec.count) : await tinyRepos(dir, spec.count);
  return { made, madeSeconds: (performance.now() - started) / 1000 };
}

/** The repository whose change is timed: one of `names`, drawn under `seed` (the same one run after run). */
export function changeRepoOf(names: readonly string[], seed: number): string {
  return names[Math.floor(seededRandom(seed)() * names.length)]!;
}

export interface ManyView {
  /** The directory of links (and the one copy) that trawl's connection names: `<reposDir>/*`. */
  reposDir: string;
  repos: string[];
  /** The copied repository, and its path. */
  changeRepo: string;
  changePath: string;
  /** The configuration files. */
  syncConfig: string;
  serveConfig: string;
}

/** Makes the view of `made` under `dir` (module comment). */
export function makeView(made: ManyRepos, dir: string, seed: number, symbols: boolean): ManyView {
  const reposDir = join(dir, 'repos');
  mkdirSync(reposDir, { recursive: true });
  const paths = repoDirs(made);
  const repos = paths.map((p) => basename(p));
  const changeRepo = changeRepoOf(repos, seed);
  for (const [i, p] of paths.entries()) {
    const to = join(reposDir, repos[i]!);
    if (repos[i] === changeRepo) cpSync(p, to, { recursive: true, verbatimSymlinks: true });
    else symlinkSync(p, to, 'dir');
  }
  const settings = { anonymousAccess: true, symbols };
  const syncConfig = join(dir, 'sync.json');
  const serveConfig = join(dir, 'serve.json');
  writeFileSync(syncConfig, JSON.stringify({ connections: { c: { type: 'git', url: `${reposDir}/*` } }, settings }, null, 2));
  writeFileSync(serveConfig, JSON.stringify({ settings }, null, 2));
  return { reposDir, repos, changeRepo, changePath: join(reposDir, changeRepo), syncConfig, serveConfig };
}

/** Appends one line holding `token` to the first text file of the repository at `path` and commits it on its branch; that file. */
export async function commitOneLine(path: string, token: string): Promise<string> {
  const files = readdirSync(path, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
  const file = files.find((f) => TEXT_FILE.test(f)) ?? files[0];
  if (file === undefined) throw new Error(`${path}: no file to change`);
  const abs = join(path, file);
  const text = readFileSync(abs);
  const newline = text.length > 0 && text[text.length - 1] !== 0x0a ? '\n' : '';
  writeFileSync(abs, Buffer.concat([text, Buffer.from(`${newline}${token}\n`)]));
  // Not waited for synchronously: in a large work tree git takes seconds (it refreshes its
  // index), and this process's searches beside the pushes would count them.
  try {
    await promisify(execFile)('git', ['commit', '-q', '-a', '-m', 'one line'], { cwd: path, env: GIT_ENV, encoding: 'utf8' });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`git commit in ${path}: ${e.stderr?.trim() || e.message}`);
  }
  return file;
}
