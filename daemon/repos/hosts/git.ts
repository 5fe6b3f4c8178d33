// Connection type `git`: repositories named directly, no host API.
//
// `url` is one of
//   - a local path, absolute or relative to the working directory, with optional globs:
//     `*` and `?` within one path segment, `**` for any number of segments
//     (`/srv/repos/*`, `/srv/**/app.git`); globs do not match names starting with '.'
//     unless the pattern segment does, as in a shell;
//   - a file:// URL of such a path;
//   - a remote clone URL: http(s)://, ssh://, git:// or scp-like `user@host:path`.
// Local candidates are kept when they are git repositories (work trees or bare). Each is
// named from its `origin` remote when it has one (repoNameFromRemote: "github.com/org/app"),
// else by its directory name without ".git"; a remote URL is named by repoNameFromRemote.
// The clone URL is the absolute path or the URL itself; the web URL is the URL without
// ".git" for remote ones, and none for local repositories (a file:// link is no page a
// browser opens from the web UI, and only http(s) pages are served: web-urls.ts isWebUrl).
// Nothing says who may see these repositories, so they are public: the operator chose to
// index them.

import { readdir, stat } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GitConnection } from '../../config/types.ts';
import { isGitRepository } from '../git-dir.ts';
import { readPlainHead } from '../plain-head.ts';
import { repoNameFromRemote } from '../git.ts';
import { compileNameGlob, hasNameGlob } from '../glob.ts';
import { displayName } from '../web-urls.ts';
import type { CodeHost, HostRepo } from './types.ts';
import { HostError } from './types.ts';
import { compact, redact } from './http.ts';

export function createGitHost(name: string, conn: GitConnection): CodeHost {
  return {
    type: 'genericGitHost',
    async listRepos() {
      const url = conn.url.trim();
      let repos: HostRepo[];
      if (/^file:\/\//i.test(url)) repos = await listLocal(name, fileURLToPath(url));
      else if (isRemote(url)) repos = [remoteRepo(name, url)];
      else repos = await listLocal(name, url);
      // No host says who may read: the connection does.
      return conn.visibility === 'private' ? repos.map((r) => ({ ...r, visibility: 'private' as const })) : repos;
    },
    gitCredentials() {
      return undefined; // credentials, if any, are part of the URL git is given
    },
  };
}

function isRemote(url: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return true;
  // scp-like syntax: a colon before the first slash, more than a drive letter before it.
  return /^(?:[^@/]+@)?[^:/]{2,}:/.test(url) && !isAbsolute(url);
}

function remoteRepo(connection: string, url: string): HostRepo {
  const named = repoNameFromRemote(url);
  if (named === undefined) {
    throw new HostError('not-found', `connection "${connection}": ${redact(url)} names no repository (no path after the host)`);
  }
  const web = /^https?:\/\//i.test(url)
    ? redact(url)
        .replace(/\/+$/, '')
        .replace(/\.git$/, '')
    : `https://${named.name}`; // ssh and git URLs have no page; assume the host serves one over https
  return {
    repoName: named.name,
    displayName: displayName(named.name),
    codeHostType: named.codeHostType,
    cloneUrl: url,
    externalWebUrl: web,
    isFork: false,
    isArchived: false,
    visibility: 'public',
  };
}

/** Local repositories read at once while listing (libuv's thread pool runs four). */
const LOCAL_READS = 8;

async function listLocal(connection: string, path: string): Promise<HostRepo[]> {
  const abs = resolve(path);
  const dirs = (await expandGlob(connection, abs)).filter((dir) => isGitRepository(dir));
  // Read a few at a time: each is a wait on libgit2's threads, and a glob may name thousands.
  const repos: HostRepo[] = new Array(dirs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(LOCAL_READS, dirs.length) }, async () => {
      while (next < dirs.length) {
        const k = next++;
        repos[k] = await localRepo(dirs[k]!);
      }
    }),
  );
  if (!hasNameGlob(abs) && repos.length === 0) {
    throw new HostError('not-found', `connection "${connection}": ${abs} is not a git repository`);
  }
  return repos;
}

