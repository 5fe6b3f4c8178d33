// The JSON client every code host lists through, on the global fetch. It owns what all
// hosts share: the base URL and credential headers, a time limit per request, following
// redirects without leaking credentials to another origin, pagination, waiting out rate
// limits up to a bound, retrying transient server errors, and turning every failure into a
// HostError whose message names the connection and the URL (never the token) and says
// what the operator can do about it.

import { HostError } from './types.ts';
import type { HostErrorKind } from './types.ts';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;
/** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** What tests (and callers with other needs) may replace. */
export interface TransportOptions {
  fetchImpl?: FetchLike;
  sleep?: Sleep;
  /** Epoch milliseconds; rate-limit resets are measured against it. */
  now?: () => number;
  /** Longest total wait for rate limits within one request before giving up. */
  maxRateLimitWaitMs?: number;
  timeoutMs?: number;
}

/** What a host implementation receives from createCodeHost. */
export interface HostContext {
  /** The connection's name in the configuration, for messages. */
  name: string;
  /** The resolved secret, when the connection has one. */
  token?: string;
  /** The environment variable the token came from, for messages. */
  tokenEnv?: string;
  transport: TransportOptions;
}

// A listing page of a large GitLab group can take several seconds; a minute of silence
// means the host (or the path to it) is not answering.
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RATE_LIMIT_WAIT_MS = 60_000;
// Transient 5xx (a deploy, an overloaded replica) usually clear within seconds; two
// retries ride them out without stalling a sync on a host that is really down.
export const SERVER_ERROR_BACKOFF_MS = [1_000, 3_000] as const;
// When a host says it is rate limiting but not for how long (Bitbucket Cloud), start
// here and double per consecutive answer.
export const DEFAULT_RATE_LIMIT_WAIT_MS = 10_000;
// A reset time already past (clock skew) must not turn into a busy loop.
const MIN_RATE_LIMIT_WAIT_MS = 1_000;
const MAX_RATE_LIMIT_RETRIES = 10;
const MAX_REDIRECTS = 5;
// Far beyond any real host (a million repositories at 100 per page); stops a host that
// keeps answering "next" forever.
const MAX_PAGES = 10_000;

export const defaultSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface ClientConfig {
  /** Connection name, token and transport options. */
  context: HostContext;
  /** API root, e.g. "https://api.github.com" or "https://gitlab.example.com/api/v4". */
  baseUrl: string;
  /** Credential headers; sent only to the base URL's origin. */
  auth?: Record<string, string>;
  headers?: Record<string, string>;
  /**
   * Azure DevOps answers a missing or rejected PAT with 203 and an HTML sign-in page
   * instead of 401; that status is an authentication failure there.
   */
  signInStatus?: number;
}

export interface HttpReply {
  status: number;
  headers: Headers;
  /** The URL that answered (after redirects), credentials removed. */
  url: string;
  text: string;
}

export interface GetOptions {
  signal?: AbortSignal;
  /** What a 404 means for the operator: 'organization "acme"'. */
  notFound?: string;
  /** Gerrit prefixes every JSON answer with `)]}'` against XSSI. */
  xssiPrefix?: boolean;
}

export interface Page<T> {
  items: T[];
  /** Path or absolute URL of the next page; undefined on the last page. */
  next?: string;
}

/** Thrown by shape checks inside a parse callback; reported as 'bad-response'. */
export class ShapeError extends Error {}

export class JsonClient {
  readonly baseUrl: string;
  private readonly base: URL;
  private readonly cfg: ClientConfig;
  private readonly fetchImpl: FetchLike;
  private readonly sleep: Sleep;
  private readonly now: () => number;
  private readonly maxRateLimitWaitMs: number;
  private readonly timeoutMs: number;

