// Many-repositories corpora: what a company's installation looks like (hundreds to tens of
// thousands of repositories), made from a source tree or from nothing.
//
// cutTree: one git repository per directory of a tree that directly holds at least three
// regular files (its files only, not its subdirectories), `count` of them spread evenly
// over the directories in path order; a repository is named after its directory with `/`
// turned into `-` (`drivers/net/ethernet/intel/e1000` → `drivers-net-ethernet-intel-e1000`).
// A cut into one repository is the whole tree, named after it: the one large repository
// beside the many small ones (one directory of the tree alone would measure neither).
// tinyRepos: `count` synthetic repositories of a few small files each, deterministic.
//
// Each repository is a working tree (so that csearch and rg read the same files) with one
// commit on `main`, made by git fast-import (one pack per repository: a few ms each,
// where `git add` and `git commit` would read every file twice more).

import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { listFiles } from './corpus.ts';
import { GIT_ENV } from './git-env.ts';
import { seededRandom } from './stats.ts';

/** Directories holding fewer regular files than this are not cut into repositories. */
const MIN_FILES = 3;

/** A directory of the tree that becomes a repository: its path and its files' names. */
export interface CutDir {
  dir: string;
  files: string[];
}

/** The directories of `root` directly holding at least MIN_FILES regular files, in path byte order. */
export function directoriesWithFiles(root: string): CutDir[] {
  const out: CutDir[] = [];
  const walk = (rel: string): void => {
    const files: string[] = [];
    const dirs: string[] = [];
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (e.isDirectory()) {
        // Not .git, nor any hidden directory: a repository named with a leading dot is one
        // that a connection's `*` glob, like a shell's, does not match.
        if (!e.name.startsWith('.')) dirs.push(e.name);
      } else if (e.isFile()) files.push(e.name);
    }
    if (files.length >= MIN_FILES) out.push({ dir: rel, files: files.sort() });
    for (const d of dirs) walk(rel === '' ? d : `${rel}/${d}`);
  };
  walk('');
  return out.sort((a, b) => Buffer.compare(Buffer.from(a.dir), Buffer.from(b.dir)));
}

/** `count` of `all` spread evenly (every one when there are fewer). */
export function spread<T>(all: T[], count: number): T[] {
  if (count >= all.length) return all;
  return Array.from({ length: count }, (_, i) => all[Math.floor((i * all.length) / count)]!);
}

/** The repository name of a directory of the tree. */
export function repoNameOf(dir: string): string {
  return dir === '' ? 'root' : dir.replaceAll('/', '-');
}

/** One commit on `main` holding `files` (name → bytes) in the git repository at `path` (made here). */
async function commitFiles(path: string, files: Array<[string, Buffer]>): Promise<void> {
  mkdirSync(path, { recursive: true });
  const stream: Buffer[] = [Buffer.from('commit refs/heads/main\ncommitter trawl bench <bench@trawl.invalid> 1767225600 +0000\ndata 6\ncorpus\n')];
  for (const [name, bytes] of files) stream.push(Buffer.from(`M 100644 inline ${name}\ndata ${bytes.length}\n`), bytes, Buffer.from('\n'));
  await run('git', ['init', '-q', '-b', 'main', path], path);
  await run('git', ['fast-import', '--quiet'], path, Buffer.concat(stream));
  // The index, so that `git status` in the tree is clean.
  await run('git', ['read-tree', 'main'], path);
}

function run(cmd: string, args: string[], cwd: string, input?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: GIT_ENV, stdio: [input ? 'pipe' : 'ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args[0]} in ${cwd}: ${err.trim() || `exit ${code}`}`))));
    if (input) child.stdin!.end(input);
  });
}

/** Runs `jobs` with at most `parallel` at once. */
async function inParallel(jobs: Array<() => Promise<void>>, parallel: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, jobs.length) }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

export interface ManyRepos {
  /** The directory holding the repositories, one per entry. */
  dir: string;
  repos: number;
  files: number;
  bytes: number;
}

/**
 * Makes (or finds, when a previous call completed it: its `.complete` file) `count`
 * repositories cut from `tree` under `outDir`.
 */
