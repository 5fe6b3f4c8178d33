// Whole-process timings (their targets: targets.ts): what an operator waits for when a
// `trawl` command runs, each from spawn to exit with Node's start-up included, `runs` times:
//   help    `trawl --help`: start-up and argument parsing, the floor under every command;
//   search  `trawl search LITERAL --data-dir D`, the CLI searching a data dir in process (no
//           daemon) over a small index: every k-th text file of the corpus in path order,
//           SMALL_INDEX_CONTENT_BYTES of content (an index of the target's size), or all of a
//           smaller corpus; LITERAL is the query mix's first plain-identifier literal with a
//           match there (a search that finds nothing skips most of the work);
//   sync    `trawl sync --config F` of a git repository of the corpus's first 190 text files
//           after a commit that appends one line to one file (`first`: its first sync, a
//           full build, once).
// help and search run once untimed before their timed runs, so that every timed run finds
// trawl's code and the shards in the page cache, as a command typed again does. The timed
// runs start once the builds' writes have reached the disk. A run during which the
// compiled build was not current (sources edited meanwhile: the command ran through tsx)
// is counted, for a note: its figure is not a release's.

import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, copyFileSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { listFiles } from './corpus.ts';
import { GIT_ENV, TEXT_FILE } from './git-env.ts';
import { liveIndex } from './live-index.ts';
import { cpuMark, foreignCores, settleIo } from './machine.ts';
import { median } from './percentiles.ts';
import type { BenchQuery } from './queries.ts';
import type { CommandSearch, CommandsPhase } from './result.ts';
import { assertSearchable, freshCheck, matchCount, timeTrawl } from './trawl-process.ts';

export interface CommandsPhaseOptions {
  root: string;
  corpus: string;
  work: string;
  /** Timed runs of each command. */
  runs: number;
  /** Index the small index with symbols (the run's --no-symbols). */
  symbols: boolean;
}

/** Content of the small index: what makes an index of the size targets.ts's searchSeconds names, at Linux's size ratio. */
const SMALL_INDEX_CONTENT_BYTES = 45e6;
/** Files of the sync target's repository. */
const REPO_FILES = 190;
/** Larger files are left out of the copies (generated tables, firmware): text as people write it. */
const MAX_FILE_BYTES = 1 << 20;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The candidates for the search timing: the mix's literals that are plain identifiers, in order. */
export function searchLiterals(queries: readonly BenchQuery[]): BenchQuery[] {
  return queries.filter((q) => q.kind.endsWith('-literal') && !q.regex && IDENTIFIER.test(q.query));
}

/** The first of `candidates` with a match in the data dir (a search that finds nothing skips the work a search does); else the first. */
function literalWithMatches(root: string, dataDir: string, candidates: BenchQuery[]): { query: BenchQuery; matches: number } | undefined {
  let first: { query: BenchQuery; matches: number } | undefined;
  for (const q of candidates) {
    const matches = matchCount(root, dataDir, q.query, q.caseSensitive);
    if (matches > 0) return { query: q, matches };
    first ??= { query: q, matches };
  }
  return first;
}