  constructor(cfg: ClientConfig) {
    this.cfg = cfg;
    this.baseUrl = trimSlash(cfg.baseUrl);
    this.base = new URL(this.baseUrl);
    const t = cfg.context.transport;
    this.fetchImpl = t.fetchImpl ?? ((url, init) => fetch(url, init));
    this.sleep = t.sleep ?? defaultSleep;
    this.now = t.now ?? Date.now;
    this.maxRateLimitWaitMs = t.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS;
    this.timeoutMs = t.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * An absolute URL for a path under the base URL. Absolute URLs (pagination links) are
   * moved onto the configured origin: hosts behind a proxy often report their internal
   * address, and credentials must only ever go where the operator pointed them.
   */
  resolve(pathOrUrl: string): string {
    if (!/^https?:\/\//i.test(pathOrUrl)) return this.baseUrl + (pathOrUrl.startsWith('/') ? '' : '/') + pathOrUrl;
    const u = new URL(pathOrUrl);
    return this.base.origin + u.pathname + u.search;
  }

  /** GET and parse; throws HostError for every failure, including a 404. */
  async get<T>(pathOrUrl: string, parse: (data: unknown, reply: HttpReply) => T, opts: GetOptions = {}): Promise<T> {
    const reply = await this.send(this.resolve(pathOrUrl), opts.signal);
    if (!isSuccess(reply.status) || reply.status === this.cfg.signInStatus) throw this.statusError(reply, opts.notFound);
    return this.parseReply(reply, parse, opts);
  }

  /** Like get, but a 404 or an empty 204 answer is undefined (an optional resource). */
  async getOptional<T>(pathOrUrl: string, parse: (data: unknown, reply: HttpReply) => T, opts: GetOptions = {}): Promise<T | undefined> {
    const reply = await this.send(this.resolve(pathOrUrl), opts.signal);
    if (reply.status === 404 || reply.status === 204) return undefined;
    if (!isSuccess(reply.status) || reply.status === this.cfg.signInStatus) throw this.statusError(reply, opts.notFound);
    return this.parseReply(reply, parse, opts);
  }

  /** Every item of every page, following `next` until a page has none. */
  async paginate<T>(first: string, page: (data: unknown, reply: HttpReply) => Page<T>, opts: GetOptions = {}): Promise<T[]> {
    const all: T[] = [];
    const seen = new Set<string>();
    let next: string | undefined = first;
    while (next !== undefined) {
      const url = this.resolve(next);
      if (seen.has(url) || seen.size >= MAX_PAGES) {
        throw this.error('bad-response', `pagination of ${redact(url)} does not end; the host keeps returning a next page`);
      }
      seen.add(url);
      const p: Page<T> = await this.get(url, page, opts);
      for (const item of p.items) all.push(item);
      next = p.next;
    }
    return all;
  }

  /** A HostError whose message starts with the connection's name. */
  error(kind: HostErrorKind, message: string, retryAt?: number): HostError {
    return new HostError(kind, `connection "${this.cfg.context.name}": ${message}`, retryAt);
  }

  private parseReply<T>(reply: HttpReply, parse: (data: unknown, reply: HttpReply) => T, opts: GetOptions): T {
    let text = reply.text;
    if (opts.xssiPrefix && text.startsWith(")]}'")) text = text.slice(text.indexOf('\n') + 1);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      const type = reply.headers.get('content-type') ?? 'no content type';
      throw this.error('bad-response', `${reply.url} did not answer with JSON (HTTP ${reply.status}, ${type}); is the connection's url the host's address?`);
    }
    try {
      return parse(data, reply);
    } catch (err) {
      if (err instanceof ShapeError) throw this.error('bad-response', `unexpected answer from ${reply.url}: ${err.message}`);
      throw err;
    }
  }

  /** One request with its rate-limit waits and server-error retries. */
  private async send(url: string, signal: AbortSignal | undefined): Promise<HttpReply> {
    let rateWaited = 0;
    let rateRetries = 0;
    let serverRetries = 0;
    for (;;) {
      const reply = await this.fetchFollowingRedirects(url, signal);
      if (isRateLimited(reply)) {
        const now = this.now();
        const hinted = retryTime(reply.headers, now);
        const retryAt = hinted ?? now + DEFAULT_RATE_LIMIT_WAIT_MS * 2 ** rateRetries;
        const wait = Math.max(MIN_RATE_LIMIT_WAIT_MS, retryAt - now);
        if (rateWaited + wait > this.maxRateLimitWaitMs || rateRetries >= MAX_RATE_LIMIT_RETRIES) {
          const until = now + wait;
          throw this.error(
            'rate-limited',
            `rate limited by ${reply.url} (HTTP ${reply.status}) until ${new Date(until).toISOString()}; ` +
              `waiting that long exceeds the ${Math.round(this.maxRateLimitWaitMs / 1000)} s bound, the next sync retries`,
            until,
          );
        }
        await this.sleep(wait, signal);
        rateWaited += wait;
        rateRetries++;
        continue;
      }
      if (reply.status >= 500 && serverRetries < SERVER_ERROR_BACKOFF_MS.length) {
        await this.sleep(SERVER_ERROR_BACKOFF_MS[serverRetries]!, signal);
        serverRetries++;
        continue;
      }
      return reply;
    }
  }

  private async fetchFollowingRedirects(url: string, signal: AbortSignal | undefined): Promise<HttpReply> {
    let current = url;
    let withAuth = true;
    for (let hop = 0; ; hop++) {
      const reply = await this.fetchOnce(current, withAuth, signal);
      const location = reply.headers.get('location');
      if (!isRedirect(reply.status) || location === null || hop >= MAX_REDIRECTS) return reply;
      const next = new URL(location, current);
      // fetch's own redirect handling would forward custom credential headers
      // (PRIVATE-TOKEN) to whatever origin the Location names.
      if (next.origin !== this.base.origin) withAuth = false;
      current = next.href;
    }
  }

  private async fetchOnce(url: string, withAuth: boolean, signal: AbortSignal | undefined): Promise<HttpReply> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    const headers: Record<string, string> = { accept: 'application/json', ...this.cfg.headers };
    if (withAuth) Object.assign(headers, this.cfg.auth);
    try {
      const res = await this.fetchImpl(url, { method: 'GET', headers, signal: combined, redirect: 'manual' });
      const text = await res.text();
      return { status: res.status, headers: res.headers, url: redact(url), text };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw this.error('unreachable', `no answer from ${redact(url)} within ${this.timeoutMs} ms`);
      throw this.error('unreachable', `cannot reach ${redact(url)} (${networkReason(err)})`);
    }
  }

