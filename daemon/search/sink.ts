// Where a search's results go. The searcher runs one pipeline for every kind of search: it
// takes the shards' replies in shard order and hands each shard's shaped files to a sink.
// A blocking search's sink collects and ranks them all (collect-sink.ts); a stream's sends
// them in batches as they come, and its client's pace paces the search (stream-sink.ts).
// What differs between the two (how deep the search reads, how far the workers may run
// ahead, whether the workers batch their replies) is the sink's to say.

import type { Cut } from './protocol.ts';
import type { ShapedFile } from './file-json.ts';
import type { RepositoryInfo, SearchStats } from './types.ts';

/**
 * Shapes a file (again) with at most `budget` match ranges, on the main thread: the last
 * file a budget takes, or one its worker left unshaped (in a cluster, the node that holds
 * its shard does: a promise). Throws ShardError when its shard fails its checks (the damage
 * is then already reported) or cannot be reached; the sink drops that shard's files.
 */
export type Reshape = (file: ShapedFile, budget: number) => ShapedFile | Promise<ShapedFile>;

export interface Sink {
  /** When the search stops taking shards. */
  readonly cut: Cut;
  /** Whether the workers post a search's replies together (nothing is sent before the end). */
  readonly batch: boolean;
  /** Shards the workers may run ahead of the one the sink is taking (Infinity: all). */
  readonly ahead: number;
  /** Waits for `reply` or until results in hand are due to go out, whichever comes first. */
  waiting(reply: Promise<unknown>): Promise<void>;
  /**
   * A shard's files, in shard order; `repositories` are their repositoryInfo entries. A
   * stream's shard may give its files in several parts, the last with its reply.
   */
  take(files: ShapedFile[], repositories: RepositoryInfo[]): void | Promise<void>;
  /** Files of a shard not yet done were taken (a stream's early part, protocol.ts PartialReply). */
  partDone(): Promise<void>;
  /** Whether it is told each shard's share of the work (shardDone); a blocking search's sink only needs the total. */
  readonly shardStats: boolean;
  /** A shard is done with; `stats` is its share of the search's work (only when shardStats). */
  shardDone(stats: SearchStats): Promise<void>;
  /** The search is over: what is still held goes out. */
  end(): Promise<void>;
  /** Match ranges given (stats.actualMatchCount). */
  readonly actual: number;
  /** The answer's files, best first, and their repositories, after end(): a stream's went out in its batches, so it has none. */
  readonly files: ShapedFile[];
  readonly repositoryInfo: RepositoryInfo[];
  /** Files given (stats.fileCount): the answer's, or those a stream sent. */
  readonly fileCount: number;
  /** Shards that failed their checks while the sink shaped a file of theirs. */
  readonly crashes: number;
}
