// The oracle of `type:diff` (history/diff-search.ts): git itself. `git log -G` lists the
// commits whose diff adds or removes a matching line; for one side only (select:), the
// added and removed lines are read from `git log -p` (default context, its own parse here,
// not the daemon's).

import { execFileSync } from 'node:child_process';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

function run(repo: string, args: string[]): Buffer {
  return execFileSync('git', ['-C', repo, ...args], { env: { ...ENV, HOME: repo }, maxBuffer: 1024 * 1024 * 1024 });
}

/** A literal as a POSIX extended regular expression (git -G's syntax). */
export function ereEscape(literal: string): string {
  return literal.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/** `git log --format=%H -G<regex> [-i] <tips>`: the ids, as a sorted list. */
export function gitLogG(repo: string, regex: string, caseSensitive: boolean, tips: readonly string[]): string[] {
  const out = run(repo, ['log', '--format=%H', `-G${regex}`, ...(caseSensitive ? [] : ['-i']), ...tips, '--']).toString('utf8');
  return out
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

export interface OracleCommit {
  added: string[];
  removed: string[];
}

/** Each commit's added and removed lines, from `git log -p` over `tips` (merges without a diff, as git shows them). */
export function gitLogLines(repo: string, tips: readonly string[]): Map<string, OracleCommit> {
  const out = run(repo, ['log', '-p', '--no-color', '--format=%x01%H', ...tips, '--']).toString('utf8');
  const commits = new Map<string, OracleCommit>();
  let current: OracleCommit | undefined;
  let inHunk = false;
  for (const line of out.split('\n')) {
    if (line.startsWith('\x01')) {
      current = { added: [], removed: [] };
      commits.set(line.slice(1), current);
      inHunk = false;
    } else if (line.startsWith('diff --git ')) inHunk = false;
    else if (line.startsWith('@@ ')) inHunk = true;
    else if (inHunk && current !== undefined && line.startsWith('+')) current.added.push(line.slice(1));
    else if (inHunk && current !== undefined && line.startsWith('-')) current.removed.push(line.slice(1));
  }
  return commits;
}

/** The commits with an added (or removed, or either) line holding `literal` (ASCII case folding when not case-sensitive), sorted. */
export function commitsWithLine(lines: Map<string, OracleCommit>, literal: string, caseSensitive: boolean, select?: 'added' | 'removed'): string[] {
  const fold = (s: string): string => (caseSensitive ? s : s.replace(/[A-Z]/g, (c) => c.toLowerCase()));
  const needle = fold(literal);
  const out: string[] = [];
  for (const [id, c] of lines) {
    const side = select === 'added' ? c.added : select === 'removed' ? c.removed : [...c.added, ...c.removed];
    if (side.some((l) => fold(l).includes(needle))) out.push(id);
  }
  return out.sort();
}

/** Identifiers and other strings found in the lines: the queries a differential test draws from. */
export function wordsOf(lines: Map<string, OracleCommit>): string[] {
  const words = new Set<string>();
  for (const c of lines.values()) for (const l of [...c.added, ...c.removed]) for (const m of l.matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)) words.add(m[0]);
  return [...words].sort();
}