  private statusError(reply: HttpReply, notFound: string | undefined): HostError {
    const { status, url } = reply;
    const env = this.cfg.context.tokenEnv;
    const hasToken = this.cfg.context.token !== undefined;
    const said = hostMessage(reply);
    // "(HTTP 404: 404 Group Not Found)": the host's own words help when ours guess wrong.
    const http = said === undefined ? `HTTP ${status}` : `HTTP ${status}: ${said}`;
    if (status === 401 || status === this.cfg.signInStatus) {
      return hasToken
        ? this.error('unauthorized', `token rejected by ${url} (${http}); check the env var ${env}`)
        : this.error('unauthorized', `${url} requires authentication (${http}); give the connection a token`);
    }
    if (status === 403) {
      return this.error(
        'forbidden',
        `access denied to ${url} (${http})${hasToken ? `; the token in ${env} lacks the permission or scope` : '; the connection has no token'}`,
      );
    }
    if (status === 404) {
      if (notFound === undefined) return this.error('not-found', `${url} not found (${http}); check the connection's url`);
      return this.error('not-found', `${notFound} not found at ${url} (${http})${hasToken ? `, or the token in ${env} cannot see it` : ''}`);
    }
    if (status >= 500) {
      return this.error('unreachable', `${url} failed ${SERVER_ERROR_BACKOFF_MS.length + 1} times (${http})`);
    }
    if (isRedirect(status)) return this.error('bad-response', `${url} redirects too often (HTTP ${status})`);
    return this.error('bad-response', `unexpected answer from ${url} (${http})`);
  }
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** 429 everywhere; 403 with an exhausted quota or a Retry-After (GitHub, Gitea). */
function isRateLimited(reply: HttpReply): boolean {
  if (reply.status === 429) return true;
  if (reply.status !== 403) return false;
  return reply.headers.get('x-ratelimit-remaining') === '0' || reply.headers.get('retry-after') !== null;
}

/**
 * When the host says to come back, epoch milliseconds: Retry-After (seconds or an HTTP
 * date), else X-RateLimit-Reset / RateLimit-Reset. GitHub and GitLab send the reset as
 * epoch seconds; the IETF draft header is a number of seconds, told apart by size.
 */
export function retryTime(headers: Headers, now: number): number | undefined {
  const after = headers.get('retry-after')?.trim();
  if (after !== undefined && after !== '') {
    if (/^\d+$/.test(after)) return now + Number(after) * 1000;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return date;
  }
  const reset = (headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset'))?.trim();
  if (reset !== undefined && /^\d+(\.\d+)?$/.test(reset)) {
    const n = Number(reset);
    return n > 1e9 ? n * 1000 : now + n * 1000;
  }
  return undefined;
}

/** The host's own explanation from an error body, short, when it gives one. */
function hostMessage(reply: HttpReply): string | undefined {
  const text = reply.text.replace(/^\)\]\}'\n/, '').trim();
  if (text === '' || text.startsWith('<')) return undefined; // HTML error pages say nothing useful
  let message: unknown = text.split('\n')[0];
  try {
    const data: unknown = JSON.parse(text);
    if (typeof data === 'string') message = data;
    else if (isObject(data)) {
      const errors = data.errors;
      const error = data.error;
      message = data.message ?? (isObject(error) ? error.message : error) ?? (Array.isArray(errors) && isObject(errors[0]) ? errors[0].message : undefined);
    }
  } catch {
    // plain text: its first line
  }
  if (typeof message !== 'string' || message === '') return undefined;
  return message.length > 200 ? `${message.slice(0, 200)}...` : message;
}

