// Evaluating watches after the index changes.
//
// The watches remember, per repository, the index generation and refs they last saw
// (WatchedRepoState). A check compares them with the index now: for each repository built
// since, the lines its change added and removed are read, and only the watches whose terms
// match them (watch-filter.ts) are searched again, in that repository alone, as their
// owner; the matches found are compared with those recorded (match-set.ts), and a
// difference is recorded as an event (delivered by delivery.ts, streamed through the
// feed). A repository that left the index takes its matches with it: they are reported
// removed.
//
// The change is read from the index (index-change.ts): the state of the index the last
// check ran on stays held until the next check, at most HOLD_MS, and the files of each
// repository built since are compared with those of the state now. When that state is not
// held (the first check of a process, a quiet spell longer than HOLD_MS), the change is
// read from git (changed-text.ts); when it cannot be read at all (a first index, a commit
// git no longer has), every watch is searched in that repository.
//
// A watch whose search could not finish (shards no node could search just then: in a
// cluster, a node gone, or a copy into a compound shard not yet published) is not recorded
// and leaves its repository's state where it was: the next check, which the runtime asks
// for a little later, searches it again on the same change, until RETRY_FOR_MS after the
// first try; then the change is given up for it (logged), as one that cannot be checked.
//
// Checks, and the creation of watches (whose baseline must be taken from the same index
// the next check starts from), run one at a time.

import type { Settings } from '../config/types.ts';
import type { Identity } from '../auth/identity.ts';
import { manifestRepoName, sameDocuments, sameRefs, type LoadedManifest, type Manifest } from '../index/manifest.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../runtime/logger.ts';
import type { PlannedSearch } from '../search/plan-cache.ts';
import type { SearchOptions } from '../search/search-options.ts';
import type { SearchRequest, SearchResponse } from '../search/types.ts';
import type { Store, WatchEventRecord, WatchMatch, WatchRecord, WatchedRepoState } from '../store/store.ts';
import { ShardError } from '../index/shard-error.ts';
import { changedFiles, type IndexHold } from '../search/held-files.ts';
import { changedText, DIFF_MAX_BYTES, type ChangedText, type RefAt } from '../repos/changed-text.ts';
import { changedInIndex } from './index-change.ts';
import { changedMatches, matchesByRepo } from './match-set.ts';
import { changeTest, type ChangeTest } from './watch-filter.ts';
import { watchEventBody } from './watch-event.ts';
import type { WatchFeed } from './watch-feed.ts';
import { newSalt } from './signature.ts';

type CanSee = Identity['canSee'];

/**
 * How long the state of the index a check ran on stays held for the next check to compare
 * with: its replaced shard files stay on disk meanwhile. A change found later is read from git.
 */
export const HOLD_MS = 10 * 60_000;

/** How long a repository's change whose watch searches could not finish is tried again. */
export const RETRY_FOR_MS = 60_000;

/** A watch's search that did not finish: tried again (RETRY_FOR_MS). */
class UnfinishedSearch extends Error {}

type RepoFilter = NonNullable<SearchOptions['repoFilter']>;

export interface WatchEvaluatorDeps {
  store: Pick<Store, 'watches' | 'atomically'>;
  /** Runs a search (the daemon's searcher). */
  search(req: Required<SearchRequest>, options: SearchOptions): Promise<SearchResponse>;
  plan(req: Required<SearchRequest>): PlannedSearch;
  /** The index as it is now: its repositories' manifests, and the visibility each is served with. */
  index: {
    manifests(): readonly LoadedManifest[];
    visibility(m: LoadedManifest): 'public' | 'private';
    /** Holds the index as it is now (the searcher's): absent, every change is read from git. */
    hold?(): IndexHold;
    /** How long a state stays held with no check after it (default HOLD_MS). */
    holdMs?: number;
  };
  /**
   * The change between two sets of refs of a git repository, when no held state of the
   * index tells it: default, from the repository's git source in this process
   * (repos/changed-text.ts); in a cluster, from the node that holds its mirror.
   */
  readChange?(m: Manifest, before: readonly RefAt[]): Promise<ChangedText | undefined>;
  /** A repository's name, for a change reported after it left the index. */
  repoName(repoId: number): Promise<string | undefined>;
  /** What a member may see now; undefined when they cannot act (gone, suspended). */
  owner(userId: string): Promise<CanSee | undefined>;
  /** The repositories a query's `context:` names, as the member would search them; absent: contexts are refused. */
  scope?(userId: string, canSee: CanSee, context: string): Promise<RepoFilter>;
  feed: WatchFeed;
  settings: () => Settings['watches'];
  /**
   * False: every watch is searched after every change of a repository, the changed lines
   * unread (the filter's oracle in the tests). Default true.
   */
  filterByChange?: boolean;
  /**
   * Whether this process checks the watches now (default: always). In a cluster one node
   * does; on the others a check does nothing, and a watch's baseline is the index as it is.
   */
  evaluates?(): boolean;
  /** Told when an event was recorded for a watch with a url (the deliverer wakes). */
  recorded?(event: WatchEventRecord): void;
  now?: () => Date;
  log?: Logger;
}

