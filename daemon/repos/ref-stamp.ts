// A repository's refs as a stamp: what its ref files are on disk (identity, size, times),
// not what they say. A sync compares it with the stamp recorded when the repository was
// last indexed; the same stamp means the same refs, so an unchanged repository costs a few
// stat calls instead of opening it (git writes every ref change through a new file renamed
// into place: `refs/heads/<name>`, `packed-refs`, `HEAD`, and adding or removing a loose
// ref changes its directory). A different stamp only means "look": the refs themselves
// then decide whether anything is built.
//
// A stamp lists the ref paths it stated, so that the next sync can check it by stating them
// again, without reading a directory (sameRefStamp).
//
// No stamp (undefined) for what this cannot see: a work tree whose `.git` is a file (a
// linked work tree or a submodule), or a repository storing its refs in a reftable.

import { readdirSync, statSync, type BigIntStats } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

/** Loose refs read past this many: a repository with that many is stamped no faster than read; no stamp. */
const MAX_LOOSE = 10_000;

/**
 * A stamp lists the ref paths it stated (after its hash, a line each) when they are at most
 * this many, so that the next sync can state them again without reading a directory
 * (sameRefStamp): on 2,000 repositories the directory reads were most of the stamps' time.
 */
const PATHS_LISTED = 64;

/**
 * The stamp of the refs of the repository at `dir` (bare, or a work tree with a `.git`
 * directory), with `salt` (what else decides the refs indexed: the revision selection);
 * undefined when it cannot be stamped.
 */
export function refStamp(dir: string, salt: string): string | undefined {
  const gitDir = stampedGitDir(dir);
  if (gitDir === undefined) return undefined;
  const hash = stampHash(gitDir, salt);
  const paths: string[] = [];
  let loose = 0;
  const walk = (rel: string): boolean => {
    const abs = join(gitDir, rel);
    const st = statSync(abs, { bigint: true, throwIfNoEntry: false });
    hash.add(rel, st);
    paths.push(rel);
    if (st === undefined || !st.isDirectory()) return true;
    for (const e of readdirSync(abs).sort()) {
      if (++loose > MAX_LOOSE) return false;
      if (!walk(`${rel}/${e}`)) return false;
    }
    return true;
  };
  if (!walk('refs/heads') || !walk('refs/tags')) return undefined;
  const digest = hash.digest();
  return paths.length <= PATHS_LISTED ? [digest, ...paths].join('\n') : digest;
}

/**
 * Whether `recorded` (a stamp refStamp made) is still the repository's, checked by stating
 * the paths it lists, and HEAD and packed-refs, without reading a directory: a directory
 * that gained or lost an entry has another stat, so when every stat is the one recorded, a
 * walk would list the same paths and give the same stamp. False means "stamp it again"
 * (something moved, or the stamp lists no paths), never "nothing moved".
 */
export function sameRefStamp(dir: string, salt: string, recorded: string): boolean {
  const [digest, ...paths] = recorded.split('\n');
  if (paths.length === 0) return false;
  const gitDir = stampedGitDir(dir);
  if (gitDir === undefined) return false;
  const hash = stampHash(gitDir, salt);
  for (const rel of paths) hash.add(rel, statSync(join(gitDir, rel), { bigint: true, throwIfNoEntry: false }));
  return hash.digest() === digest;
}

/** The git directory whose refs are stamped; undefined for a gitfile (linked work tree, submodule) or a reftable. */
function stampedGitDir(dir: string): string | undefined {
  const dotGit = statSync(join(dir, '.git'), { bigint: true, throwIfNoEntry: false });
  if (dotGit !== undefined && !dotGit.isDirectory()) return undefined;
  const gitDir = dotGit !== undefined ? join(dir, '.git') : dir;
  if (statSync(join(gitDir, 'reftable'), { throwIfNoEntry: false }) !== undefined) return undefined;
  return gitDir;
}

/** The stamp's hash: the salt, HEAD and packed-refs, then each ref path added in the walk's order. */
function stampHash(gitDir: string, salt: string): { add(name: string, st: BigIntStats | undefined): void; digest(): string } {
  const hash = createHash('sha256').update(salt).update('\0');
  const add = (name: string, st: BigIntStats | undefined) =>
    hash.update(st === undefined ? `${name}:-\n` : `${name}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}\n`);
  for (const name of ['HEAD', 'packed-refs']) add(name, statSync(join(gitDir, name), { bigint: true, throwIfNoEntry: false }));
  return { add, digest: () => hash.digest('hex').slice(0, 32) };
}
