// Loads the configuration file (docs/configuration.md "The configuration file"): JSON,
// checked against the shipped trawl.schema.json, defaults filled in here rather than by the
// validator so that the schema stays a plain description (it is also the README reference,
// an editor's hover help and part of the OpenAPI document). Every problem of an invalid
// file is reported at once, as `<file>: <JSON pointer>: <reason>`, so an operator fixes the
// file in one round.

import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { readBoundedText, RefusedFile } from '../bounded-read.ts';
import { completeContext, GLOBAL_CONTEXT, unknownConnections, type WrittenContext } from './contexts.ts';
import { explain } from './explain.ts';
import { escapePointer, JsonSyntaxError, lineColumn, parseJson, type ParsedJson } from './json-positions.ts';
import { isValidConfig, validator } from './schema.ts';
import { completeSignIn, DEFAULT_SIGN_IN, signInChecks, type FileSignIn } from './sign-in.ts';
import type {
  ClusterSettings,
  Config,
  Connection,
  ConnectionType,
  Excludes,
  HostConnection,
  PermissionsConfig,
  Revisions,
  SecretRef,
  Settings,
} from './types.ts';

export { configSchema } from './schema.ts';

/** One thing wrong with a configuration file. */
export interface ConfigProblem {
  /** JSON pointer of the value at fault ("" is the whole file); absent for syntax and read errors. */
  pointer?: string;
  /** 1-based position in the file, when known. */
  line?: number;
  column?: number;
  message: string;
}

/** An unreadable or invalid configuration file; the message lists every problem, one per line. */
export class ConfigError extends Error {
  readonly file: string;
  readonly problems: readonly ConfigProblem[];

  constructor(file: string, problems: readonly ConfigProblem[]) {
    super(problems.map((p) => renderProblem(file, p)).join('\n'));
    this.name = 'ConfigError';
    this.file = file;
    this.problems = problems;
  }
}

function renderProblem(file: string, p: ConfigProblem): string {
  if (p.pointer !== undefined) return `${file}: ${p.pointer === '' ? '/' : p.pointer}: ${p.message}`;
  if (p.line !== undefined) return `${file}: line ${p.line}, column ${p.column ?? 1}: ${p.message}`;
  return `${file}: ${p.message}`;
}

// ---------------------------------------------------------------------------------------
// Defaults

const DEFAULT_SETTINGS: Settings = {
  anonymousAccess: false,
  permissions: 'all',
  http: { maxBodyBytes: 1048576, shutdownTimeoutMs: 10000, keepAliveMs: 15000, maxSourceBytes: 10485760, trustedProxies: [] },
  // metrics.auth stays unset: it follows anonymousAccess (which `trawl serve` turns on without a file).
  metrics: {},
  rateLimit: { requestsPerDay: 10000, store: 'embedded' },
  oauth: { grantLifetimeDays: 90 },
  audit: { retentionDays: 180 },
  watches: {
    maxPerUser: 100,
    maxMatches: 10_000,
    deliveryAttempts: 10,
    retryBaseMs: 1000,
    retryMaxMs: 600_000,
    allowPrivateUrls: false,
    eventRetentionDays: 7,
  },
  search: { maxMatches: 100000, timeoutMs: 20000, maxConcurrent: 4, maxConcurrentPerCaller: 4, maxQueued: 100, maxQueuedPerCaller: 50 },
  maxFileSize: 2097152,
  historyMaxCommits: 20000,
  reindexIntervalMs: 3600000,
  permissionSyncIntervalMs: 1800000,
  syncConcurrency: 2,
  retryBaseMs: 60000,
  retryMaxMs: 21600000,
  symbols: true,
};

/** The cluster section's defaults (the schema's `default` annotations; a test compares them). */
export const DEFAULT_CLUSTER: Omit<ClusterSettings, 'store' | 'redis'> = { replicationFactor: 2, name: 'trawl', heartbeatMs: 1000, nodeTimeoutMs: 5000 };

/** Hosts with a public default; gerrit and Bitbucket Server have none and must be given a url. */
const DEFAULT_HOST_URLS = {
  github: 'https://github.com',
  gitlab: 'https://gitlab.com',
  gitea: 'https://gitea.com',
  bitbucket: 'https://bitbucket.org',
  azuredevops: 'https://dev.azure.com',
} as const;

/** The configuration without a file: default settings, no connections. */
export function defaultConfig(): Config {
  return {
    settings: structuredClone(DEFAULT_SETTINGS),
    connections: {},
    permissions: { groups: {}, grants: [] },
    contexts: {},
    signIn: structuredClone(DEFAULT_SIGN_IN),
    license: { publicKeys: [] },
  };
}

