// Whether a directory is a git repository: a plain file-system check, in a module of its
// own so that callers that only ask (the indexer, before it knows whether it will read git
// at all) do not load nodegit (a noticeable part of a command's start).

import { statSync } from 'node:fs';
import { join } from 'node:path';

/** True for a work tree (with a .git directory or gitfile) or a bare repository. */
export function isGitRepository(dir: string): boolean {
  if (statSync(join(dir, '.git'), { throwIfNoEntry: false }) !== undefined) return true;
  return (
    statSync(join(dir, 'HEAD'), { throwIfNoEntry: false })?.isFile() === true &&
    statSync(join(dir, 'objects'), { throwIfNoEntry: false })?.isDirectory() === true &&
    statSync(join(dir, 'refs'), { throwIfNoEntry: false })?.isDirectory() === true
  );
}

/**
 * The object directory of a repository as git would find it without being told more: a
 * bare repository's `objects`, a work tree's `.git/objects`. Undefined for anything else
 * (a gitfile pointing elsewhere, GIT_OBJECT_DIRECTORY set in its configuration is not
 * read): then the repository is read on its own, by git, which knows.
 */
export function objectsDir(dir: string): string | undefined {
  const dotGit = join(dir, '.git');
  const s = statSync(dotGit, { throwIfNoEntry: false });
  const candidate = s?.isDirectory() === true ? join(dotGit, 'objects') : s === undefined ? join(dir, 'objects') : undefined;
  if (candidate === undefined) return undefined;
  return statSync(candidate, { throwIfNoEntry: false })?.isDirectory() === true ? candidate : undefined;
}