/** What one check did (the bench's and the metrics' figures). */
export interface CheckReport {
  /** Repositories whose index changed, and those that left it. */
  repos: number;
  removedRepos: number;
  /**
   * Of `repos`, those whose change was read from the index held since the last check, from
   * git, and those whose change could not be told (every watch searched there).
   */
  fromIndex: number;
  fromGit: number;
  unread: number;
  /**
   * Of `repos`, those whose change some watch could not be checked for (its search did not
   * finish): their state stays, and they are checked again.
   */
  deferred: number;
  /** Watch searches run, and those the changed lines ruled out. */
  searched: number;
  skipped: number;
  events: number;
  ms: number;
  /** Of which: reading the changes (from the index, or git), and the watches' searches. */
  changeMs: number;
  searchMs: number;
}

export interface NewWatch {
  userId: string;
  name: string;
  query: string;
  isRegexEnabled: boolean;
  isCaseSensitivityEnabled: boolean;
  url?: string;
}

interface Planned {
  key: string;
  planned: PlannedSearch;
  test: ChangeTest;
}

export class WatchEvaluator {
  readonly #d: WatchEvaluatorDeps;
  #turn: Promise<unknown> = Promise.resolve();
  /** A check asked for and not started yet: later asks join it. */
  #queued: Promise<CheckReport> | undefined;
  readonly #plans = new Map<number, Planned>();
  /** What the watches last saw of each repository (the store's watched_repos), once read. */
  #seen: Map<number, WatchedRepoState> | undefined;
  /**
   * Repositories whose change some watches could not be checked for yet: the generation it
   * led to, the change read then, those watches, and when it was first tried.
   */
  readonly #pending = new Map<number, { generation: number; text: ChangedText | undefined; watches: Set<number>; since: number }>();
  /** The state of the index the last check ran on, held for the next (HOLD_MS). */
  #held: { hold: IndexHold; timer: NodeJS.Timeout } | undefined;
  /** The watches as last read from the store, and the store's revision of them then. */
  #list: { watches: WatchRecord[]; revision: string } | undefined;
  /** The last check's report. */
  last: CheckReport | undefined;

  constructor(deps: WatchEvaluatorDeps) {
    this.#d = deps;
  }

  /** Brings every watch up to the index as it is now (after a sync, a build, a start). */
  check(): Promise<CheckReport> {
    if (this.#d.evaluates?.() === false) return Promise.resolve(this.#done(emptyReport(), performance.now()));
    if (this.#queued) return this.#queued;
    const run = this.#serial(async () => {
      this.#queued = undefined;
      return this.#check();
    });
    this.#queued = run;
    return run;
  }

