// What every fake code host (fake-hosts.ts) and every fake of a host's permission API
// (fake-permissions/) shares: the data set's types, the credentials the fakes accept, the
// people of the permission data set, and the helpers that shape an answer the way real
// hosts do (pages capped at the fake's page size, Link headers, Retry-After).

import type { IncomingHttpHeaders } from 'node:http';

/** One repository of the abstract data set; each fake names it in its host's terms. */
export interface FakeRepo {
  /** Organization, user, group path, workspace, project key (upper-cased by Bitbucket Server) or Azure org. */
  owner: string;
  name: string;
  /** GitHub/Gitea/GitLab: whether the owner is a user rather than an organization or group. */
  user?: boolean;
  /** Azure DevOps project, Bitbucket Cloud project key. */
  group: string;
  fork?: boolean;
  archived?: boolean;
  private?: boolean;
  /** Gerrit only: state HIDDEN. */
  hidden?: boolean;
  /** null: an empty repository without a default branch. Default "main". */
  defaultBranch?: string | null;
  pushedAt?: string;
  /** Logins of the accounts (ACCOUNTS) that may read it besides everyone, for a private repository; the permission fakes answer from it. */
  readers?: readonly string[];
  /** The host's topics of the repository. */
  topics?: readonly string[];
  /** Azure DevOps only: what the Git security namespace sets beside the project's teams (fake-permissions/azuredevops.ts). */
  azureAcl?: AzureAcl;
}

/** Entries of Azure DevOps's Git security namespace; accounts by FakeAccount.login. */
export interface AzureAcl {
  /** Denied Read on the repository itself. */
  denyRead?: readonly string[];
  /** Denied Read on the repository's project: on every repository of the project. */
  projectDenyRead?: readonly string[];
  /** The repository does not inherit its project's permissions: only its readers are allowed Read on it. */
  noInheritance?: boolean;
}

export const NOW_MS = Date.UTC(2024, 5, 1, 12, 0, 0);
export const TOKEN = 'secret-token-value';
/** Basic-auth user for Gerrit and Bitbucket Cloud. */
export const USER = 'trawl-bot';

/** An account on the fake host: the people of the permission data set. */
export interface FakeAccount {
  /** The host's numeric id (each fake writes it in its host's form: a number, a UUID, ...). */
  id: number;
  login: string;
  /** Verified on the host. */
  email: string;
  /** The account's own token on the host (what a member's sign-in with the host would give trawl). */
  token: string;
}

/** Five accounts: more than a page (3) of readers. */
export const ACCOUNTS: readonly FakeAccount[] = ['alice', 'bob', 'carol', 'dave', 'erin', 'jdoe'].map((login, i) => ({
  id: 101 + i,
  login,
  email: `${login}@example.com`,
  token: `user-token-${login}`,
}));

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** JSON-encoded unless `raw` is set. */
  body?: unknown;
  raw?: string;
}

/** A request as the permission fakes see it. */
export interface FakeRequest {
  method: string;
  /** The path's segments, each decoded ("group%2Fsub" stays one segment). */
  segments: string[];
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

/**
 * One host type's permission API (fake-permissions/): it answers the requests that are
 * its own (checking their credentials itself: the connection's TOKEN, an account's token,
 * an administrator acting for an account) and returns undefined for every other request,
 * which the host's listing fake then answers. Faults are served before either.
 */
export interface PermissionApi {
  route(req: FakeRequest): Reply | undefined;
}

export interface Env {
  url: string;
  repos: readonly FakeRepo[];
  pageSize: number;
  legacyBitbucket: boolean;
  cloneUrl?: (r: FakeRepo) => string | undefined;
  webUrl?: (r: FakeRepo) => string | undefined;
  accounts: readonly FakeAccount[];
}

export function pageOf<T>(items: readonly T[], page: number, size: number): { items: T[]; last: number } {
  const last = Math.max(1, Math.ceil(items.length / size));
  return { items: items.slice((page - 1) * size, page * size), last };
}

export function perPage(query: URLSearchParams, name: string, env: Env, dflt: number): number {
  return Math.min(Number(query.get(name) ?? dflt), env.pageSize);
}

export function missingParam(query: URLSearchParams, expected: Record<string, string | null>): Reply | undefined {
  for (const [k, v] of Object.entries(expected)) {
    if (!query.has(k) || (v !== null && query.get(k) !== v)) {
      return { status: 400, body: { message: `fake: expected query parameter ${k}${v === null ? '' : `=${v}`}` } };
    }
  }
  return undefined;
}

/** An RFC 8288 Link header for numbered pages of `path` (with its other query parameters). */
export function linkHeader(base: string, query: URLSearchParams, page: number, last: number): Record<string, string> {
  const at = (p: number): string => {
    const q = new URLSearchParams(query);
    q.set('page', String(p));
    return `<${base}?${q.toString()}>`;
  };
  const links: string[] = [];
  if (page < last) links.push(`${at(page + 1)}; rel="next"`, `${at(last)}; rel="last"`);
  if (page > 1) links.push(`${at(1)}; rel="first"`, `${at(page - 1)}; rel="prev"`);
  return links.length === 0 ? {} : { link: links.join(', ') };
}

export function bearer(headers: IncomingHttpHeaders): boolean {
  return headers.authorization === `Bearer ${TOKEN}`;
}

export function basic(headers: IncomingHttpHeaders, user: string | undefined): boolean {
  const m = /^Basic (.+)$/.exec(headers.authorization ?? '');
  if (m === null) return false;
  const [u, ...p] = Buffer.from(m[1]!, 'base64').toString().split(':');
  return (user === undefined || u === user) && p.join(':') === TOKEN;
}

export function retryAfter(status: number, seconds: number, body: unknown): Reply {
  return { status, headers: { 'retry-after': String(seconds) }, body };
}

export function branchOf(r: FakeRepo): string | null {
  return r.defaultBranch === undefined ? 'main' : r.defaultBranch;
}

/** A clone URL with a user name in it, as Bitbucket and Azure DevOps hand them out. */
export function withUser(url: string, user: string): string {
  return url.replace('://', `://${user}@`);
}
