// `trawl watches ...` (docs/command-line.md, docs/watches.md): the members' watches, for
// operators, offline on the data dir's store. "add" makes one for a member with the rules
// of POST /api/watches (the url's policy, settings.watches.maxPerUser, maxMatches), its
// baseline searched in this process on the index on disk as that member sees it (their
// permissions, resolved as the daemon resolves them); it does not check the other watches
// (WatchEvaluator.create's checkFirst: false): the daemon does, and two evaluators would
// record each change twice. "list", "events" and "rm" read and delete what the store holds.
// Names, queries, URLs, emails and paths are printed escaped (format.ts); the lines of
// code an event reports are printed as they are, as trawl search prints them.

import { parseArgs } from 'node:util';
import { StoreAuthenticator } from '../auth/authenticator.ts';
import { controlCharacterProblem } from '../auth/control-characters.ts';
import { installationSecret } from '../auth/credentials.ts';
import { RepositoryPermissions } from '../auth/permissions.ts';
import { defaultConfig, loadConfig } from '../config/load.ts';
import type { Config } from '../config/types.ts';
import { ServiceError } from '../errors.ts';
import { Catalog } from '../http/catalog.ts';
import { SearchContexts } from '../http/contexts.ts';
import { watchJson } from '../http/handlers/watches.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { IndexView } from '../index/index-health.ts';
import { planSearch } from '../search/plan-cache.ts';
import { MAX_QUERY_BYTES } from '../search/request.ts';
import { Searcher } from '../search/searcher.ts';
import { openConfiguredStore } from '../store/open.ts';
import type { Store, WatchEventRecord, WatchRecord } from '../store/store.ts';
import { watchSecret } from '../watches/signature.ts';
import { checkWatchUrl } from '../watches/url-policy.ts';
import { WatchEvaluator, type NewWatch } from '../watches/watch-evaluator.ts';
import { eventJson, type WatchEventBody } from '../watches/watch-event.ts';
import { WatchFeed } from '../watches/watch-feed.ts';
import { findConfigFile } from './config-file.ts';
import { escaped, escapeControl, formatTable, jsonText } from './format.ts';
import { UsageError } from './usage.ts';
import { defaultIo, none, one, userByEmail, type Io } from './users-command.ts';

export const WATCHES_HELP = `usage: trawl watches list [--user EMAIL] [--json]
       trawl watches add --user EMAIL --name NAME --query QUERY [--regex] [--case] [--url URL]
       trawl watches events ID [--after N] [--limit N] [--json]
       trawl watches rm ID

Watches: members' saved queries whose new and removed matches, after each change of the
index, the daemon records as events (and POSTs, signed, to the watch's URL) (docs/watches.md).

"list" shows every watch (or one member's): id, owner, name, query, URL, changes
delivered, dead letters, when its matches last changed. "add" makes a watch for the member,
as POST /api/watches would (the same limits), its baseline searched now on the data dir's
index as the member sees it; it prints the watch's id and, with --url, its signing secret,
each alone on a line of stdout: the secret is shown once. It does not check the other
watches: the daemon does, at its next check. "events" lists a watch's recorded changes,
oldest first (the lines added and removed, each event's delivery); "rm" deletes a watch
with its events.

  --user EMAIL       the member (add: whose watch it is; list: only theirs)
  --name NAME        what the watch is called (at most 100 characters)
  --query QUERY      a search query, as trawl search takes it
  --regex            QUERY's terms are regular expressions
  --case             case-sensitive
  --url URL          where each change is POSTed (http or https; not inside the network
                     unless settings.watches.allowPrivateUrls)
  --after N          events after the event id N (default 0)
  --limit N          at most N events (1 to 1000, default 100)
  --json             list: the watches as GET /api/watches shows them, with ownerEmail;
                     events: as GET /api/watches/ID/events shows them
  --config FILE      the configuration (default $TRAWL_CONFIG, else ./trawl.json): its
                     settings.watches and permissions apply
  --data-dir DIR     data directory`;

const COMMON = { 'data-dir': { type: 'string' }, config: { type: 'string' }, verbose: { type: 'boolean' } } as const;
const NAME_MAX = 100;
const EVENTS_DEFAULT = 100;
const EVENTS_MAX = 1000;

