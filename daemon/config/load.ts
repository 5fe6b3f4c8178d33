// Loads the configuration file (OPERATOR.md "Configuration file"): JSON, checked against the
// shipped trawl.schema.json, defaults filled in here rather than by the validator so that the
// schema stays a plain description (it is also the README reference, an editor's hover help
// and part of the OpenAPI document). Every problem of an invalid file is reported at once,
// as `<file>: <JSON pointer>: <reason>`, so an operator fixes the file in one round.

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
// The named export: under Node ESM the default import of this CommonJS module is
// `module.exports`, which TypeScript types as the namespace, not the class.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { escapePointer, JsonSyntaxError, lineColumn, parseJson, type ParsedJson } from './json-positions.ts';
import type {
  Config,
  Connection,
  ConnectionType,
  Excludes,
  HostConnection,
  Revisions,
  SecretRef,
  Settings,
} from './types.ts';

type JsonObject = { readonly [key: string]: unknown };

/** The configuration file's JSON Schema, as shipped (deep-frozen: shared by the validator and the OpenAPI document). */
export const configSchema: JsonObject = deepFreeze(
  JSON.parse(readFileSync(new URL('./trawl.schema.json', import.meta.url), 'utf8')) as JsonObject,
);

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
  http: { maxBodyBytes: 1048576, shutdownTimeoutMs: 10000, keepAliveMs: 15000, maxSourceBytes: 10485760, trustedProxies: [] },
  // metrics.auth stays unset: it follows anonymousAccess (which `trawl serve` turns on without a file).
  metrics: {},
  rateLimit: { requestsPerDay: 10000, store: 'embedded' },
  oauth: { grantLifetimeDays: 90 },
  audit: { retentionDays: 180 },
  search: { maxMatches: 100000, timeoutMs: 20000, maxConcurrent: 4, maxQueued: 100 },
  maxFileSize: 2097152,
  reindexIntervalMs: 3600000,
  syncConcurrency: 2,
  retryBaseMs: 60000,
  retryMaxMs: 21600000,
  symbols: true,
};

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
  return { settings: structuredClone(DEFAULT_SETTINGS), connections: {}, license: { publicKeys: [] } };
}

// ---------------------------------------------------------------------------------------
// Entry points

