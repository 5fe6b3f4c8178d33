// One CodeHost per configured connection: resolves the token from the environment, picks
// the implementation by type, and applies what every host shares after listing: the
// connection's excludes (forks, archived, name globs), one entry per repoName, sorted, and
// the rule for web page URLs (web-urls.ts isWebUrl): what a host answers is not trusted, so
// a page URL that is not http(s) is left out, logged. Clone URLs are checked by the sync,
// before fetching (clone-url.ts).

import type { Connection, Excludes } from '../../config/types.ts';
import { createAzureDevOpsHost } from './azuredevops.ts';
import { createBitbucketHost } from './bitbucket.ts';
import { createGerritHost } from './gerrit.ts';
import { createGitHost } from './git.ts';
import { createGitHubHost } from './github.ts';
import { createGitLabHost } from './gitlab.ts';
import { createGiteaHost } from './gitea.ts';
import type { HostContext, TransportOptions } from './http.ts';
import type { CodeHost, HostRepo } from './types.ts';
import { HostError } from './types.ts';
import { compilePathGlob } from '../glob.ts';
import { isWebUrl } from '../web-urls.ts';
import { silentLogger, type Logger } from '../../runtime/logger.ts';

export { HostError } from './types.ts';
export type { AccountCredential, CodeHost, GitCredentials, HostAccount, HostErrorKind, HostPermissions, HostRepo } from './types.ts';
export type { FetchLike, Sleep } from './http.ts';

export interface CodeHostOptions extends TransportOptions {
  /** Where `{ "env": NAME }` tokens are read; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Where a URL left out of a host's answer is reported. */
  log?: Logger;
}

/**
 * The CodeHost of connection `name`. Throws HostError('unauthorized') when the token's
 * environment variable is unset or empty: listing anonymously instead would quietly drop
 * every private repository.
 */
export function createCodeHost(name: string, connection: Connection, options: CodeHostOptions = {}): CodeHost {
  const { env = process.env, log = silentLogger, ...transport } = options;
  if (connection.type === 'git') return sortedUnique(name, createGitHost(name, connection), log);

  const ctx: HostContext = { name, transport };
  if (connection.token !== undefined) {
    const variable = connection.token.env;
    const value = env[variable];
    if (value === undefined || value === '') {
      throw new HostError('unauthorized', `connection "${name}": environment variable ${variable} is not set`);
    }
    ctx.token = value;
    ctx.tokenEnv = variable;
  }

  let host: CodeHost;
  switch (connection.type) {
    case 'github':
      host = createGitHubHost(connection, ctx);
      break;
    case 'gitlab':
      host = createGitLabHost(connection, ctx);
      break;
    case 'gitea':
      host = createGiteaHost(connection, ctx);
      break;
    case 'gerrit':
      host = createGerritHost(connection, ctx, matchGlob);
      break;
    case 'bitbucket':
      host = createBitbucketHost(connection, ctx);
      break;
    case 'azuredevops':
      host = createAzureDevOpsHost(connection, ctx);
      break;
  }
  return sortedUnique(name, host, log, connection.exclude);
}

/** `host` with its list filtered by `exclude`, deduplicated and sorted, and its web page URLs checked. */
function sortedUnique(connection: string, host: CodeHost, log: Logger, exclude?: Excludes): CodeHost {
  return {
    type: host.type,
    async listRepos(signal) {
      const repos = await host.listRepos(signal);
      return dedupeAndSort(exclude === undefined ? repos : filterRepos(repos, exclude)).map((r) => withWebUrlChecked(connection, r, log));
    },
    gitCredentials: () => host.gitCredentials(),
    ...(host.permissions ? { permissions: host.permissions } : {}),
  };
}

/** `repo` without its externalWebUrl when that is not an http(s) URL (a `javascript:` link would run in the web UI). */
function withWebUrlChecked(connection: string, repo: HostRepo, log: Logger): HostRepo {
  if (repo.externalWebUrl === undefined || isWebUrl(repo.externalWebUrl)) return repo;
  log.warn(
    { connection, repo: repo.repoName, url: repo.externalWebUrl.slice(0, 200) },
    'the host gave the repository a web page URL that is not http(s); it is left out',
  );
  const { externalWebUrl: _left, ...rest } = repo;
  return rest;
}

/** The repositories `exclude` keeps: no forks / archived ones when asked, none whose displayName matches a glob. */
export function filterRepos(repos: HostRepo[], exclude: Excludes): HostRepo[] {
  const globs = exclude.repos.map(compilePathGlob);
  return repos.filter((r) => !(exclude.forks && r.isFork) && !(exclude.archived && r.isArchived) && !globs.some((g) => g.test(r.displayName)));
}

/** One entry per repoName (the first listed wins: a repository reached twice is the same one), sorted by repoName. */
export function dedupeAndSort(repos: HostRepo[]): HostRepo[] {
  const byName = new Map<string, HostRepo>();
  for (const r of repos) if (!byName.has(r.repoName)) byName.set(r.repoName, r);
  return [...byName.values()].sort((a, b) => (a.repoName < b.repoName ? -1 : a.repoName > b.repoName ? 1 : 0));
}

/** Whether `name` matches `glob`, case-insensitively. */
export function matchGlob(glob: string, name: string): boolean {
  return compilePathGlob(glob).test(name);
}