  /**
   * Makes a watch: its query planned (a bad query is refused as a search would refuse it),
   * its matches now taken as its baseline (refused when more than settings.maxMatches).
   * The other watches are first brought up to the index, unless `checkFirst` is false (a
   * process that is not the evaluating daemon, `trawl watches add`: two evaluators would
   * record each change twice); the baseline is then the index now, and the daemon's next
   * check finds this watch's matches unchanged wherever they already hold its change.
   */
  create(input: NewWatch, canSee: CanSee, options: { checkFirst?: boolean } = {}): Promise<WatchRecord> {
    const planned = this.#d.plan(requestOf(input, 1));
    if (planned.plan.type !== undefined || planned.plan.history)
      throw new ServiceError('FAILED_TO_PARSE_QUERY', 'a watch watches the code as indexed: type:diff, type:commit and history:yes queries cannot be watched');
    return this.#serial(async () => {
      if (options.checkFirst !== false && this.#d.evaluates?.() !== false) await this.#check();
      const max = this.#d.settings().maxMatches;
      const filter = await this.#filter(input.userId, canSee, planned, () => true);
      const res = await this.#d.search(requestOf(input, max + 1), { planned, repoFilter: filter, caller: `watch:${input.userId}` });
      const byRepo = matchesByRepo(res);
      let total = 0;
      for (const list of byRepo.values()) total += list.length;
      if (total > max || !res.isSearchExhaustive)
        throw new ServiceError(
          'WATCH_TOO_BROAD',
          `the query matches ${total > max ? `more than ${max} lines` : 'more than one search could finish'} now: narrow it (settings.watches.maxMatches)`,
        );
      const baseline = [...byRepo].map(([repoId, matches]) => ({ repoId, matches }));
      const made = await this.#d.store.watches.create({ ...input, salt: newSalt() }, baseline, this.#now());
      // The first watch: the index the next check compares with is held from now (by the
      // process that checks: in a cluster, a node that does not holds nothing).
      this.#list = undefined;
      if (!this.#held && this.#d.index.hold && this.#d.evaluates?.() !== false) this.#keep(this.#d.index.hold());
      return made;
    });
  }

  /** Settles once the check or creation under way, if any, has ended. */
  idle(): Promise<void> {
    return this.#turn.then(() => undefined);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#turn.then(fn, fn);
    this.#turn = run.catch(() => {});
    return run;
  }

  #now(): string {
    return (this.#d.now?.() ?? new Date()).toISOString();
  }

  async #check(): Promise<CheckReport> {
    const started = performance.now();
    const report = emptyReport();
    const now = this.#d.index.hold?.();
    try {
      await this.#checkOn(now, report);
    } catch (err) {
      // What the watches saw did not move past the state held before: it stays.
      now?.release();
      throw err;
    }
    // (Held only for watches: with none, the replaced files need not stay.)
    if (this.#list === undefined || this.#list.watches.length > 0) this.#keep(now);
    else {
      this.#keep(undefined);
      now?.release();
    }
    return this.#done(report, started);
  }