/** Reads, validates and completes the configuration file at `path`; throws ConfigError. */
export function loadConfig(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a file' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
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
  const validate = validator();
  if (!validate(parsed.value)) problems.push(...explain(validate.errors ?? [], parsed.offsets));
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
// Validation

let compiled: ValidateFunction | undefined;

/** Compiled on first use: compiling costs milliseconds that most commands (search, index) never need. */
function validator(): ValidateFunction {
  compiled ??= new Ajv2020({
    allErrors: true,
    // `verbose` gives each error its schema object, which is how problems are recognised
    // below (schema paths are unstable: ajv inlines some $refs and not others).
    verbose: true,
    discriminator: true,
    strict: true,
    // `required` is used where the properties are declared elsewhere (the union's "type" in
    // its branches, the selection rules' lists beside the anyOf), which strictRequired rejects.
    strictRequired: false,
  }).compile(configSchema);
  return compiled;
}

const defs = configSchema['$defs'] as Record<string, JsonObject>;
/** The connection types, in the schema's order (for messages: the schema is the one list). */
const CONNECTION_TYPES: readonly string[] = (defs['connection']!['oneOf'] as Array<{ $ref: string }>).map((branch) => {
  const def = defs[branch.$ref.replace('#/$defs/', '')]!;
  return (def['properties'] as Record<string, JsonObject>)['type']!['const'] as string;
});

interface LocatedProblem extends ConfigProblem {
  offset?: number;
}

/** Turns ajv's errors into one readable problem each. */
function explain(errors: readonly ErrorObject[], offsets: ReadonlyMap<string, number>): LocatedProblem[] {
  // `if`/`then` rules (Bitbucket Server): the then-errors carry the condition; the if-error itself says nothing more.
  const conditions = errors
    .filter((e) => e.keyword === 'if' && (e.params as { failingKeyword?: string }).failingKeyword === 'then')
    .map((e) => ({
      instancePath: e.instancePath,
      prefix: e.schemaPath.replace(/\/if$/, '/then/'),
      text: describeCondition((e.parentSchema as JsonObject | undefined)?.['if']),
    }));
  const conditionOf = (e: ErrorObject): string | undefined =>
    conditions.find((c) => within(e.instancePath, c.instancePath) && e.schemaPath.startsWith(c.prefix))?.text;

  // anyOf failures are reported once, as the rule they express; the failures of each branch would only repeat it.
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  // A branch that is a $ref (settings.metrics.auth's secretRef) is compiled on its own:
  // its errors carry that definition's paths, so they are told by their schema object.
  const refsOf = (a: ErrorObject): unknown[] =>
    Array.isArray(a.schema) ? a.schema.map((b) => (b as JsonObject)['$ref']).filter((r): r is string => typeof r === 'string').map((r) => defs[r.replace('#/$defs/', '')]) : [];
  const insideAnyOf = (e: ErrorObject): boolean =>
    anyOfs.some(
      (a) =>
        a !== e &&
        within(e.instancePath, a.instancePath) &&
        (e.schemaPath.startsWith(`${a.schemaPath}/`) || refsOf(a).some((def) => def !== undefined && e.parentSchema === def)),
    );

  const out: LocatedProblem[] = [];
  const add = (pointer: string, message: string): void => {
    const offset = offsets.get(pointer) ?? nearestOffset(pointer, offsets);
    out.push(offset === undefined ? { pointer, message } : { pointer, message, offset });
  };

  for (const e of errors) {
    if (e.keyword === 'if' || e.keyword === 'propertyNames' || insideAnyOf(e)) continue;
    const schema = e.parentSchema as JsonObject | undefined;
    const when = conditionOf(e);
    const suffix = when ? ` when ${when}` : '';

    if (e.propertyName !== undefined) {
      // Inside propertyNames: the fault is the key itself.
      const pointer = `${e.instancePath}/${escapePointer(e.propertyName)}`;
      const what = e.instancePath === '/connections' ? 'connection name' : 'property name';
      const rule = patternRule(schema);
      add(pointer, `invalid ${what} ${JSON.stringify(e.propertyName)}: ${rule ? `must be ${rule}` : e.message ?? 'not allowed'}`);
      continue;
    }

    if (schema === defs['secretRef'] && (e.keyword === 'type' || e.keyword === 'required')) {
      add(e.instancePath, `must be {"env": "NAME"}: secrets are never written in the file; name the environment variable that holds it`);
      continue;
    }

    switch (e.keyword) {
      case 'additionalProperties': {
        const name = (e.params as { additionalProperty: string }).additionalProperty;
        const allowed = Object.keys((schema?.['properties'] as JsonObject | undefined) ?? {});
        const guess = closest(name, allowed);
        let message = `unknown property ${JSON.stringify(name)}`;
        if (schema === defs['secretRef']) message += ': a secret is only {"env": "NAME"}; secrets are never written in the file';
        else if (guess) message += ` (did you mean ${JSON.stringify(guess)}?)`;
        else message += `; allowed here: ${quoteList(allowed)}`;
        add(`${e.instancePath}/${escapePointer(name)}`, message);
        break;
      }
      case 'required': {
        const name = (e.params as { missingProperty: string }).missingProperty;
        let message = `missing required property ${JSON.stringify(name)}`;
        if (name === 'type' && schema === defs['connection']) message += `, one of ${quoteList(CONNECTION_TYPES)}`;
        add(e.instancePath, when ? `${message} (required when ${when})` : message);
        break;
      }
      case 'discriminator': {
        const { error, tagValue } = e.params as { error: string; tagValue?: unknown };
        const data = e.data as JsonObject | undefined;
        if (error === 'tag' && data?.['type'] === undefined) break; // the `required` error says it
        const value = error === 'mapping' ? tagValue : data?.['type'];
        const guess = typeof value === 'string' ? closest(value, CONNECTION_TYPES) : undefined;
        add(
          `${e.instancePath}/type`,
          `unknown connection type ${describeValue(value)}${guess ? ` (did you mean ${JSON.stringify(guess)}?)` : ''}; allowed types: ${quoteList(CONNECTION_TYPES)}`,
        );
        break;
      }
      case 'anyOf':
        add(e.instancePath, `${describeAnyOf(e.schema, e.data)}${when ? ` (since ${when})` : ''}`);
        break;
      case 'false schema':
        add(e.instancePath, `not allowed${suffix}`);
        break;
      case 'type': {
        const expected = String((e.params as { type: string }).type)
          .split(',')
          .map((t) => TYPE_NAMES[t] ?? t)
          .join(' or ');
        add(e.instancePath, `must be ${expected}, not ${describeValue(e.data)}`);
        break;
      }
      case 'enum': {
        const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
        const guess = typeof e.data === 'string' ? closest(e.data, allowed.filter((v): v is string => typeof v === 'string')) : undefined;
        add(
          e.instancePath,
          `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}, not ${describeValue(e.data)}${guess ? ` (did you mean ${JSON.stringify(guess)}?)` : ''}`,
        );
        break;
      }
      case 'const':
        add(e.instancePath, `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}, not ${describeValue(e.data)}`);
        break;
      case 'minimum':
      case 'maximum': {
        const limit = (e.params as { limit: number }).limit;
        add(e.instancePath, `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${limit}, not ${describeValue(e.data)}`);
        break;
      }
      case 'minLength':
        add(e.instancePath, (e.params as { limit: number }).limit === 1 ? 'must not be empty' : e.message ?? 'too short');
        break;
      case 'pattern': {
        let message = `must be ${patternRule(schema) ?? `a string matching ${JSON.stringify((e.params as { pattern: string }).pattern)}`}, not ${describeValue(e.data)}`;
        // A URL with user:password@ is a secret in the file.
        if (schema === defs['httpUrl'] && typeof e.data === 'string' && /^[a-z]+:\/\/[^/]*@/i.test(e.data)) {
          message += '; credentials go in "token": {"env": "NAME"}, never in the file';
        }
        add(e.instancePath, message);
        break;
      }
      default:
        add(e.instancePath, `${e.message ?? 'is invalid'}${suffix}`);
    }
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'an object',
  array: 'a list',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  null: 'null',
};

/**
 * A pattern's rule in words, to follow "must be": the first sentence of the description of
 * the $defs entry that holds it ("A single name (no "/")."), so the schema stays the one place
 * that says what a value may look like.
 */
function patternRule(schema: JsonObject | undefined): string | undefined {
  const description = schema?.['description'];
  if (typeof description !== 'string' || !Object.values(defs).includes(schema!)) return undefined;
  const text = description.split(/\.(?:\s|$)/)[0]!;
  return /^(A|An) /.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

/** `anyOf: [{required: ["orgs"]}, ...]` is the "select something" rule of a host connection. */
function describeAnyOf(branches: unknown, value: unknown): string {
  // A choice of values or a secret (settings.metrics.auth): name them.
  const forms = Array.isArray(branches)
    ? branches.flatMap((b): string[] => {
        const branch = b as JsonObject;
        if (Array.isArray(branch['enum'])) return branch['enum'].map((v) => JSON.stringify(v));
        return branch['$ref'] === '#/$defs/secretRef' ? ['{"env": "NAME"}'] : [];
      })
    : [];
  if (forms.length > 0) return `must be ${forms.slice(0, -1).join(', ')} or ${forms[forms.length - 1]}, not ${describeValue(value)}`;
  const names = Array.isArray(branches)
    ? branches.map((b) => ((b as JsonObject)['required'] as string[] | undefined)?.[0]).filter((n): n is string => typeof n === 'string')
    : [];
  if (names.length === 0) return 'matches none of the allowed forms';
  return `nothing selected to index: add a non-empty ${quoteList(names, 'or')} list`;
}

/** `if: {properties: {deploymentType: {const: "server"}}}` → `"deploymentType" is "server"`. */
function describeCondition(ifSchema: unknown): string | undefined {
  const props = (ifSchema as JsonObject | undefined)?.['properties'] as Record<string, JsonObject> | undefined;
  if (!props) return undefined;
  const parts = Object.entries(props)
    .filter(([, s]) => 'const' in s)
    .map(([k, s]) => `${JSON.stringify(k)} is ${JSON.stringify(s['const'])}`);
  return parts.length > 0 ? parts.join(' and ') : undefined;
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return 'a list';
  if (v !== null && typeof v === 'object') return 'an object';
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
}

function quoteList(items: readonly unknown[], last = ''): string {
  const quoted = items.map((i) => JSON.stringify(i));
  if (!last || quoted.length < 2) return quoted.join(', ');
  return `${quoted.slice(0, -1).join(', ')} ${last} ${quoted.at(-1)}`;
}

/** The allowed name a typo most likely meant, if any is close. */
function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== undefined && bestDistance <= Math.min(2, Math.floor(best.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** Rules the schema cannot express (they relate two values, or need a parser). Works on unvalidated data, so it guards every access. */
function crossChecks(value: unknown, offsets: ReadonlyMap<string, number>): LocatedProblem[] {
  const out: LocatedProblem[] = [];
  const add = (pointer: string, message: string): void => {
    const offset = offsets.get(pointer);
    out.push(offset === undefined ? { pointer, message } : { pointer, message, offset });
  };
  const settings = isObject(value) && isObject(value['settings']) ? value['settings'] : {};
  const base = typeof settings['retryBaseMs'] === 'number' ? settings['retryBaseMs'] : DEFAULT_SETTINGS.retryBaseMs;
  const max = typeof settings['retryMaxMs'] === 'number' ? settings['retryMaxMs'] : DEFAULT_SETTINGS.retryMaxMs;
  if (base > max) add('retryMaxMs' in settings ? '/settings/retryMaxMs' : '/settings/retryBaseMs', `retryMaxMs (${max}) must not be less than retryBaseMs (${base})`);
  const proxies = isObject(settings['http']) ? settings['http']['trustedProxies'] : undefined;
  if (Array.isArray(proxies)) {
    proxies.forEach((p, i) => {
      if (typeof p === 'string' && !isAddressOrRange(p)) add(`/settings/http/trustedProxies/${i}`, `${JSON.stringify(p)} is not an IP address or CIDR range (e.g. "10.0.0.5", "10.0.0.0/8", "fd00::/8")`);
    });
  }
  return out;
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
}

interface FileConfig {
  settings?: Partial<Omit<Settings, 'rateLimit' | 'audit' | 'search' | 'http' | 'metrics' | 'oauth'>> & {
    metrics?: Partial<Settings['metrics']>;
    oauth?: Partial<Settings['oauth']>;
    rateLimit?: Partial<Settings['rateLimit']>;
    audit?: Partial<Settings['audit']>;
    search?: Partial<Settings['search']>;
    http?: Partial<Settings['http']>;
  };
  connections?: Record<string, FileConnection>;
  license?: { publicKeys?: string[] };
}

function complete(file: FileConfig, absolutePath: string): Config {
  const d = DEFAULT_SETTINGS;
  const s = file.settings ?? {};
  const settings: Settings = {
    anonymousAccess: s.anonymousAccess ?? d.anonymousAccess,
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
    search: {
      maxMatches: s.search?.maxMatches ?? d.search.maxMatches,
      timeoutMs: s.search?.timeoutMs ?? d.search.timeoutMs,
      maxConcurrent: s.search?.maxConcurrent ?? d.search.maxConcurrent,
      maxQueued: s.search?.maxQueued ?? d.search.maxQueued,
    },
    maxFileSize: s.maxFileSize ?? d.maxFileSize,
    reindexIntervalMs: s.reindexIntervalMs ?? d.reindexIntervalMs,
    syncConcurrency: s.syncConcurrency ?? d.syncConcurrency,
    retryBaseMs: s.retryBaseMs ?? d.retryBaseMs,
    retryMaxMs: s.retryMaxMs ?? d.retryMaxMs,
    symbols: s.symbols ?? d.symbols,
  };
  if (s.publicUrl !== undefined) settings.publicUrl = s.publicUrl.replace(/\/+$/, '');
  const dir = dirname(absolutePath);
  const connections: Record<string, Connection> = {};
  for (const [name, c] of Object.entries(file.connections ?? {})) connections[name] = completeConnection(c, dir);
  return { path: absolutePath, settings, connections, license: { publicKeys: [...(file.license?.publicKeys ?? [])] } };
}

function completeConnection(c: FileConnection, dir: string): Connection {
  const revisions: Revisions = { branches: [...(c.revisions?.branches ?? [])], tags: [...(c.revisions?.tags ?? [])] };
  if (c.type === 'git') return { type: 'git', url: resolveGitLocation(c.url!, dir), revisions };

  const deploymentType = c.deploymentType ?? 'cloud';
  // The schema requires url exactly where there is no default (gerrit, Bitbucket Server).
  const defaultUrl = c.type === 'gerrit' || (c.type === 'bitbucket' && deploymentType === 'server') ? undefined : DEFAULT_HOST_URLS[c.type];
  const url = c.url ?? defaultUrl;
  if (url === undefined) throw new Error(`internal: ${c.type} connection without url passed validation`);
  const common = {
    // Hosts' API paths are appended to it, so "https://host/" and "https://host" must be the same.
    url: url.replace(/\/+$/, ''),
    ...(c.token ? { token: { env: c.token.env } } : {}),
    exclude: { forks: c.exclude?.forks ?? false, archived: c.exclude?.archived ?? false, repos: [...(c.exclude?.repos ?? [])] },
    revisions,
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

/** The offset of the closest enclosing value that has one. */
function nearestOffset(pointer: string, offsets: ReadonlyMap<string, number>): number | undefined {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf('/'))) {
    const o = offsets.get(p);
    if (o !== undefined || p === '') return o;
  }
}

/** Whether JSON pointer `pointer` is `ancestor` or inside it ("/a/b" is inside "/a", "/ab" is not). */
function within(pointer: string, ancestor: string): boolean {
  return pointer === ancestor || pointer.startsWith(`${ancestor}/`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
