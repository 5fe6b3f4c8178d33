// The configuration file's shape (docs/configuration.md "The configuration file"), as the
// loader returns it after validation against trawl.schema.json and after defaults are
// applied. The JSON Schema is the authority on what a file may contain; these types mirror
// it.

/** A secret is never written in the file: it names an environment variable. */
export interface SecretRef {
  env: string;
}

/** What to index of each repository. The default branch is always indexed. */
export interface Revisions {
  /** Branch name globs (`*` within a segment, `**` across segments). */
  branches: string[];
  /** Tag name globs. */
  tags: string[];
}

export interface Excludes {
  forks: boolean;
  archived: boolean;
  /** Globs over the host's repository path ("org/name", "group/sub/proj", ...). */
  repos: string[];
}

interface ConnectionBase {
  revisions: Revisions;
  /** Also index every commit the indexed refs reach (history/history-index.ts); absent: off. */
  history?: true;
  /** The secret webhook deliveries (or a git server's push notices) of this connection are verified with (webhooks/); absent: they are refused. */
  webhookSecret?: SecretRef;
}

/** Local paths (globs allowed), file:// URLs, or http(s):// clone URLs. */
export interface GitConnection extends ConnectionBase {
  type: 'git';
  url: string;
  /** Git has no host to ask who may read: public, or private (grants open it under "code-host"). */
  visibility: 'public' | 'private';
}

interface HostConnectionBase extends ConnectionBase {
  /** The host's web URL (defaults per type: https://github.com, https://gitlab.com, ...). */
  url: string;
  token?: SecretRef;
  exclude: Excludes;
  /**
   * Origins ("https://git.example.com:8443") the host's clone URLs may name besides the
   * origin of `url` (repos/hosts/clone-url.ts), as URL's `origin` writes them; absent: none.
   * Never for Gerrit, whose clone URLs trawl builds from `url` itself.
   */
  cloneOrigins?: string[];
}

export interface GitHubConnection extends HostConnectionBase {
  type: 'github';
  orgs: string[];
  users: string[];
  /** "owner/name" */
  repos: string[];
}

export interface GitLabConnection extends HostConnectionBase {
  type: 'gitlab';
  /** Groups, subgroups included ("group" or "group/sub"). */
  groups: string[];
  users: string[];
  /** "group/sub/project" */
  projects: string[];
}

export interface GiteaConnection extends HostConnectionBase {
  type: 'gitea';
  orgs: string[];
  users: string[];
  repos: string[];
}

export interface GerritConnection extends HostConnectionBase {
  type: 'gerrit';
  /** Project name globs; empty: every project the host lists. */
  projects: string[];
  /** HTTP user for authenticated access (with `token` as its HTTP password). */
  user?: string;
}

export interface BitbucketConnection extends HostConnectionBase {
  type: 'bitbucket';
  deploymentType: 'cloud' | 'server';
  /** Cloud: the account the app password / token belongs to (basic auth); server: optional. */
  user?: string;
  /** Cloud only. */
  workspaces: string[];
  /** Server: project keys; cloud: "workspace/PROJECTKEY". */
  projects: string[];
  /** Server: "PROJ/slug"; cloud: "workspace/slug". */
  repos: string[];
}

export interface AzureDevOpsConnection extends HostConnectionBase {
  type: 'azuredevops';
  orgs: string[];
  /** "org/project" */
  projects: string[];
  /** "org/project/repo" */
  repos: string[];
}

export type HostConnection = GitHubConnection | GitLabConnection | GiteaConnection | GerritConnection | BitbucketConnection | AzureDevOpsConnection;

export type Connection = GitConnection | HostConnection;
export type ConnectionType = Connection['type'];

/**
 * Which repositories a member sees: "all", or "code-host": what their code host lets them
 * read, what is public on its host, and what the configuration's permissions grant them.
 */
export type PermissionsMode = 'all' | 'code-host';

/** A grant: the users and the members of the groups it names may read the repositories its globs match. */
export interface PermissionGrant {
  groups: string[];
  /** Emails, lower case. */
  users: string[];
  /** Globs over repository names. */
  repos: string[];
}

export interface PermissionsConfig {
  /** Group name → its members' emails, lower case. */
  groups: Record<string, string[]>;
  grants: PermissionGrant[];
}

/** What a search context selects: a repository matches when it matches one entry of one list. */
export interface ContextSelection {
  /** Globs over repository names (`*` within a `/`-separated part, `**` across), without regard to case. */
  repos: string[];
  /** Connection names (keys of Config.connections). */
  connections: string[];
  /** Code-host topics, lower case. */
  topics: string[];
}

/**
 * A search context (docs/identity.md "Search contexts"): the repositories that match
 * `include` (every repository when it is absent) and not `exclude`.
 */
export interface SearchContextDefinition {
  description?: string;
  include?: ContextSelection;
  exclude?: ContextSelection;
}