export async function watchesCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list':
      return listCommand(rest, io);
    case 'add':
      return addCommand(rest, io);
    case 'events':
      return eventsCommand(rest, io);
    case 'rm':
      return rmCommand(rest, io);
    default:
      throw new UsageError(`watches takes list, add, events or rm${sub ? `, not "${sub}"` : ''}`);
  }
}

/** The configuration the daemon of this data dir reads: --config, $TRAWL_CONFIG, ./trawl.json, else the defaults. */
function configOf(flag: string | undefined): Config {
  const path = findConfigFile(flag);
  return path === undefined ? defaultConfig() : loadConfig(path);
}

async function withWatchStore(
  values: { 'data-dir'?: string; config?: string },
  fn: (store: Store, config: Config, dataDir: string) => Promise<number>,
): Promise<number> {
  const dataDir = resolveDataDir(values['data-dir']);
  const config = configOf(values.config);
  const store = openConfiguredStore(config, dataDir);
  try {
    return await fn(store, config, dataDir);
  } finally {
    await store.close();
  }
}

async function listCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { user: { type: 'string' }, json: { type: 'boolean' }, ...COMMON } });
  none(positionals, 'watches list');
  if (values.user === '') throw new UsageError('--user needs an EMAIL');
  return withWatchStore(values, async (store) => {
    const user = values.user === undefined ? undefined : await userByEmail(store, values.user);
    const watches = await store.watches.list(user?.id);
    const emails = new Map<string, string>();
    for (const w of watches) if (!emails.has(w.userId)) emails.set(w.userId, (await store.getUser(w.userId))?.email ?? `(user ${w.userId}, gone)`);
    if (values.json) {
      io.out(jsonText(watches.map((w) => ({ ...watchJson(w), ownerEmail: emails.get(w.userId) }))));
      return 0;
    }
    if (watches.length === 0) {
      io.out(user ? escaped`no watches of ${user.email}` : 'no watches (trawl watches add --user EMAIL --name NAME --query QUERY makes one)');
      return 0;
    }
    const head = ['ID', 'OWNER', 'NAME', 'QUERY', 'URL', 'DELIVERED', 'DEAD LETTERS', 'LAST CHANGED'];
    const rows = watches.map((w) =>
      [String(w.id), emails.get(w.userId)!, w.name, queryText(w), w.url ?? '-', String(w.delivered), String(w.deadLetters), w.lastChangedAt ?? 'never'].map(
        escapeControl,
      ),
    );
    for (const line of formatTable(head, rows)) io.out(line);
    return 0;
  });
}

/** The query with its flags: `watch_token (regex, case-sensitive)`. */
function queryText(w: Pick<WatchRecord, 'query' | 'isRegexEnabled' | 'isCaseSensitivityEnabled'>): string {
  const flags = [...(w.isRegexEnabled ? ['regex'] : []), ...(w.isCaseSensitivityEnabled ? ['case-sensitive'] : [])];
  return flags.length === 0 ? w.query : `${w.query} (${flags.join(', ')})`;
}

/** The watch a command names by id; a missing one is refused (exit 1). */
async function watchById(store: Store, text: string): Promise<WatchRecord> {
  if (!/^[1-9][0-9]{0,15}$/.test(text)) throw new UsageError(`a watch id is a positive whole number, got "${text}"`);
  const watch = await store.watches.get(Number(text));
  if (!watch) throw new Error(`no watch with id ${text} (trawl watches list shows them)`);
  return watch;
}

async function rmCommand(args: string[], io: Io): Promise<number> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { ...COMMON } });
  const id = one(positionals, 'watches rm ID');
  return withWatchStore(values, async (store) => {
    const watch = await watchById(store, id);
    if (!(await store.watches.delete(watch.id))) throw new Error(`no watch with id ${id} (trawl watches list shows them)`);
    const email = (await store.getUser(watch.userId))?.email ?? watch.userId;
    io.out(escaped`watch ${watch.id} (${watch.name}) of ${email} deleted, with its matches and events`);
    return 0;
  });
}

