// Messages between the search pool (main thread) and the search workers. Bodies are
// msgpackr-encoded with records enabled (measured 3x faster to decode than JSON here);
// the cancellation flag travels beside them as a SharedArrayBuffer, so a worker sees a
// cancel between two documents without waiting for a message.

import { Packr } from 'msgpackr';
import type { RepoFacts } from '../index/shard-reader.ts';
import type { ShardSearchResult } from './shard-search.ts';

export interface ShardTask {
  shardPath: string;
  /** The membership file that replaces the shard's branch lists (manifest.ts). */
  membership?: string;
  /** The repository's current flags, from its manifest (they may have changed since the build). */
  repo?: RepoFacts;
  /**
   * The search's plan, msgpack-encoded once by the searcher; a worker decodes it (and
   * builds its matchers) once per search, keyed by planId. Measured: encoding and
   * decoding the plan for every shard cost ~0.1 ms a shard, a third of a rare literal's
   * whole search on the Linux tree.
   */
  planId: number;
  plan: Uint8Array;
  limit: number;
  /** Brute force: bypass the index, verify every document with the reference matcher. */
  brute: boolean;
}

export type ShardReply =
  | { status: 'done'; result: ShardSearchResult; queuedNs: number }
  /** Cancelled before it started: the search already had enough. */
  | { status: 'skipped' }
  /** `corrupt`: the shard failed its checks (ShardError), as opposed to a crash of the worker. */
  | { status: 'failed'; error: string; queuedNs: number; corrupt?: boolean };

/** What crosses the thread boundary: an encoded body, and for tasks the cancel flag. */
export interface Envelope {
  seq: number;
  body: Uint8Array;
  cancel?: SharedArrayBuffer;
  sentAt?: number;
}

/** How workers and the searcher key an open shard: the file and its membership file. */
export function shardKey(shardPath: string, membership?: string): string {
  return membership ? `${shardPath}\0${membership}` : shardPath;
}

export const packr = new Packr({ useRecords: true });