// ---------------------------------------------------------------------------------------
// Entry points

/**
 * The largest configuration file read: connections, repository lists and settings, some
 * hundred thousand repositories named one by one.
 */
export const CONFIG_MAX_BYTES = 16 * 1024 * 1024;

/** Reads, validates and completes the configuration file at `path`; throws ConfigError. */
export function loadConfig(path: string): Config {
  let text: string;
  try {
    text = readBoundedText(path, CONFIG_MAX_BYTES);
  } catch (err) {
    if (err instanceof RefusedFile) throw new ConfigError(path, [{ message: `the configuration file ${err.reason}` }]);
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new ConfigError(path, [{ message: `cannot read the configuration file: ${reason}` }]);
  }
  return parseConfig(text, path);
}

/** Validates and completes configuration text as if read from `path` (relative git paths resolve against its directory). */
export function parseConfig(text: string, path: string): Config {
  // Editors on some systems write a byte-order mark; it is not part of the JSON.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let parsed: ParsedJson;
  try {
    parsed = parseJson(body);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    throw new ConfigError(path, [{ ...lineColumn(body, err.offset), message: `invalid JSON: ${err.reason}` }]);
  }

  const problems: LocatedProblem[] = [];
  for (const d of parsed.duplicates) problems.push({ pointer: d.pointer, offset: d.offset, message: d.message });
  if (!isValidConfig(parsed.value)) {
    const validate = validator();
    validate(parsed.value);
    problems.push(...explain(validate.errors ?? [], parsed.offsets));
  }
  problems.push(...crossChecks(parsed.value, parsed.offsets));

  if (problems.length > 0) {
    // In file order, so the list reads top to bottom like the file; one line per problem.
    const seen = new Set<string>();
    const ordered = problems
      .map((p, i) => ({ p, i }))
      .sort((a, b) => (a.p.offset ?? Infinity) - (b.p.offset ?? Infinity) || a.i - b.i)
      .map(({ p }) => {
        const { offset, ...rest } = p;
        return offset === undefined ? rest : { ...rest, ...lineColumn(body, offset) };
      })
      .filter((p) => {
        const key = `${p.pointer}\u0000${p.message}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    throw new ConfigError(path, ordered);
  }

  return complete(parsed.value as FileConfig, resolve(path));
}

// ---------------------------------------------------------------------------------------
// Validation beyond the schema (the schema's own errors: explain.ts)

/** A problem and, while the list is sorted, its offset in the file. */
interface LocatedProblem extends ConfigProblem {
  offset?: number;
}

/** Rules the schema cannot express (they relate two values, or need a parser). Works on unvalidated data, so it guards every access. */
function crossChecks(value: unknown, offsets: ReadonlyMap<string, number>): LocatedProblem[] {
  const out: LocatedProblem[] = [];
  const add = (pointer: string, message: string): void => {
    const offset = offsets.get(pointer);
    out.push(offset === undefined ? { pointer, message } : { pointer, message, offset });
  };
  const settings = isObject(value) && isObject(value.settings) ? value.settings : {};
  const base = typeof settings.retryBaseMs === 'number' ? settings.retryBaseMs : DEFAULT_SETTINGS.retryBaseMs;
  const max = typeof settings.retryMaxMs === 'number' ? settings.retryMaxMs : DEFAULT_SETTINGS.retryMaxMs;
  const cluster = isObject(value) && isObject(value.cluster) ? value.cluster : undefined;
  if (cluster) {
    const beat = typeof cluster.heartbeatMs === 'number' ? cluster.heartbeatMs : DEFAULT_CLUSTER.heartbeatMs;
    const timeout = typeof cluster.nodeTimeoutMs === 'number' ? cluster.nodeTimeoutMs : DEFAULT_CLUSTER.nodeTimeoutMs;
    if (timeout < 3 * beat)
      add(
        'nodeTimeoutMs' in cluster ? '/cluster/nodeTimeoutMs' : '/cluster/heartbeatMs',
        `nodeTimeoutMs (${timeout}) must be at least three heartbeats (3 × heartbeatMs = ${3 * beat}): one late heartbeat must not take a node for dead`,
      );
  }
  if (base > max)
    add('retryMaxMs' in settings ? '/settings/retryMaxMs' : '/settings/retryBaseMs', `retryMaxMs (${max}) must not be less than retryBaseMs (${base})`);
  const connections = isObject(value) && isObject(value.connections) ? value.connections : {};
  for (const [name, c] of Object.entries(connections)) {
    const origins = isObject(c) ? c.cloneOrigins : undefined;
    if (!Array.isArray(origins)) continue;
    origins.forEach((o, i) => {
      // The schema's pattern admits what URL cannot parse ("https://host:99999"); other schemes are the pattern's to report.
      if (typeof o === 'string' && /^https?:\/\//.test(o) && originOf(o) === undefined)
        add(
          `/connections/${name}/cloneOrigins/${i}`,
          `${JSON.stringify(o)} is not a valid origin (scheme, host and optional port: "https://git.example.com:8443")`,
        );
    });
  }
  // A grant naming a group the file does not define would quietly grant nothing.
  const permissions = isObject(value) && isObject(value.permissions) ? value.permissions : {};
  const groups = isObject(permissions.groups) ? permissions.groups : {};
  if (Array.isArray(permissions.grants)) {
    permissions.grants.forEach((g, i) => {
      const named = isObject(g) && Array.isArray(g.groups) ? g.groups : [];
      named.forEach((name, j) => {
        if (typeof name === 'string' && !(name in groups))
          add(`/permissions/grants/${i}/groups/${j}`, `no group ${JSON.stringify(name)} in /permissions/groups`);
      });
    });
  }
  contextChecks(value, connections, add);
  if (isObject(value)) signInChecks(value, add);
  const proxies = isObject(settings.http) ? settings.http.trustedProxies : undefined;
  if (Array.isArray(proxies)) {
    proxies.forEach((p, i) => {
      if (typeof p === 'string' && !isAddressOrRange(p))
        add(`/settings/http/trustedProxies/${i}`, `${JSON.stringify(p)} is not an IP address or CIDR range (e.g. "10.0.0.5", "10.0.0.0/8", "fd00::/8")`);
    });
  }
  return out;
}

/**
 * Search contexts: "global" is no context's name (it means every repository), and a
 * connection a context names must be one of the file's (a misspelt one would quietly select
 * nothing).
 */
function contextChecks(value: unknown, connections: Record<string, unknown>, add: (pointer: string, message: string) => void): void {
  const contexts = isObject(value) && isObject(value.contexts) ? value.contexts : {};
  for (const [name, c] of Object.entries(contexts)) {
    const at = `/contexts/${escapePointer(name)}`;
    if (name === GLOBAL_CONTEXT) add(at, `"${GLOBAL_CONTEXT}" is reserved: context:${GLOBAL_CONTEXT} searches every repository; choose another name`);
    if (!isObject(c)) continue;
    for (const { at: where, name: connection } of unknownConnections(c as WrittenContext, (n) => Object.hasOwn(connections, n))) {
      add(`${at}/${where}`, `no connection ${JSON.stringify(connection)} in /connections`);
    }
  }
}

/** The origin of an http(s) URL ("https://host:8443"), undefined when it does not parse as one. */
function originOf(text: string): string | undefined {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** "10.0.0.5", "::1", "10.0.0.0/8", "fd00::/8": an address, and a prefix length within its family's. */
function isAddressOrRange(text: string): boolean {
  const [address, prefix, ...rest] = text.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

// ---------------------------------------------------------------------------------------
// Completion: defaults and paths

// The file's shape once validated: everything optional that has a default.
interface FileConnection {
  type: ConnectionType;
  url?: string;
  token?: SecretRef;
  webhookSecret?: SecretRef;
  cloneOrigins?: string[];
  revisions?: Partial<Revisions>;
  exclude?: Partial<Excludes>;
  deploymentType?: 'cloud' | 'server';
  user?: string;
  orgs?: string[];
  users?: string[];
  repos?: string[];
  groups?: string[];
  projects?: string[];
  workspaces?: string[];
  visibility?: 'public' | 'private';
  history?: boolean;
}

interface FileConfig {
  settings?: Partial<Omit<Settings, 'rateLimit' | 'audit' | 'search' | 'http' | 'metrics' | 'oauth' | 'watches'>> & {
    metrics?: Partial<Settings['metrics']>;
    oauth?: Partial<Settings['oauth']>;
    rateLimit?: Partial<Settings['rateLimit']>;
    audit?: Partial<Settings['audit']>;
    watches?: Partial<Settings['watches']>;
    search?: Partial<Settings['search']>;
    http?: Partial<Settings['http']>;
  };
  connections?: Record<string, FileConnection>;
  permissions?: { groups?: Record<string, string[]>; grants?: Array<{ groups?: string[]; users?: string[]; repos: string[] }> };
  contexts?: Record<string, WrittenContext>;
  signIn?: FileSignIn;
  license?: { publicKeys?: string[] };
  cluster?: Partial<ClusterSettings> & Pick<ClusterSettings, 'store' | 'redis'>;
}

function complete(file: FileConfig, absolutePath: string): Config {
  const d = DEFAULT_SETTINGS;
  const s = file.settings ?? {};
  const settings: Settings = {
    anonymousAccess: s.anonymousAccess ?? d.anonymousAccess,
    permissions: s.permissions ?? d.permissions,
    http: {
      maxBodyBytes: s.http?.maxBodyBytes ?? d.http.maxBodyBytes,
      shutdownTimeoutMs: s.http?.shutdownTimeoutMs ?? d.http.shutdownTimeoutMs,
      keepAliveMs: s.http?.keepAliveMs ?? d.http.keepAliveMs,
      maxSourceBytes: s.http?.maxSourceBytes ?? d.http.maxSourceBytes,
      trustedProxies: [...(s.http?.trustedProxies ?? d.http.trustedProxies)],
    },
    metrics: s.metrics?.auth === undefined ? {} : { auth: typeof s.metrics.auth === 'string' ? s.metrics.auth : { env: s.metrics.auth.env } },
    rateLimit: {
      requestsPerDay: s.rateLimit?.requestsPerDay ?? d.rateLimit.requestsPerDay,
      store: s.rateLimit?.store ?? d.rateLimit.store,
    },
    oauth: { grantLifetimeDays: s.oauth?.grantLifetimeDays ?? d.oauth.grantLifetimeDays },
    audit: { retentionDays: s.audit?.retentionDays ?? d.audit.retentionDays },
    watches: { ...d.watches, ...s.watches },
    search: {
      maxMatches: s.search?.maxMatches ?? d.search.maxMatches,
      timeoutMs: s.search?.timeoutMs ?? d.search.timeoutMs,
      maxConcurrent: s.search?.maxConcurrent ?? d.search.maxConcurrent,
      maxConcurrentPerCaller: Math.min(
        s.search?.maxConcurrent ?? d.search.maxConcurrent,
        s.search?.maxConcurrentPerCaller ?? s.search?.maxConcurrent ?? d.search.maxConcurrent,
      ),
      maxQueued: s.search?.maxQueued ?? d.search.maxQueued,
      maxQueuedPerCaller: Math.min(
        s.search?.maxQueued ?? d.search.maxQueued,
        s.search?.maxQueuedPerCaller ?? Math.ceil((s.search?.maxQueued ?? d.search.maxQueued) / 2),
      ),
    },
    maxFileSize: s.maxFileSize ?? d.maxFileSize,
    historyMaxCommits: s.historyMaxCommits ?? d.historyMaxCommits,
    reindexIntervalMs: s.reindexIntervalMs ?? d.reindexIntervalMs,
    permissionSyncIntervalMs: s.permissionSyncIntervalMs ?? d.permissionSyncIntervalMs,
    syncConcurrency: s.syncConcurrency ?? d.syncConcurrency,
    retryBaseMs: s.retryBaseMs ?? d.retryBaseMs,
    retryMaxMs: s.retryMaxMs ?? d.retryMaxMs,
    symbols: s.symbols ?? d.symbols,
  };
  if (s.publicUrl !== undefined) settings.publicUrl = s.publicUrl.replace(/\/+$/, '');
  const dir = dirname(absolutePath);
  const connections: Record<string, Connection> = {};
  for (const [name, c] of Object.entries(file.connections ?? {})) connections[name] = completeConnection(c, dir);
  const config: Config = {
    path: absolutePath,
    settings,
    connections,
    permissions: completePermissions(file.permissions),
    contexts: Object.fromEntries(Object.entries(file.contexts ?? {}).map(([name, c]) => [name, completeContext(c)])),
    signIn: completeSignIn(file.signIn),
    license: { publicKeys: [...(file.license?.publicKeys ?? [])] },
  };
  if (file.cluster) {
    const c = file.cluster;
    const dc = DEFAULT_CLUSTER;
    config.cluster = {
      store: c.store,
      redis: c.redis,
      replicationFactor: c.replicationFactor ?? dc.replicationFactor,
      name: c.name ?? dc.name,
      heartbeatMs: c.heartbeatMs ?? dc.heartbeatMs,
      nodeTimeoutMs: c.nodeTimeoutMs ?? dc.nodeTimeoutMs,
    };
  }
  return config;
}

/** Emails are compared without regard to case, so they are kept in lower case. */
function completePermissions(p: FileConfig['permissions']): PermissionsConfig {
  const groups: Record<string, string[]> = {};
  for (const [name, emails] of Object.entries(p?.groups ?? {})) groups[name] = emails.map((e) => e.toLowerCase());
  const grants = (p?.grants ?? []).map((g) => ({ groups: [...(g.groups ?? [])], users: (g.users ?? []).map((e) => e.toLowerCase()), repos: [...g.repos] }));
  return { groups, grants };
}

function completeConnection(c: FileConnection, dir: string): Connection {
  const revisions: Revisions = { branches: [...(c.revisions?.branches ?? [])], tags: [...(c.revisions?.tags ?? [])] };
  const history = c.history === true ? { history: true as const } : {};
  if (c.type === 'git')
    return {
      type: 'git',
      url: resolveGitLocation(c.url!, dir),
      revisions,
      ...history,
      visibility: c.visibility ?? 'public',
      ...(c.webhookSecret ? { webhookSecret: { env: c.webhookSecret.env } } : {}),
    };

  const deploymentType = c.deploymentType ?? 'cloud';
  // The schema requires url exactly where there is no default (gerrit, Bitbucket Server).
  const defaultUrl = c.type === 'gerrit' || (c.type === 'bitbucket' && deploymentType === 'server') ? undefined : DEFAULT_HOST_URLS[c.type];
  const url = c.url ?? defaultUrl;
  if (url === undefined) throw new Error(`internal: ${c.type} connection without url passed validation`);
  const common = {
    // Hosts' API paths are appended to it, so "https://host/" and "https://host" must be the same.
    url: url.replace(/\/+$/, ''),
    ...(c.token ? { token: { env: c.token.env } } : {}),
    ...(c.webhookSecret ? { webhookSecret: { env: c.webhookSecret.env } } : {}),
    exclude: { forks: c.exclude?.forks ?? false, archived: c.exclude?.archived ?? false, repos: [...(c.exclude?.repos ?? [])] },
    // As origins, so that "https://HOST:443/" compares equal to a clone URL's "https://host".
    ...(c.cloneOrigins?.length ? { cloneOrigins: c.cloneOrigins.map((o) => originOf(o)!) } : {}),
    revisions,
    ...history,
  };
  const list = (l: string[] | undefined): string[] => [...(l ?? [])];
  const user = c.user !== undefined ? { user: c.user } : {};
  let out: HostConnection;
  switch (c.type) {
    case 'github':
      out = { type: 'github', ...common, orgs: list(c.orgs), users: list(c.users), repos: list(c.repos) };
      break;
    case 'gitlab':
      out = { type: 'gitlab', ...common, groups: list(c.groups), users: list(c.users), projects: list(c.projects) };
      break;
    case 'gitea':
      out = { type: 'gitea', ...common, orgs: list(c.orgs), users: list(c.users), repos: list(c.repos) };
      break;
    case 'gerrit':
      out = { type: 'gerrit', ...common, ...user, projects: list(c.projects) };
      break;
    case 'bitbucket':
      out = { type: 'bitbucket', ...common, deploymentType, ...user, workspaces: list(c.workspaces), projects: list(c.projects), repos: list(c.repos) };
      break;
    case 'azuredevops':
      out = { type: 'azuredevops', ...common, orgs: list(c.orgs), projects: list(c.projects), repos: list(c.repos) };
      break;
  }
  return out;
}

/**
 * A git connection's location as the sync will see it: URLs (file://, http(s)://, ssh://, and
 * scp-like user@host:path) unchanged; `~/` from the home directory; relative paths from the
 * configuration file's directory, so the file means the same whatever the daemon's working
 * directory. Only the glob-free leading segments are resolved: path normalisation must not
 * rewrite a glob ("a/*\/../b" is not "a/b").
 */
function resolveGitLocation(location: string, dir: string): string {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(location) || /^[^/]+@[^/]+:/.test(location)) return location;
  if (location === '~' || location.startsWith('~/')) return join(homedir(), location.slice(1));
  if (isAbsolute(location)) return location;
  const segments = location.split('/');
  const firstGlob = segments.findIndex((seg) => /[*?[{]/.test(seg));
  if (firstGlob === -1) return resolve(dir, location);
  const base = resolve(dir, segments.slice(0, firstGlob).join('/') || '.');
  return `${base === '/' ? '' : base}/${segments.slice(firstGlob).join('/')}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
