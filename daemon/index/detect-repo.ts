// What an index run is of, found before it takes anything: the path must be a directory
// this process may read (else `cannot index <path>: <why>`); a git repository is opened at
// its selected refs, anything else is indexed as a plain directory. What was found
// (DetectedRepo) is what the caller names and registers the repository by (indexer.ts
// RegisterRepo); a local path's metadata is made from it (localRepoMeta).

import { accessSync, constants, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { isGitRepository } from '../repos/git-dir.ts';
import type { GitSource, RevisionSelection } from '../repos/git.ts';
import type { CodeHostType } from '../repos/hosts/types.ts';
import { displayName } from '../repos/web-urls.ts';
import type { ManifestRepo } from './manifest.ts';

/** What the indexer found out about the source, for the caller to name and register it. */
export interface DetectedRepo {
  name: string;
  codeHostType: CodeHostType;
  kind: 'git' | 'directory';
  source: string;
  remoteUrl?: string;
  defaultBranch: string;
  /** Git: the default branch tip's commit time (GitSource.committedAt). */
  committedAt?: string;
}

/** The path to index, opened: its absolute root, and its git source when it is a git repository (the caller closes it). */
export interface OpenedSource {
  root: string;
  git: GitSource | undefined;
}

/** Checks the directory at `pathArg` and opens it as a git repository at `revisions` when it is one. */
export async function openSource(pathArg: string, revisions: RevisionSelection | undefined): Promise<OpenedSource> {
  const root = resolve(pathArg);
  checkDirectory(pathArg, root);
  if (!isGitRepository(root)) return { root, git: undefined };
  try {
    // Loaded on demand: a plain directory's build never needs nodegit.
    const { openGitSource } = await import('../repos/git.ts');
    return { root, git: await openGitSource(root, revisions) };
  } catch (err) {
    throw new Error(`cannot index ${pathArg}: ${(err as Error).message}`);
  }
}

/** What the opened source tells of the repository. */
export function detectRepo({ root, git }: OpenedSource): DetectedRepo {
  return git
    ? {
        name: git.name,
        codeHostType: git.codeHostType,
        kind: 'git',
        source: root,
        defaultBranch: git.branch,
        ...(git.remoteUrl ? { remoteUrl: git.remoteUrl } : {}),
        ...(git.committedAt ? { committedAt: git.committedAt } : {}),
      }
    : { name: basename(root), codeHostType: 'genericGitHost', kind: 'directory', source: root, defaultBranch: 'HEAD' };
}

function checkDirectory(pathArg: string, root: string): void {
  let st;
  try {
    st = statSync(root);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot index ${pathArg}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message}`,
    );
  }
  if (!st.isDirectory()) throw new Error(`cannot index ${pathArg}: not a directory`);
  try {
    accessSync(root, constants.R_OK | constants.X_OK);
  } catch {
    throw new Error(`cannot index ${pathArg}: permission denied`);
  }
}

/** Metadata of a repository indexed from a local path (`trawl index`): public, not archived, not a fork. */
export function localRepoMeta(d: DetectedRepo, name = d.name): ManifestRepo {
  const repo: ManifestRepo = {
    name,
    displayName: displayName(name),
    codeHostType: d.codeHostType,
    archived: false,
    fork: false,
    visibility: 'public',
    kind: d.kind,
    source: d.source,
  };
  if (d.committedAt) repo.committedAt = d.committedAt;
  return repo;
}