async function eventsCommand(args: string[], io: Io): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { after: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' }, ...COMMON },
  });
  const id = one(positionals, 'watches events ID [--after N] [--limit N] [--json]');
  const after = wholeNumber('--after', values.after ?? '0', 0, Number.MAX_SAFE_INTEGER);
  const limit = wholeNumber('--limit', values.limit ?? String(EVENTS_DEFAULT), 1, EVENTS_MAX);
  return withWatchStore(values, async (store) => {
    const watch = await watchById(store, id);
    const events = await store.watches.eventsAfter(watch.id, after, limit);
    if (values.json) {
      io.out(jsonText(events.map(eventJson)));
      return 0;
    }
    if (events.length === 0) io.out(after === 0 ? escaped`no changes recorded for watch ${watch.id} (${watch.name})` : `no changes after event ${after}`);
    for (const e of events) for (const line of eventLines(e)) io.out(line);
    return 0;
  });
}

function wholeNumber(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} must be a whole number between ${min} and ${max}, got "${text}"`);
  return n;
}

/** `event 7  at  repository @ commit  delivery`, then `  + path:line: text` per line added and `  - ...` per line removed. */
function eventLines(e: WatchEventRecord): string[] {
  const body = JSON.parse(e.payload) as WatchEventBody;
  const r = body.repository;
  const where = r.commit === undefined ? escaped`${r.name || `repository ${r.id}`}` : escaped`${r.name || `repository ${r.id}`} @ ${r.commit.slice(0, 12)}`;
  const lines = [escaped`event ${e.id}  ${e.createdAt}  ${where}  ` + deliveryText(e)];
  // A match's text is the file's line, shown as trawl search shows it; its path is escaped.
  const match = (sign: string, m: { path: string; line: number; text: string }) =>
    m.line === 0 ? escaped`  ${sign} ${m.path} (its name matches)` : `${escaped`  ${sign} ${m.path}:${m.line}:`} ${m.text}`;
  for (const m of body.added) lines.push(match('+', m));
  for (const m of body.removed) lines.push(match('-', m));
  return lines;
}

function deliveryText(e: WatchEventRecord): string {
  const attempts = `${e.attempts} attempt${e.attempts === 1 ? '' : 's'}`;
  const error = e.lastError === undefined ? '' : escaped`, last error: ${e.lastError}`;
  switch (e.state) {
    case 'none':
      return e.attempts === 0 && e.lastError === undefined ? 'not POSTed (no url)' : `withheld after ${attempts}${error}`;
    case 'pending':
      return `pending (${attempts}${e.nextAttemptAt ? `, next at ${e.nextAttemptAt}` : ''}${error})`;
    case 'delivered':
      return `delivered (${attempts})`;
    case 'dead':
      return `dead letter after ${attempts}${error}`;
  }
}

async function addCommand(args: string[], io: Io): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      name: { type: 'string' },
      query: { type: 'string' },
      regex: { type: 'boolean' },
      case: { type: 'boolean' },
      url: { type: 'string' },
      ...COMMON,
    },
  });
  none(positionals, 'watches add');
  const { user: email, name, query } = values;
  if (!email || name === undefined || query === undefined) throw new UsageError('watches add needs --user EMAIL, --name NAME and --query QUERY');
  // The API's rules for the body (schemas/watches.ts NewWatch): a refusal, not bad usage.
  const bad = (why: string) => new ServiceError('INVALID_REQUEST_BODY', why);
  const nameProblem = controlCharacterProblem('--name', name);
  if (nameProblem !== undefined) throw bad(nameProblem);
  if (name.length === 0 || name.length > NAME_MAX) throw bad(`--name must be 1 to ${NAME_MAX} characters, got ${name.length}`);
  if (query.length === 0 || Buffer.byteLength(query) > MAX_QUERY_BYTES)
    throw bad(`--query must be 1 to ${MAX_QUERY_BYTES} bytes, got ${Buffer.byteLength(query)}`);
  return withWatchStore(values, async (store, config, dataDir) => {
    // A node's own index may hold only some of the cluster's repositories: the watch's
    // baseline is taken from the cluster's, through a node's API.
    if (config.cluster)
      throw new Error("in a cluster, watches are made through a node's API (POST /api/watches), whose baseline is the whole cluster's index: not made");
    const settings = config.settings.watches;
    const user = await userByEmail(store, email);
    if (user.suspendedAt !== undefined) throw new Error(escaped`${user.email} is suspended: their watches are not evaluated (trawl users unsuspend EMAIL)`);
    const input: NewWatch = { userId: user.id, name, query, isRegexEnabled: values.regex === true, isCaseSensitivityEnabled: values.case === true };
    if (values.url !== undefined) input.url = checkWatchUrl(values.url, settings.allowPrivateUrls).href;
    if ((await store.watches.list(user.id)).length >= settings.maxPerUser)
      throw new ServiceError(
        'WATCH_LIMIT_REACHED',
        escaped`${user.email} has ${settings.maxPerUser} watches, the most settings.watches.maxPerUser allows: delete one first (trawl watches rm ID)`,
      );
    const secret = await installationSecret(store, config, dataDir);
    const { made, matches } = await makeWatch({ store, config, dataDir, secret }, input);
    io.out(String(made.id));
    if (made.url !== undefined) io.out(watchSecret(secret, made.salt));
    const lines = `${matches} matching line${matches === 1 ? '' : 's'} now (its baseline)`;
    io.err(
      escaped`trawl: watch ${made.id} (${made.name}) for ${user.email}: ${lines}` +
        (made.url === undefined ? '' : escaped`; its changes are POSTed to ${made.url}, signed with the secret printed above: shown once, store it now`),
    );
    return 0;
  });
}

/**
 * The watch made by an evaluator of this process over the index on disk (its searches in
 * this thread), the member's visibility resolved as the daemon resolves it
 * (StoreAuthenticator.memberSees over the configuration's permissions), `context:` as the
 * daemon's watches take it; with the number of lines its baseline holds.
 */
async function makeWatch(
  parts: { store: Store; config: Config; dataDir: string; secret: Buffer },
  input: NewWatch,
): Promise<{ made: WatchRecord; matches: number }> {
  const { store, config, dataDir, secret } = parts;
  const settings = config.settings;
  let catalog: Catalog | undefined;
  const view = new IndexView(dataDir, {
    onBroken: (b) =>
      process.stderr.write(`${escaped`trawl: repository ${b.name ?? b.repoId}: its index is damaged (${b.reason}); left out of the baseline`}\n`),
    lookup: (id) => {
      const r = catalog?.recordOf(id);
      return r && { name: r.repoName, visibility: r.visibility };
    },
  });
  catalog = new Catalog(dataDir, store, view);
  await catalog.refresh();
  const permissions = new RepositoryPermissions(settings.permissions, config.permissions, catalog, { synced: store.permissions });
  const authenticator = new StoreAuthenticator({ store, secret, anonymousAccess: settings.anonymousAccess, permissions });
  const canSee = await authenticator.memberSees(input.userId);
  if (!canSee) throw new Error('the member is suspended: their watches are not evaluated (trawl users unsuspend EMAIL)');
  const contexts = new SearchContexts(config, store, catalog);
  const searcher = new Searcher({ dataDir, view, workers: 0 });
  try {
    const evaluator = new WatchEvaluator({
      store,
      search: (req, options) => searcher.search(req, options),
      plan: planSearch,
      index: { manifests: () => view.current().manifests, visibility: (m) => view.visibility(m) },
      repoName: async (id) => (await store.getRepo(id))?.repoName,
      owner: (userId) => authenticator.memberSees(userId),
      scope: (userId, sees, named) => contexts.searchFilter({ kind: 'apiKey', userId, canSee: sees }, { named, useDefault: false }),
      feed: new WatchFeed(),
      settings: () => settings.watches,
    });
    const made = await evaluator.create(input, canSee, { checkFirst: false });
    let matches = 0;
    for (const m of view.current().manifests) matches += (await store.watches.matchesOf(made.id, m.repoId)).length;
    return { made, matches };
  } finally {
    await searcher.close();
  }
}