/** A NUL byte in the first 8 KB: what git and most tools call binary. */
function looksBinary(path: string): boolean {
  const buf = Buffer.alloc(8192);
  const fd = openSync(path, 'r');
  try {
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).includes(0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies text files of the corpus in path order into `dest` until `maxBytes` of content or
 * `maxFiles` files (`only`: which names count); `spread`: every k-th file, k chosen so that
 * the copy samples the whole corpus instead of its first directories. Returns what it copied.
 */
function copyFiles(
  corpus: string,
  dest: string,
  limits: { maxBytes: number; maxFiles: number; only?: RegExp; spread?: boolean },
): { files: string[]; bytes: number } {
  let candidates = listFiles(corpus).filter((rel) => !limits.only || limits.only.test(rel));
  if (limits.spread) {
    const total = candidates.reduce((n, rel) => n + statSync(join(corpus, rel)).size, 0);
    const stride = Math.max(1, Math.floor(total / limits.maxBytes));
    candidates = candidates.filter((_, i) => i % stride === 0);
  }
  const files: string[] = [];
  let bytes = 0;
  for (const rel of candidates) {
    if (bytes >= limits.maxBytes || files.length >= limits.maxFiles) break;
    const from = join(corpus, rel);
    const size = statSync(from).size;
    if (size > MAX_FILE_BYTES || looksBinary(from)) continue;
    mkdirSync(dirname(join(dest, rel)), { recursive: true });
    copyFileSync(from, join(dest, rel));
    files.push(rel);
    bytes += size;
  }
  return { files, bytes };
}

function git(repo: string, args: string[]): void {
  execFileSync('git', ['-C', repo, ...args], { env: GIT_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The small index's data dir, built; what it holds. */
function buildSmallIndex(o: CommandsPhaseOptions, tree: string, dataDir: string): CommandSearch['index'] {
  copyFiles(o.corpus, tree, { maxBytes: SMALL_INDEX_CONTENT_BYTES, maxFiles: Infinity, spread: true });
  const seconds = timeTrawl(o.root, ['index', tree, '--data-dir', dataDir, ...(o.symbols ? [] : ['--no-symbols'])]);
  const live = liveIndex(dataDir);
  return { files: live.files, contentBytes: live.contentBytes, indexBytes: live.indexBytes, symbols: o.symbols, seconds };
}

/** A non-bare repository of the corpus's first text files (any files when it has none), one commit on main; its files. */
function makeRepository(corpus: string, repo: string): string[] {
  let { files } = copyFiles(corpus, repo, { maxBytes: Infinity, maxFiles: REPO_FILES, only: TEXT_FILE });
  if (files.length === 0) files = copyFiles(corpus, repo, { maxBytes: Infinity, maxFiles: REPO_FILES }).files;
  git(repo, ['init', '-q', '-b', 'main']);
  // -f: the copy may hold a .gitignore that ignores some of it.
  git(repo, ['add', '-A', '-f', '.']);
  git(repo, ['commit', '-q', '-m', 'corpus']);
  return files;
}

/** The phase's figures, and how many of its commands may have run from stale sources. */
export interface CommandsOutcome {
  phase: CommandsPhase;
  staleRuns: number;
}

export async function commandsPhase(o: CommandsPhaseOptions, queries: readonly BenchQuery[], log: (s: string) => void): Promise<CommandsOutcome> {
  const dir = join(o.work, 'commands');
  const fresh = await freshCheck(o.root);
  let staleRuns = 0;
  const trawl = (args: string[]) => {
    const before = fresh();
    const seconds = timeTrawl(o.root, args);
    if (!before || !fresh()) staleRuns++;
    return seconds;
  };
  const timed = (args: string[]) => Array.from({ length: o.runs }, () => trawl(args));
  const ms = (xs: number[]) => `${(median(xs) * 1000).toFixed(0)} ms`;
  try {
    // The builds first, so that their writes are on disk before anything is timed.
    const candidates = searchLiterals(queries);
    const smallData = join(dir, 'small-data');
    const index = candidates.length > 0 ? buildSmallIndex(o, join(dir, 'small-tree'), smallData) : undefined;
    const chosen = index ? literalWithMatches(o.root, smallData, candidates) : undefined;
    const literal = chosen?.query;
    if (index)
      log(
        `commands small index: ${index.files} files, ${(index.contentBytes / 1e6).toFixed(1)} MB of content, index ${(index.indexBytes / 1e6).toFixed(1)} MB (${index.seconds.toFixed(1)} s)`,
      );
    else log('commands the query mix has no plain-identifier literal: no search timing');

    const repos = join(dir, 'repos');
    const repo = join(repos, 'bench');
    const files = makeRepository(o.corpus, repo);
    const config = join(dir, 'trawl.json');
    writeFileSync(config, JSON.stringify({ settings: { symbols: false }, connections: { bench: { type: 'git', url: `${repos}/*` } } }, null, 2));
    const syncData = join(dir, 'sync-data');
    const syncArgs = ['sync', '--config', config, '--data-dir', syncData];
    const first = trawl(syncArgs);
    log(`commands a git repository of ${files.length} files, first sync ${first.toFixed(2)} s`);
    await settleIo();

    const mark = cpuMark();
    trawl(['--help']);
    const help = timed(['--help']);
    log(`commands trawl --help: ${ms(help)} (median of ${o.runs})`);

    let search: CommandSearch | null = null;
    if (literal && index) {
      const args = ['search', literal.query, ...(literal.caseSensitive ? ['--case'] : []), '--data-dir', smallData];
      trawl(args);
      search = { query: literal.query, caseSensitive: literal.caseSensitive, matches: chosen!.matches, index, secondsSamples: timed(args) };
      log(
        `commands trawl search ${literal.query}: ${ms(search.secondsSamples)} on ${(index.indexBytes / 1e6).toFixed(1)} MB of index (${chosen!.matches} matches)`,
      );
    }

    // Each run appends a line of its own to the same file: one changed file per sync.
    const changed = join(repo, files[Math.floor(files.length / 2)]!);
    const oneFile: number[] = [];
    let token = '';
    for (let i = 1; i <= o.runs; i++) {
      token = `trawl_bench_one_file_change_${i}`;
      const last = readFileSync(changed).at(-1);
      appendFileSync(changed, `${last === undefined || last === 0x0a ? '' : '\n'}${token}\n`);
      git(repo, ['commit', '-q', '-a', '-m', `one-file change ${i}`]);
      oneFile.push(trawl(syncArgs));
    }
    assertSearchable(o.root, syncData, token);
    log(`commands trawl sync after a one-file change: ${ms(oneFile)}`);
    const cores = foreignCores(mark, cpuMark());
    return {
      phase: {
        runs: o.runs,
        help: { secondsSamples: help },
        search,
        sync: { files: files.length, first: { secondsSamples: [first] }, oneFile: { secondsSamples: oneFile } },
        foreignCores: cores === null ? null : Math.round(cores * 100) / 100,
      },
      staleRuns,
    };
  } finally {
    // The copies are the size of a small corpus: gone before the next phases.
    rmSync(dir, { recursive: true, force: true });
  }
}
