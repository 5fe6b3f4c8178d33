// The watches of a daemon, assembled: the evaluator, checking after each change of the index,
// the deliverer of their POSTs, the feed of their SSE streams and tool sessions, and the
// hourly pruning of old events.
//
// A check runs when the sync says a pass or a batch of asked repositories has ended (its
// compound shards merged: the index has settled), and for changes made otherwise (`trawl
// index`) when the index's version, read every POLL_MS, has moved and then stayed the same
// for SETTLE_MS: a check run in the middle of a sync competes with its builds for the
// processors, and checks again what the sync's next commit moves. A check that left a
// repository's change for later (a watch's search could not finish: watch-evaluator.ts)
// is followed by another RETRY_MS later, whether or not the index moved.

import type { Identity } from '../auth/identity.ts';
import type { Settings } from '../config/types.ts';
import type { LoadedManifest } from '../index/manifest.ts';
import type { Logger } from '../runtime/logger.ts';
import { planSearch, type PlannedSearch } from '../search/plan-cache.ts';
import type { IndexHold } from '../search/held-files.ts';
import type { SearchOptions } from '../search/search-options.ts';
import type { SearchRequest, SearchResponse } from '../search/types.ts';
import type { Store } from '../store/store.ts';
import { WatchDeliverer, type DeliveryOutcome } from './delivery.ts';
import { WatchEvaluator, type CheckReport, type WatchEvaluatorDeps } from './watch-evaluator.ts';
import { feedFromStore } from './store-feed.ts';
import { WatchFeed } from './watch-feed.ts';

/** How often the index's version is compared with the one the watches last checked. */
export const POLL_MS = 250;
export const SETTLE_MS = 500;
/** How soon a check that left changes for later is followed by another. */
export const RETRY_MS = 2000;
const PRUNE_EVERY_MS = 3_600_000;

type CanSee = Identity['canSee'];

export interface WatchRuntimeDeps {
  store: Store;
  search(req: Required<SearchRequest>, options: SearchOptions): Promise<SearchResponse>;
  /** Default: planSearch (search/plan-cache.ts). */
  plan?(req: Required<SearchRequest>): PlannedSearch;
  /** The index now (its version changes with every commit), and each repository's visibility. */
  index: { current(): { version: string; manifests: readonly LoadedManifest[] }; visibility(m: LoadedManifest): 'public' | 'private' };
  /** Holds the index as the searches see it now (Searcher.hold): the checks read what changed from it. */
  hold?(): IndexHold;
  owner(userId: string): Promise<CanSee | undefined>;
  visibility(repoId: number): Promise<'public' | 'private' | undefined>;
  scope?(userId: string, canSee: CanSee, context: string): Promise<NonNullable<SearchOptions['repoFilter']>>;
  secret(): Buffer;
  settings: () => Settings['watches'];
  userAgent: string;
  observe?: { delivery(outcome: DeliveryOutcome): void; check(report: CheckReport): void };
  /**
   * A node of a cluster: the node that leads checks the watches and delivers their changes;
   * every node passes on to its listeners the changes it reads from the store
   * (store-feed.ts); a change is read from the git mirror on the node that has it.
   */
  cluster?: { leads(): boolean; readChange: NonNullable<WatchEvaluatorDeps['readChange']> };
  now?: () => Date;
  log?: Logger;
}

/** What the watches' routes and the tool server use. */
export interface WatchServices {
  evaluator: WatchEvaluator;
  feed: WatchFeed;
  /** The installation's secret, from which each watch's signing secret is derived. */
  secret(): Buffer;
  /** What a member may see now; undefined when they cannot act (gone, suspended). */
  owner(userId: string): Promise<CanSee | undefined>;
  /** A repository's visibility now; undefined when it is not known. */
  visibility(repoId: number): Promise<'public' | 'private' | undefined>;
}

export interface WatchRuntime extends WatchServices {
  /** The sync ended a pass or a batch: check now. */
  changed(): void;
  stop(): Promise<void>;
}

export function startWatches(d: WatchRuntimeDeps): WatchRuntime {
  const feed = new WatchFeed();
  const leads = d.cluster ? d.cluster.leads : () => true;
  const deliverer = new WatchDeliverer({
    store: d.store,
    secret: d.secret,
    owner: d.owner,
    visibility: d.visibility,
    settings: d.settings,
    userAgent: d.userAgent,
    active: leads,
    ...(d.observe ? { observe: (o: DeliveryOutcome) => d.observe!.delivery(o) } : {}),
    ...(d.now ? { now: d.now } : {}),
    ...(d.log ? { log: d.log } : {}),
  });
  const evaluator = new WatchEvaluator({
    store: d.store,
    search: d.search,
    plan: d.plan ?? planSearch,
    index: { manifests: () => d.index.current().manifests, visibility: (m) => d.index.visibility(m), ...(d.hold ? { hold: d.hold } : {}) },
    repoName: async (id) => (await d.store.getRepo(id))?.repoName,
    owner: d.owner,
    ...(d.scope ? { scope: d.scope } : {}),
    // In a cluster every listener hears the changes from the store, this node's too.
    feed: d.cluster ? new WatchFeed() : feed,
    ...(d.cluster ? { evaluates: leads, readChange: d.cluster.readChange } : {}),
    settings: d.settings,
    recorded: () => deliverer.wake(),
    ...(d.now ? { now: d.now } : {}),
    ...(d.log ? { log: d.log } : {}),
  });
  let checked = '';
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const check = (): void => {
    if (stopped || !leads()) return;
    const version = d.index.current().version;
    checked = version;
    void evaluator.check().then(
      (report) => {
        d.observe?.check(report);
        if (report.deferred === 0 || stopped) return;
        clearTimeout(retry);
        retry = setTimeout(check, RETRY_MS);
        retry.unref();
      },
      (err: Error) => d.log?.warn({ err: err.message }, 'checking the watches failed: tried again at the next change of the index'),
    );
  };
  let moved = { version: '', at: 0 };
  let leading = leads();
  const poll = setInterval(() => {
    const now = leads();
    if (now !== leading) {
      leading = now;
      // Another node checked the watches until now: what this one read of them is stale.
      // (The forgetting runs before the check that follows: one at a time.)
      if (now) {
        void evaluator.forget();
        checked = '';
        deliverer.wake();
      }
    }
    if (!now) return;
    const version = d.index.current().version;
    if (version === checked) return;
    const at = performance.now();
    if (version !== moved.version) moved = { version, at };
    else if (at - moved.at >= SETTLE_MS) check();
  }, POLL_MS);
  poll.unref();
  let pruned = 0;
  const prune = setInterval(() => {
    const t = (d.now?.() ?? new Date()).getTime();
    if (t - pruned < PRUNE_EVERY_MS || !leads()) return;
    pruned = t;
    void d.store.watches
      .pruneEvents(new Date(t - d.settings().eventRetentionDays * 86_400_000).toISOString())
      .catch((err: Error) => d.log?.warn({ err: err.message }, 'pruning old watch events failed'));
  }, 60_000);
  prune.unref();
  const stopFeed = d.cluster ? feedFromStore(d.store, feed, d.log) : () => {};
  deliverer.start();
  check();
  return {
    evaluator,
    feed,
    secret: d.secret,
    owner: d.owner,
    visibility: d.visibility,
    changed: check,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(poll);
      clearInterval(prune);
      stopFeed();
      await deliverer.stop();
      await evaluator.idle();
      evaluator.release();
    },
  };
}
