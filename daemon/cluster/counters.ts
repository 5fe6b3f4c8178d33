// What a node counts of its cluster work, where it happens (fan-out.ts, replicator.ts), for
// /metrics. This floor knows no Prometheus: the daemon passes in counters that
// http/metrics.ts registers (Metrics.cluster), which fit `Count` as they are.

/** Something that counts up (prom-client's Counter is one). */
export interface Count {
  inc(by?: number): void;
}

export interface ClusterCounters {
  /** Search requests sent to other nodes: one per node asked for shards of a search, a retry's included. */
  remoteRequests: Count;
  /** Shards of searches asked of other nodes (a retry's included). */
  remoteShards: Count;
  /** A node asked for a shard of a search failed it: unreachable, its stream broke, or it did not hold the shard (this node included). */
  shardFailures: Count;
  /** Of those, the shards asked again of their next holder. */
  shardRetries: Count;
  /** Shards of searches this node coordinated that were searched speculatively (fan-out.ts: for their definitions only, betting on the cut). */
  speculativeShards: Count;
  /** Of those, shards asked again whole because the search needed them before its cut. */
  shardsAskedAgain: Count;
  /** Files of other nodes a search's budget ended inside, cut here from their JSON (search/file-json-cut.ts). */
  filesCut: Count;
  /** Such files shaped again by the node that holds their shard, a round trip: the budget ended inside a chunk that names definitions, or the file came unshaped or with fewer ranges than the budget. */
  filesShapedRemotely: Count;
  /** Shards a search could not search (no live holder, or every one failed): named in its unavailableShards. */
  unavailableShards: Count;
  /** Shards copied to this node from another (their shard, membership and symbols files). */
  copiedShards: Count;
  /** Bytes of the files copied. */
  copiedBytes: Count;
  /** Copies of a shard from one holder that failed (the next holder is tried). */
  copyFailures: Count;
}