async function localRepo(dir: string): Promise<HostRepo> {
  const { origin, branch } = readPlainHead(dir) ?? (await readRepository(dir));
  const named = origin === undefined ? undefined : repoNameFromRemote(origin);
  const repoName = named?.name ?? basename(dir).replace(/\.git$/, '');
  return compact<HostRepo>({
    repoName,
    displayName: displayName(repoName),
    codeHostType: named?.codeHostType ?? 'genericGitHost',
    cloneUrl: dir,
    defaultBranch: branch,
    isFork: false,
    isArchived: false,
    visibility: 'public',
  });
}

/** The origin remote's URL and the branch HEAD names, through libgit2 (which follows gitfiles, worktrees and includes): what readPlainHead answers where it can. */
export async function readRepository(dir: string): Promise<{ origin?: string; branch?: string }> {
  const { default: NodeGit } = await import('nodegit');
  let repo: Awaited<ReturnType<typeof NodeGit.Repository.open>>;
  try {
    repo = await NodeGit.Repository.open(dir);
  } catch {
    return {}; // looks like a repository but libgit2 cannot open it: name it by its directory
  }
  try {
    const out: { origin?: string; branch?: string } = {};
    try {
      const url = (await NodeGit.Remote.lookup(repo, 'origin')).url();
      if (url !== '') out.origin = url;
    } catch {
      // no remote named origin
    }
    if (repo.headUnborn() !== 1 && repo.headDetached() !== 1) {
      try {
        out.branch = (await repo.head()).shorthand();
      } catch {
        // HEAD unreadable: leave the branch to the sync
      }
    }
    return out;
  } finally {
    repo.cleanup().catch(() => {});
  }
}

/**
 * Every directory matching `pattern` (absolute), sorted. A pattern without globs is
 * itself. Throws when the fixed part before the first glob does not exist, so that a
 * missing mount is an error rather than an empty list (which would remove every
 * repository the connection had).
 */
async function expandGlob(connection: string, pattern: string): Promise<string[]> {
  const segments = pattern.split(sep).filter((s) => s !== '');
  const first = segments.findIndex((s) => hasNameGlob(s));
  const root = sep + segments.slice(0, first < 0 ? segments.length : first).join(sep);
  const info = await stat(root).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) {
    throw new HostError('not-found', `connection "${connection}": ${root} does not exist or is not a directory`);
  }
  if (first < 0) return [root];
  const found = new Set<string>();
  await walk(root, segments.slice(first), found);
  return [...found].sort();
}

async function walk(dir: string, rest: string[], found: Set<string>): Promise<void> {
  if (rest.length === 0) {
    found.add(dir);
    return;
  }
  const [seg, ...tail] = rest as [string, ...string[]];
  if (seg === '**') {
    await walk(dir, tail, found); // zero segments
    // A repository's own directories are its data or its work tree, never further
    // repositories worth descending into.
    if (isGitRepository(dir)) return;
    for (const child of await subdirectories(dir, false)) {
      if (!child.startsWith('.')) await walk(join(dir, child), rest, found);
    }
    return;
  }
  if (!hasNameGlob(seg)) {
    const next = join(dir, seg);
    if ((await stat(next).catch(() => undefined))?.isDirectory()) await walk(next, tail, found);
    return;
  }
  const re = compileNameGlob(seg);
  for (const child of await subdirectories(dir, true)) {
    if (re.test(child) && (seg.startsWith('.') || !child.startsWith('.'))) await walk(join(dir, child), tail, found);
  }
}

/** Names of the subdirectories of `dir`; symbolic links to directories only when asked (`**` must not loop). */
async function subdirectories(dir: string, followLinks: boolean): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const e of entries) {
    if (e.isDirectory()) names.push(e.name);
    else if (followLinks && e.isSymbolicLink() && (await stat(join(dir, e.name)).catch(() => undefined))?.isDirectory()) {
      names.push(e.name);
    }
  }
  return names.sort();
}
