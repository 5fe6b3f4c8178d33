// Open nodegit repository handles for the browsing and history readers, kept between
// requests: opening a repository reads its config and ref storage, and libgit2 keeps
// object and pack caches on the handle, so a warm handle answers much faster. At most
// MAX_OPEN handles stay open (least recently used first out); an evicted handle's caches
// and pack file descriptors are released (repo.cleanup()) once no call is using it.
import { resolve } from 'node:path';
import NodeGit from 'nodegit';
import { isGitRepository } from './git-dir.ts';

const MAX_OPEN = 16;

interface Entry {
  opened: Promise<NodeGit.Repository>;
  /** Calls running with this handle. */
  users: number;
  /** Out of the cache: clean up when the last user is done. */
  evicted: boolean;
}

// A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
const open = new Map<string, Entry>();

/**
 * Runs `fn` with an open handle on the repository at `dir` (a work tree or a bare
 * repository), opening it or reusing the cached handle. Throws a plain Error (no
 * path in its message) when `dir` is missing or is not a git repository.
 */
export async function withRepository<T>(dir: string, fn: (repo: NodeGit.Repository) => Promise<T>): Promise<T> {
  const key = resolve(dir);
  let entry = open.get(key);
  if (entry !== undefined) {
    open.delete(key);
    open.set(key, entry);
  } else {
    entry = { opened: openRepository(key), users: 0, evicted: false };
    open.set(key, entry);
    evictOverflow();
  }
  const current = entry;
  current.users++;
  try {
    let repo: NodeGit.Repository;
    try {
      repo = await current.opened;
    } catch (err) {
      // Not cached as a failure: the directory may become a repository (a first clone).
      if (open.get(key) === current) open.delete(key);
      throw err;
    }
    return await fn(repo);
  } finally {
    current.users--;
    if (current.evicted && current.users === 0) void release(current);
  }
}

/** Closes every cached handle (those in use are closed when their calls finish). */
export async function closeAllRepositories(): Promise<void> {
  const entries = [...open.values()];
  open.clear();
  await Promise.all(
    entries.map(async (e) => {
      e.evicted = true;
      if (e.users === 0) await release(e);
    }),
  );
}

/**
 * Runs `fn` with a handle of its own, opened for the call and released after it, for
 * long native calls. nodegit locks a repository handle for each call that takes it, so
 * a blame (libgit2's takes seconds on long histories, and cannot be interrupted) on the
 * shared handle would hold up every other request on the repository until it ends. At
 * most MAX_LONG_CALLS run at once (the others wait their turn): nodegit runs every
 * native call of the process on a pool of 10 threads, which they must not fill.
 */
export async function withOwnRepository<T>(dir: string, fn: (repo: NodeGit.Repository) => Promise<T>): Promise<T> {
  if (longCalls >= MAX_LONG_CALLS) await new Promise<void>((go) => waiting.push(go));
  else longCalls++;
  try {
    const repo = await openRepository(resolve(dir));
    try {
      return await fn(repo);
    } finally {
      await repo.cleanup().catch(() => undefined);
    }
  } finally {
    // The slot passes straight to the next waiter, if any.
    const next = waiting.shift();
    if (next !== undefined) next();
    else longCalls--;
  }
}

const MAX_LONG_CALLS = 2;
let longCalls = 0;
const waiting: Array<() => void> = [];

async function openRepository(dir: string): Promise<NodeGit.Repository> {
  // git_repository_open does not search parent directories, but it would open a work
  // tree's subdirectory that holds a .git file; isGitRepository checks the shape first.
  if (!isGitRepository(dir)) throw new Error('not a git repository (or it does not exist)');
  try {
    return await NodeGit.Repository.open(dir);
  } catch (err) {
    throw new Error('cannot open the git repository', { cause: err });
  }
}

function evictOverflow(): void {
  for (const [key, e] of open) {
    if (open.size <= MAX_OPEN) break;
    open.delete(key);
    e.evicted = true;
    if (e.users === 0) void release(e);
  }
}

async function release(e: Entry): Promise<void> {
  try {
    await (await e.opened).cleanup();
  } catch {
    // Never opened (nothing to release), or cleanup failed: the handle is dropped either way.
  }
}
