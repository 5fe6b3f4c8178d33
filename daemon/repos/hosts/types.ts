// The seam between trawl and a code host (docs/design.md): one CodeHost per
// connection lists the repositories the connection selects, with their metadata, and says
// how git authenticates against the host. Every type runs the same shared test suite
// (test/hosts/) against a fake server on loopback.

/**
 * The kinds of code host a repository lives on: a connection's type, with Bitbucket's two
 * editions told apart, and any other git server as genericGitHost. The API's schemas
 * enumerate this list (http/schemas/).
 */
export const CODE_HOST_TYPES = ['github', 'gitlab', 'gitea', 'gerrit', 'bitbucketServer', 'bitbucketCloud', 'genericGitHost', 'azuredevops'] as const;
export type CodeHostType = (typeof CODE_HOST_TYPES)[number];

export interface HostRepo {
  /** host/path form, lower-case host: "github.example.com/platform/api". Unique per host. */
  repoName: string;
  /** The host's own name for it: "platform/api", "group/sub/proj", "PROJ/repo". */
  displayName: string;
  codeHostType: CodeHostType;
  /**
   * What git fetches from: the host's http(s) clone URL as the host returns it, which the
   * sync checks before fetching (clone-url.ts); a `git` connection's path or URL.
   */
  cloneUrl: string;
  /**
   * The host's page of the repository, an http(s) URL (web-urls.ts isWebUrl; createCodeHost
   * drops any other). File URLs are built from it. Absent: no page to link to.
   */
  externalWebUrl?: string;
  /** Undefined when the host does not say (e.g. an empty repository). */
  defaultBranch?: string;
  isFork: boolean;
  isArchived: boolean;
  visibility: 'public' | 'private';
  /** ISO 8601, when the host reports the last push / activity. */
  pushedAt?: string;
  /** Avatar of the owner, when the host gives one. */
  imageUrl?: string;
}

export interface GitCredentials {
  username: string;
  password: string;
}

export interface CodeHost {
  readonly type: CodeHostType;
  /**
   * Every repository the connection selects, after its excludes (forks, archived, name
   * globs), sorted by repoName, without duplicates. Follows the host's pagination and
   * waits out its rate-limit responses (up to a bound). Throws HostError when the host
   * cannot be listed completely: a partial list must never be mistaken for the truth,
   * or the sync would delete the repositories it missed.
   */
  listRepos(signal?: AbortSignal): Promise<HostRepo[]>;
  /** Basic-auth credentials git uses to fetch over http(s); undefined: anonymous. */
  gitCredentials(): GitCredentials | undefined;
}

export type HostErrorKind = 'unreachable' | 'unauthorized' | 'forbidden' | 'not-found' | 'rate-limited' | 'bad-response';

/** A failure to list a host, with a reason an operator can act on. */
export class HostError extends Error {
  readonly kind: HostErrorKind;
  /** When the host said when to come back (rate limits), epoch milliseconds. */
  readonly retryAt?: number;
  constructor(kind: HostErrorKind, message: string, retryAt?: number) {
    super(message);
    this.name = 'HostError';
    this.kind = kind;
    if (retryAt !== undefined) this.retryAt = retryAt;
  }
}