/** A member's role (the store's Role, named here for the configuration's defaultRole). */
export type MemberRole = 'owner' | 'member';

interface SignInProviderBase {
  clientId: string;
  clientSecret: SecretRef;
  /** What the sign-in button says: "Sign in with <displayName>". */
  displayName: string;
  /** The scopes asked for (defaults filled in: config/sign-in.ts DEFAULT_SCOPES). */
  scopes: string[];
}

/** Any OpenID Connect provider, found through its discovery document. */
export interface OidcSignInProvider extends SignInProviderBase {
  type: 'oidc';
  /** The issuer identifier, exactly as its discovery document gives it. */
  issuer: string;
}

/** The OAuth app of a GitHub or GitLab host. */
export interface HostSignInProvider extends SignInProviderBase {
  type: 'github' | 'gitlab';
  /** The host's web URL, without a trailing "/". */
  url: string;
  /** A connection of the same type and host: the account of who signs in is linked to their member (permissions). */
  connection?: string;
}

export type SignInProvider = OidcSignInProvider | HostSignInProvider;

/** Single sign-on of the web UI (docs/identity.md "Single sign-on"). */
export interface SignInConfig {
  /** Provider name (part of the sign-in URLs) → provider; empty: API keys only. */
  providers: Record<string, SignInProvider>;
  /** Lower case; absent: people of any email domain may be provisioned. */
  allowedDomains?: string[];
  /** The role of a member provisioned at their first sign-in. */
  defaultRole: MemberRole;
  /** Just-in-time provisioning: a person the store does not know becomes a member at their first sign-in. */
  provision: boolean;
}

export interface Settings {
  anonymousAccess: boolean;
  permissions: PermissionsMode;
  /** The daemon's address as users reach it; undefined: the address it listens on. */
  publicUrl?: string;
  http: {
    maxBodyBytes: number;
    shutdownTimeoutMs: number;
    keepAliveMs: number;
    /**
     * The largest file whose content a response carries: GET /api/source and /api/blame
     * refuse a larger one (413 FILE_TOO_LARGE), /api/outline gives it no symbols, /api/diff
     * gives it no hunks (`tooLarge`), and search's `whole` content is cut (`contentTruncated`).
     */
    maxSourceBytes: number;
    /** Addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is believed (http/client-address.ts). */
    trustedProxies: string[];
  };
  /** GET /metrics: who may read it (http/metrics-access.ts); undefined: "none" with anonymous access, else "owner". */
  metrics: { auth?: MetricsAuth };
  rateLimit: { requestsPerDay: number; store: string };
  /** The OAuth authorization server (enterprise: the "oauth" entitlement). */
  oauth: {
    /** A grant's absolute lifetime from consent, in days: then refresh fails with invalid_grant and the user consents again. */
    grantLifetimeDays: number;
  };
  /** The audit log (audit/, docs/audit-log.md): events older than retentionDays are pruned by the daemon, hourly. */
  audit: { retentionDays: number };
  /** Watches (watches/, docs/watches.md). */
  watches: {
    maxPerUser: number;
    maxMatches: number;
    deliveryAttempts: number;
    retryBaseMs: number;
    retryMaxMs: number;
    allowPrivateUrls: boolean;
    eventRetentionDays: number;
  };
  search: { maxMatches: number; timeoutMs: number; maxConcurrent: number; maxConcurrentPerCaller: number; maxQueued: number; maxQueuedPerCaller: number };
  maxFileSize: number;
  /** The most commits a history index holds (the newest). */
  historyMaxCommits: number;
  reindexIntervalMs: number;
  /** With permissions "code-host": the longest a member's or a repository's host permissions go without being asked again. */
  permissionSyncIntervalMs: number;
  /** Repositories synced at once. */
  syncConcurrency: number;
  /** First retry delay after a failure; doubles per consecutive failure up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Extract symbols with universal-ctags. */
  symbols: boolean;
}

/** "none": anyone; "owner": an owner's API key; a SecretRef: that scrape token, or an owner's API key. */
export type MetricsAuth = 'none' | 'owner' | SecretRef;

export interface LicenseSettings {
  publicKeys: string[];
}

/** A cluster of nodes (docs/deployment.md); absent: one node with the embedded store. */
export interface ClusterSettings {
  /** The shared store's PostgreSQL URL. */
  store: string;
  /** The Redis URL of membership and jobs. */
  redis: string;
  replicationFactor: number;
  /** The prefix of the cluster's Redis keys. */
  name: string;
  heartbeatMs: number;
  nodeTimeoutMs: number;
}

export interface Config {
  /** Absolute path of the file, or undefined for the built-in default. */
  path?: string;
  settings: Settings;
  connections: Record<string, Connection>;
  permissions: PermissionsConfig;
  /** Search contexts by name, as the configuration defines them (the API adds others, in the store). */
  contexts: Record<string, SearchContextDefinition>;
  signIn: SignInConfig;
  license: LicenseSettings;
  cluster?: ClusterSettings;
}