export async function cutTree(tree: string, outDir: string, count: number, parallel = 4): Promise<ManyRepos> {
  const done = join(outDir, '.complete');
  if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as ManyRepos;
  const work = `${outDir}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const counted = count === 1 ? await wholeTree(tree, work) : await cutDirectories(tree, work, count, parallel);
  const made: ManyRepos = { dir: outDir, ...counted };
  rmSync(outDir, { recursive: true, force: true });
  renameSync(work, outDir);
  writeFileSync(done, JSON.stringify(made));
  return made;
}

/** `count` repositories, one per directory chosen (module comment), made under `work`. */
async function cutDirectories(tree: string, work: string, count: number, parallel: number): Promise<Omit<ManyRepos, 'dir'>> {
  const chosen = spread(directoriesWithFiles(tree), count);
  let files = 0;
  let bytes = 0;
  await inParallel(
    chosen.map((c) => async () => {
      const path = join(work, repoNameOf(c.dir));
      const contents: Array<[string, Buffer]> = c.files.map((f) => [f, readFileSync(join(tree, c.dir, f))]);
      mkdirSync(path, { recursive: true });
      for (const f of c.files) copyFileSync(join(tree, c.dir, f), join(path, f));
      await commitFiles(path, contents);
      files += contents.length;
      for (const [, b] of contents) bytes += b.length;
    }),
    parallel,
  );
  return { repos: chosen.length, files, bytes };
}

/**
 * The whole tree as one repository under `work`: every regular file, committed by git
 * itself, which reads them one at a time (fast-import's stream, made in memory as
 * commitFiles makes it, would hold a tree the size of Linux twice), then packed as a clone
 * would be.
 */
async function wholeTree(tree: string, work: string): Promise<Omit<ManyRepos, 'dir'>> {
  const path = join(work, basename(resolve(tree)));
  let bytes = 0;
  const files = listFiles(tree);
  mkdirSync(path, { recursive: true });
  for (const f of files) {
    mkdirSync(dirname(join(path, f)), { recursive: true });
    copyFileSync(join(tree, f), join(path, f));
    bytes += statSync(join(path, f)).size;
  }
  await run('git', ['init', '-q', '-b', 'main', path], path);
  // -f: a tree may ship a .gitignore that ignores some of itself (Debian's Linux source does).
  await run('git', ['add', '-A', '-f', '.'], path);
  // No automatic gc: it would pack the same objects in the background, beside the repack.
  await run('git', ['-c', 'gc.auto=0', 'commit', '-q', '-m', 'corpus'], path);
  await run('git', ['repack', '-a', '-d', '-q'], path);
  return { repos: 1, files: files.length, bytes };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'qu', 'ba', 'do', 'fi', 'gu', 'ho', 'ja'];

/** An identifier made of syllables: about 16 bits of entropy per three syllables, so names repeat across repositories as real ones do. */
function word(next: () => number, syllables: number): string {
  let w = '';
  for (let i = 0; i < syllables; i++) w += SYLLABLES[Math.floor(next() * SYLLABLES.length)]!;
  return w;
}

/** A small C-like source file of `lines` lines. */
function sourceFile(next: () => number, repo: number, lines: number): string {
  const out: string[] = [`/* repository ${repo} */`, '#include <stdio.h>', ''];
  while (out.length < lines) {
    const name = `${word(next, 3)}_${word(next, 2)}`;
    out.push(
      `static int ${name}(int ${word(next, 2)}, const char *${word(next, 2)})`,
      '{',
      `\treturn ${word(next, 3)}(${Math.floor(next() * 1000)});`,
      '}',
      '',
    );
  }
  return `${out.join('\n')}\n`;
}

/**
 * Makes (or finds) `count` tiny repositories under `outDir`: three files each (a README
 * and two sources of 20 to 60 lines), about 3 KB a repository.
 */
export async function tinyRepos(outDir: string, count: number, parallel = 4): Promise<ManyRepos> {
  const done = join(outDir, '.complete');
  if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as ManyRepos;
  const work = `${outDir}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  let files = 0;
  let bytes = 0;
  const width = String(count - 1).length;
  await inParallel(
    Array.from({ length: count }, (_, r) => async () => {
      const next = seededRandom(r + 1);
      const name = `tiny-${String(r).padStart(width, '0')}`;
      const contents: Array<[string, Buffer]> = [
        ['README.md', Buffer.from(`# ${name}\n\nThe ${word(next, 3)} service.\n`)],
        [`${word(next, 2)}.c`, Buffer.from(sourceFile(next, r, 20 + Math.floor(next() * 40)))],
        [`${word(next, 2)}_util.c`, Buffer.from(sourceFile(next, r, 20 + Math.floor(next() * 40)))],
      ];
      const path = join(work, name);
      mkdirSync(path, { recursive: true });
      for (const [f, b] of contents) writeFileSync(join(path, f), b);
      await commitFiles(path, contents);
      files += contents.length;
      for (const [, b] of contents) bytes += b.length;
    }),
    parallel,
  );
  const made: ManyRepos = { dir: outDir, repos: count, files, bytes };
  rmSync(outDir, { recursive: true, force: true });
  renameSync(work, outDir);
  writeFileSync(done, JSON.stringify(made));
  return made;
}

/** The repositories' directories under a corpus made here. */
export function repoDirs(corpus: ManyRepos): string[] {
  return readdirSync(corpus.dir)
    .filter((n) => !n.startsWith('.') && statSync(join(corpus.dir, n)).isDirectory())
    .sort()
    .map((n) => join(corpus.dir, n));
}