/** Why a request never got an answer, from the error chain undici builds. */
function networkReason(err: unknown): string {
  let e: unknown = err;
  let last = 'network error';
  for (let depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const code = isObject(e) ? e.code : undefined;
    switch (code) {
      case 'ECONNREFUSED':
        return 'connection refused';
      case 'ENOTFOUND':
        return 'host name not found';
      case 'EAI_AGAIN':
        return 'DNS lookup failed';
      case 'ECONNRESET':
        return 'connection reset';
      case 'ETIMEDOUT':
      case 'UND_ERR_CONNECT_TIMEOUT':
        return 'connect timed out';
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return 'no route to host';
    }
    if (e instanceof Error) {
      if (typeof code === 'string' && /CERT|TLS|SSL/.test(code)) return `TLS: ${e.message}`;
      last = e.message;
      e = e.cause;
    } else break;
  }
  return last;
}

/** A URL fit for messages: user name and password removed. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

/** A clone URL without the user name some hosts embed (https://user@host/...). */
export const stripCredentials = redact;

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * The repoName prefix of a host: its web URL's host name, lower-case, plus any path the
 * host lives under ("corp.example/gitlab"); ports are dropped, as repoNameFromRemote does.
 */
export function hostPrefix(webUrl: string): string {
  const u = new URL(webUrl);
  const host = u.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const path = trimSlash(decodeURIComponent(u.pathname));
  return host + path;
}

/** `Authorization: Basic` value. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** Each '/'-separated segment percent-encoded, the slashes kept. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** `url` with query parameters set (replacing existing ones of the same name). */
export function withQuery(url: string, params: Record<string, string | number>): string {
  const i = url.indexOf('?');
  const search = new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
  for (const [k, v] of Object.entries(params)) search.set(k, String(v));
  const path = i < 0 ? url : url.slice(0, i);
  // URLSearchParams writes '$' as %24; Azure DevOps documents `$top` literally.
  return `${path}?${search.toString().replace(/%24/g, '$')}`;
}

/** The rel="next" target of an RFC 8288 Link header. */
export function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  if (link === null) return undefined;
  for (const m of link.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(m[2] ?? '');
    if (rel !== null && rel[1]!.toLowerCase().split(/\s+/).includes('next')) return m[1];
  }
  return undefined;
}

/** Runs `fn` over `items` with at most `limit` calls at once; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

// Shape checks for parse callbacks: a wrong shape is a ShapeError, which the client
// reports as 'bad-response' with the URL.

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown, what: string): Record<string, unknown> {
  if (!isObject(v)) throw new ShapeError(`${what} is not an object`);
  return v;
}

export function arr(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new ShapeError(`${what} is not an array`);
  return v;
}

export function str(o: Record<string, unknown>, key: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v === '') throw new ShapeError(`field "${key}" is missing or not a string`);
  return v;
}

/** A string field that may be absent, null or empty (undefined then). */
export function optStr(o: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = o?.[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new ShapeError(`field "${key}" is not a string`);
  return v;
}

/** A boolean field; absent or null is `dflt`. */
export function bool(o: Record<string, unknown>, key: string, dflt = false): boolean {
  const v = o[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new ShapeError(`field "${key}" is not a boolean`);
  return v;
}

/** An object field that may be absent or null. */
export function optObj(o: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  const v = o?.[key];
  if (v === undefined || v === null) return undefined;
  return obj(v, `field "${key}"`);
}

/** `o` without its undefined properties, so absent metadata is absent, not `undefined`. */
export function compact<T extends object>(o: T): T {
  for (const key of Object.keys(o) as Array<keyof T>) if (o[key] === undefined) delete o[key];
  return o;
}
