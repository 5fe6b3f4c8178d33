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
  /** The host's topics (labels) of the repository, lower-case, as the host lists them; absent when the host has none. */
  topics?: string[];
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
  /** Who may read what on the host, for the permission sync; absent for hosts without accounts (`git`). */
  readonly permissions?: HostPermissions;
}

/** An account on a code host, as the host's permission answers name it. */
export interface HostAccount {
  /** The host's stable id of the account (a number or a UUID on most hosts), as a string: logins can be renamed, ids cannot. */
  id: string;
  /** The account's user name as the host shows it. */
  login: string;
  /** An email address the host says is the account's and verified, lower-case; absent when the host does not say. */
  email?: string;
}

/** The account to ask for, and how to ask as it. */
export interface AccountCredential {
  account: HostAccount;
  /**
   * The account's own token on the host (from a member's sign-in with the host, or one
   * they linked). Absent: the connection's token acts for the account where the host
   * lets an administrator do that (GitLab and Gitea `sudo`, Gerrit run-as).
   */
  token?: string;
}

/**
 * What a code host says about who may read what: the permission sync (permissions/)
 * asks it account-driven (what can this account read?) and repository-driven (who can
 * read this repository?). Every method follows the host's pagination and waits out its
 * rate limits like listRepos, and throws HostError when it cannot answer completely: a
 * partial list must never be taken for the truth, or a permission would be dropped (or
 * kept) by mistake.
 */
export interface HostPermissions {
  /**
   * Account-driven: every repository the account can read on the host, as HostRepo.repoName,
   * without duplicates, in any order; repositories outside the connection's selection may
   * be among them. Undefined when the host can be asked only with the account's own token
   * and `who` has none.
   */
  readableBy(who: AccountCredential, signal?: AbortSignal): Promise<string[] | undefined>;
  /**
   * Repository-driven: every account that can read the repository's code (named by its
   * HostRepo.displayName), without duplicates; undefined when the host keeps no such
   * list that the connection's token can read.
   */
  readersOf(displayName: string, signal?: AbortSignal): Promise<HostAccount[] | undefined>;
  /** The account with this login (case-insensitive where the host is); undefined when there is none. */
  accountByLogin(login: string, signal?: AbortSignal): Promise<HostAccount | undefined>;
  /** The account a token belongs to (the host's "current user"): how a member's own token is linked. Throws HostError('unauthorized') for a token the host refuses. */
  accountOfToken(token: string, signal?: AbortSignal): Promise<HostAccount>;
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