  /** Holds `hold` for the next check, releasing the one held before. */
  #keep(hold: IndexHold | undefined): void {
    if (this.#held) {
      clearTimeout(this.#held.timer);
      this.#held.hold.release();
      this.#held = undefined;
    }
    if (!hold) return;
    // (Let go between checks, never under one that reads it.)
    const timer = setTimeout(
      () =>
        void this.#serial(async () => {
          if (this.#held?.hold === hold) this.#keep(undefined);
        }),
      this.#d.index.holdMs ?? HOLD_MS,
    );
    timer.unref();
    this.#held = { hold, timer };
  }

  /** Lets the held state of the index go (the daemon stops). */
  release(): void {
    this.#keep(undefined);
  }

  /**
   * Forgets what was read from the store and the state held: another process may have
   * checked the watches meanwhile (in a cluster, this node has just begun to check them).
   */
  forget(): Promise<void> {
    return this.#serial(async () => {
      this.#seen = undefined;
      this.#list = undefined;
      this.#pending.clear();
      this.#keep(undefined);
    });
  }

  async #checkOn(now: IndexHold | undefined, report: CheckReport): Promise<void> {
    const { store, index } = this.#d;
    // What the watches last saw is read from the store once, then kept here as it is written.
    this.#seen ??= new Map((await store.watches.repoStates()).map((s) => [s.repoId, s]));
    const seen = this.#seen;
    // (The held state gives files only at the generations asked: it may be older, or newer, or
    // in a cluster hold some of the repositories.)
    const manifests = index.manifests();
    const changed = manifests.filter((m) => seen.get(m.repoId)?.generation !== m.generation);
    const present = new Set(manifests.map((m) => m.repoId));
    const gone = [...seen.keys()].filter((id) => !present.has(id));
    if (changed.length === 0 && gone.length === 0) return;
    const watches = await this.#watches();
    const owners = new Map<string, Promise<CanSee | undefined>>();
    const ownerOf = (userId: string) => {
      let o = owners.get(userId);
      if (!o) owners.set(userId, (o = this.#d.owner(userId)));
      return o;
    };
    const states: WatchedRepoState[] = [];
    for (const m of changed) {
      report.repos++;
      if (watches.length > 0 && !(await this.#repoChecked(m, now, watches, ownerOf, report))) continue;
      states.push({ repoId: m.repoId, generation: m.generation, refs: (m.refs ?? []).map((r) => ({ name: r.name, kind: r.kind, commit: r.commit })) });
    }
    // The states move once every watch is recorded, together (a pack's rebuild re-commits
    // every repository of the pack): a check cut short is run again, and finds what was
    // recorded unchanged.
    if (states.length > 0) {
      // (One call, not a transaction held across awaits: that would hold the store's
      // write lock while the event loop turns.)
      await store.watches.setRepoStates(states);
      for (const state of states) seen.set(state.repoId, state);
    }
    for (const repoId of gone) {
      report.removedRepos++;
      await this.#repoGone(repoId, watches, report);
      await store.watches.deleteRepoState(repoId);
      seen.delete(repoId);
      this.#pending.delete(repoId);
    }
  }

  #done(report: CheckReport, started: number): CheckReport {
    report.ms = performance.now() - started;
    this.last = report;
    return report;
  }

  /**
   * The watches, read from the store again only when its revision of them has moved (made
   * or deleted by this process or another, `trawl watches`): a check after every push must
   * not read them all each time.
   */
  async #watches(): Promise<WatchRecord[]> {
    const store = this.#d.store.watches;
    const revision = await store.revision();
    if (this.#list?.revision !== revision) {
      // (Read after the revision: a change between the two is read now, and seen again next time.)
      this.#list = { watches: await store.list(), revision };
      this.#forget(this.#list.watches);
    }
    return this.#list.watches;
  }

  /** Plans of watches deleted or changed are dropped. */
  #forget(watches: readonly WatchRecord[]): void {
    const live = new Set(watches.map((w) => w.id));
    for (const id of this.#plans.keys()) if (!live.has(id)) this.#plans.delete(id);
  }

  #planOf(w: WatchRecord): Planned | undefined {
    const key = `${w.isRegexEnabled ? 1 : 0}${w.isCaseSensitivityEnabled ? 1 : 0}${w.query}`;
    const known = this.#plans.get(w.id);
    if (known?.key === key) return known;
    try {
      const planned = this.#d.plan(requestOf(w, this.#d.settings().maxMatches + 1));
      const p = { key, planned, test: changeTest(planned.plan.root) };
      this.#plans.set(w.id, p);
      return p;
    } catch (err) {
      // A query this version no longer accepts: the watch waits, reported once per check.
      this.#d.log?.warn({ watch: w.id, err: (err as Error).message }, 'a watch query can no longer be planned: it is not evaluated');
      return undefined;
    }
  }

  /**
   * Checks the watches after a repository's change: false when some could not be checked
   * and are to be tried again (its state then stays), true once every one was.
   */
  async #repoChecked(
    m: LoadedManifest,
    now: IndexHold | undefined,
    watches: readonly WatchRecord[],
    ownerOf: (userId: string) => Promise<CanSee | undefined>,
    report: CheckReport,
  ): Promise<boolean> {
    // Tried before on this change: its text as read then, and only the watches left.
    const pending = this.#pending.get(m.repoId);
    const again = pending?.generation === m.generation ? pending : undefined;
    const text = again ? again.text : await this.#changeOf(m, this.#seen?.get(m.repoId), now, report);
    const left = await this.#repoChanged(m, text, again ? watches.filter((w) => again.watches.has(w.id)) : watches, ownerOf, report);
    if (left.size === 0) {
      this.#pending.delete(m.repoId);
      return true;
    }
    const at = this.#clock();
    const since = again?.since ?? at;
    if (at - since >= RETRY_FOR_MS) {
      this.#pending.delete(m.repoId);
      this.#d.log?.warn(
        { repoId: m.repoId, watches: [...left], seconds: RETRY_FOR_MS / 1000 },
        'watches whose searches did not finish after a change, tried again meanwhile: that change is not reported to them',
      );
      return true;
    }
    if (!again) this.#d.log?.info({ repoId: m.repoId, watches: [...left] }, 'watches whose searches did not finish after a change: tried again shortly');
    this.#pending.set(m.repoId, { generation: m.generation, text, watches: left, since });
    report.deferred++;
    return false;
  }

  /** Milliseconds by the evaluator's clock. */
  #clock(): number {
    return (this.#d.now?.() ?? new Date()).getTime();
  }

  /** Searches the watches the change may have touched; those whose search did not finish are returned. */
  async #repoChanged(
    m: LoadedManifest,
    text: ChangedText | undefined,
    watches: readonly WatchRecord[],
    ownerOf: (userId: string) => Promise<CanSee | undefined>,
    report: CheckReport,
  ): Promise<Set<number>> {
    const left = new Set<number>();
    // No file changed (its refs did not move: a pack rebuilt for another repository's
    // change re-commits this one too): no watch's matches can have.
    if (text !== undefined && text.paths.length === 0) {
      report.skipped += watches.length;
      return left;
    }
    for (const w of watches) {
      const p = this.#planOf(w);
      if (!p) continue;
      if (text !== undefined && !p.test(text)) {
        report.skipped++;
        continue;
      }
      try {
        await this.#evaluate(w, p.planned, m, await ownerOf(w.userId), report);
      } catch (err) {
        if (err instanceof UnfinishedSearch || (err instanceof ServiceError && err.errorCode === 'SERVICE_UNAVAILABLE')) {
          left.add(w.id);
          continue;
        }
        // One watch's failure (a context it names was deleted, the watch itself was) is
        // its own: the others are still checked.
        this.#d.log?.warn(
          { watch: w.id, repoId: m.repoId, err: (err as Error).message },
          'a watch could not be checked after a change: that change is not reported',
        );
      }
    }
    return left;
  }

  /**
   * What changed in the repository since `before`: from the held states of the index, else
   * from git; undefined when it cannot be told (or is not to be: every watch is searched).
   */
  async #changeOf(m: LoadedManifest, before: WatchedRepoState | undefined, now: IndexHold | undefined, report: CheckReport): Promise<ChangedText | undefined> {
    if (this.#d.filterByChange === false) return undefined;
    if (before === undefined) {
      report.unread++;
      return undefined;
    }
    const read = performance.now();
    try {
      const text = await this.#readChange(m, before, now, report);
      if (text === undefined) report.unread++;
      return text;
    } finally {
      report.changeMs += performance.now() - read;
    }
  }

  async #readChange(m: LoadedManifest, before: WatchedRepoState, now: IndexHold | undefined, report: CheckReport): Promise<ChangedText | undefined> {
    const old = this.#held?.hold.manifest(m.repoId);
    // Moved, not rebuilt (a merge of compound shards re-commits every repository it moves):
    // no file changed, and none is read.
    if (old?.generation === before.generation && sameDocuments(old, m)) {
      report.fromIndex++;
      return { lines: Buffer.alloc(0), paths: [] };
    }
    const was = this.#held?.hold.parts(m.repoId, before.generation);
    const is = was && now?.parts(m.repoId, m.generation);
    if (was && is) {
      let text: ChangedText | undefined;
      try {
        const changed = changedFiles(was, is);
        text = changed && changedInIndex(changed.before, changed.after, DIFF_MAX_BYTES);
      } catch (err) {
        // A damaged document: its searches report it; its change is not known.
        if (!(err instanceof ShardError)) throw err;
      }
      if (text) report.fromIndex++;
      return text;
    }
    if (m.version !== 2 || m.repo.kind !== 'git') return undefined;
    // Built again at the same commits (git tells no change then: nothing to ask of it, or
    // of another node in a cluster, which may be gone).
    if (sameRefs(before.refs, m.refs)) {
      report.fromGit++;
      return { lines: Buffer.alloc(0), paths: [] };
    }
    const text = await (this.#d.readChange ? this.#d.readChange(m, before.refs) : changedText(m.repo.source, before.refs, m.refs));
    if (text) report.fromGit++;
    return text;
  }

  /** Searches the watch in the repository again and records what changed. */
  async #evaluate(w: WatchRecord, planned: PlannedSearch, m: LoadedManifest, canSee: CanSee | undefined, report: CheckReport): Promise<void> {
    const repo = { repoId: m.repoId, visibility: this.#d.index.visibility(m) };
    // An owner who cannot act, or may not see the repository, is not searched for: what
    // the watch recorded there stays until they may again.
    if (canSee?.(repo) !== true) return;
    const filter = await this.#filter(w.userId, canSee, planned, (r) => r.repoId === m.repoId);
    report.searched++;
    const max = this.#d.settings().maxMatches;
    const searched = performance.now();
    // One repository: its candidates are found in this thread, not sent to the workers first.
    const res = await this.#d.search(requestOf(w, max + 1), { planned, repoFilter: filter, caller: `watch:${w.userId}`, candidatesHere: true });
    report.searchMs += performance.now() - searched;
    const after = matchesByRepo(res).get(m.repoId) ?? [];
    // An answer that is not whole would report what it missed as removed.
    if (after.length > max) throw new Error(`the watch matches more than settings.watches.maxMatches (${max}) lines in this repository`);
    if (!res.isSearchExhaustive) throw new UnfinishedSearch('its search did not finish');
    const tip = m.refs?.[0];
    await this.#record(w, m.repoId, { id: m.repoId, name: manifestRepoName(m), ...(tip ? { commit: tip.commit } : {}) }, after, report);
  }

  async #repoGone(repoId: number, watches: readonly WatchRecord[], report: CheckReport): Promise<void> {
    const byId = new Map(watches.map((w) => [w.id, w]));
    for (const id of await this.#d.store.watches.watchesIn(repoId)) {
      const w = byId.get(id);
      if (!w) continue;
      await this.#record(w, repoId, { id: repoId, name: (await this.#d.repoName(repoId)) ?? '' }, [], report);
    }
  }

  /** Records the watch's matches in the repository now, and the change from before as an event. */
  async #record(
    w: WatchRecord,
    repoId: number,
    repository: { id: number; name: string; commit?: string },
    after: WatchMatch[],
    report: CheckReport,
  ): Promise<void> {
    const store = this.#d.store.watches;
    const before = await store.matchesOf(w.id, repoId);
    const change = changedMatches(before, after);
    if (change.added.length === 0 && change.removed.length === 0) return;
    const at = this.#now();
    const payload = JSON.stringify(watchEventBody(w, repository, change, at));
    // Together: a crash between the two would lose the change (matches moved, no event) or
    // report it again. The repository's state moves after every watch is recorded, so a
    // check cut short is run again, and finds what was recorded unchanged.
    const id = await this.#d.store.atomically(async () => {
      await store.setMatches(w.id, repoId, after);
      return store.addEvent(w.id, payload, at);
    });
    report.events++;
    const event: WatchEventRecord = { id, watchId: w.id, payload, createdAt: at, state: w.url === undefined ? 'none' : 'pending', attempts: 0 };
    if (w.url !== undefined) {
      event.nextAttemptAt = at;
      this.#d.recorded?.(event);
    }
    this.#d.feed.publish(event);
  }

  /** The repositories a watch's search may read: its owner's, narrowed to its query's context and to `also`. */
  async #filter(userId: string, canSee: CanSee, planned: PlannedSearch, also: RepoFilter): Promise<RepoFilter> {
    const context = planned.plan.context;
    if (context === undefined) return (r) => also(r) && canSee(r);
    if (!this.#d.scope) throw new ServiceError('FAILED_TO_PARSE_QUERY', 'context: cannot be used in a watch here');
    const scoped = await this.#d.scope(userId, canSee, context);
    return (r) => also(r) && scoped(r);
  }
}

function emptyReport(): CheckReport {
  return { repos: 0, removedRepos: 0, fromIndex: 0, fromGit: 0, unread: 0, deferred: 0, searched: 0, skipped: 0, events: 0, ms: 0, changeMs: 0, searchMs: 0 };
}

/** A watch's search: its query, every match up to `matches`, no context lines. */
function requestOf(w: Pick<WatchRecord, 'query' | 'isRegexEnabled' | 'isCaseSensitivityEnabled'>, matches: number): Required<SearchRequest> {
  return { query: w.query, matches, contextLines: 0, whole: false, isRegexEnabled: w.isRegexEnabled, isCaseSensitivityEnabled: w.isCaseSensitivityEnabled };
}
