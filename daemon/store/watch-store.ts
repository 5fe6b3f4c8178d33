// The watches' part of the Store (watches/): the watches, their matches per repository,
// the events their changes are recorded as (and delivered from), and what they last saw of
// each repository. sqlite-watches.ts and pg-watches.ts hold them.

import type { IndexedRef } from './indexed-ref.ts';

/**
 * A watch: a saved query whose new and removed matches, after each change of the index,
 * are delivered to its owner (watches/): by a signed POST to `url`, over SSE, to MCP
 * sessions. It sees what its owner sees, re-checked at each delivery.
 */
export interface WatchRecord {
  /** Assigned by the store, never reused. */
  id: number;
  userId: string;
  name: string;
  query: string;
  isRegexEnabled: boolean;
  isCaseSensitivityEnabled: boolean;
  /** Where each change is POSTed, signed; absent: delivered over SSE and MCP only. */
  url?: string;
  /** Random, not secret alone: the signing secret is derived from it and the installation's secret (watches/signature.ts). */
  salt: string;
  createdAt: string;
  /** When the last change of its matches was recorded. */
  lastChangedAt?: string;
  /** Changes POSTed and answered 2xx, and those given up after every attempt failed (dead letters). */
  delivered: number;
  deadLetters: number;
}

/** One matching line of a watch (line 0, text "": a file matched by its name alone). */
export interface WatchMatch {
  path: string;
  line: number;
  text: string;
}

/** A change of a watch's matches, kept for replay (SSE's Last-Event-ID, the events list) and, with a url, its delivery. */
export interface WatchEventRecord {
  id: number;
  watchId: number;
  /** The JSON delivered (watches/watch-event.ts). */
  payload: string;
  createdAt: string;
  /** 'none': the watch has no url. */
  state: 'none' | 'pending' | 'delivered' | 'dead';
  attempts: number;
  /** When a pending delivery is tried next. */
  nextAttemptAt?: string;
  lastError?: string;
}

/** What the watches saw of a repository last: its index generation and refs (the base of the next change's diff). */
export interface WatchedRepoState {
  repoId: number;
  generation: number;
  refs: IndexedRef[];
}

export interface WatchStoreSync {
  /** Creates the watch and its matches now (its baseline), in one transaction. */
  create(
    watch: Pick<WatchRecord, 'userId' | 'name' | 'query' | 'isRegexEnabled' | 'isCaseSensitivityEnabled' | 'salt'> & { url?: string },
    baseline: ReadonlyArray<{ repoId: number; matches: WatchMatch[] }>,
    now: string,
  ): WatchRecord;
  get(id: number): WatchRecord | undefined;
  /** By id; one user's, or everyone's. */
  list(userId?: string): WatchRecord[];
  /**
   * Changes whenever a watch is made or deleted, by any process, and never otherwise (their
   * number and greatest id: ids are never reused, and a watch's query, owner and url never
   * change): whether a list read earlier still holds, without reading it again.
   */
  revision(): string;
  /** Removes the watch with its matches and events; false when there was none. */
  delete(id: number): boolean;
  /** The watch's matches in the repository as last recorded; [] when none. */
  matchesOf(watchId: number, repoId: number): WatchMatch[];
  /** Replaces them ([] removes the row). */
  setMatches(watchId: number, repoId: number, matches: WatchMatch[]): void;
  /** Which watches have matches recorded in the repository. */
  watchesIn(repoId: number): number[];
  repoStates(): WatchedRepoState[];
  /** Records each repository's state, all of them or none (one transaction, within one call). */
  setRepoStates(states: readonly WatchedRepoState[]): void;
  deleteRepoState(repoId: number): void;
  /** Records a change (state 'pending', due now, when the watch has a url; else 'none'); its id. */
  addEvent(watchId: number, payload: string, now: string): number;
  /** The watch's events after `afterId`, oldest first, at most `limit`. */
  eventsAfter(watchId: number, afterId: number, limit: number): WatchEventRecord[];
  /** The greatest event id recorded, of any watch (0: none): where a reader of every watch's new events starts. */
  lastEventId(): number;
  /**
   * The events of these watches with ids in (afterId, throughId], oldest first: what a
   * process that did not record them passes on to its listeners (a node of a cluster).
   */
  eventsIn(watchIds: readonly number[], afterId: number, throughId: number): WatchEventRecord[];
  /** Its newest events, newest first. */
  recentEvents(watchId: number, limit: number): WatchEventRecord[];
  /** Pending deliveries due at `now`, oldest first. */
  dueEvents(now: string, limit: number): WatchEventRecord[];
  /** A delivery's attempt: delivered, dead (the watch's counters move with it), pending again at nextAttemptAt, or withheld ('none'). */
  settleEvent(
    id: number,
    outcome: { state: 'pending' | 'delivered' | 'dead' | 'none'; attempts: number; nextAttemptAt?: string; lastError?: string },
    now: string,
  ): void;
  /** Events created before `before` that are no longer pending go; how many. */
  pruneEvents(before: string): number;
}
