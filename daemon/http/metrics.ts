// Prometheus metrics (GET /metrics): requests by route and status, their latency, the
// search statistics the API reports, the search queue, the index's size and the
// repositories by state, broken repositories and shard errors (index-health.ts), and on a
// node of a cluster its view of the cluster and its fan-out and replication (cluster()).
// Gauges of the index, the store and the cluster are read at scrape time. No label names a
// repository (names of private repositories must not leak through /metrics).

import type { IndexSize } from '../index/index-size.ts';
import client from 'prom-client';
import type { RepoState, Store } from '../store/store.ts';
import type { SearchStats } from '../search/types.ts';
import { rssOf, type RssSample } from '../runtime/resident-memory.ts';
import type { ClusterCounters } from '../cluster/counters.ts';
import type { ClusterStatus, ShardHealth } from '../cluster/status.ts';
import type { PermissionSyncReport } from '../permissions/permission-sync.ts';
import type { CheckReport } from '../watches/watch-evaluator.ts';

/** The stats fields summed into counters (durations and counts alike). */
const SEARCH_COUNTERS: Array<[keyof SearchStats, string, string]> = [
  ['actualMatchCount', 'trawl_search_matches_returned_total', 'Match ranges returned by searches.'],
  ['totalMatchCount', 'trawl_search_matches_found_total', 'Match ranges found by searches.'],
  ['fileCount', 'trawl_search_files_returned_total', 'Files returned by searches.'],
  ['filesConsidered', 'trawl_search_files_considered_total', 'Candidate documents examined.'],
  ['filesLoaded', 'trawl_search_files_loaded_total', 'Documents whose content was read.'],
  ['filesSkipped', 'trawl_search_files_skipped_total', 'Candidates left unexamined because a limit was reached.'],
  ['contentBytesLoaded', 'trawl_search_content_bytes_loaded_total', 'Bytes of content read.'],
  ['indexBytesLoaded', 'trawl_search_index_bytes_loaded_total', 'Bytes of posting lists read.'],
  ['shardsScanned', 'trawl_search_shards_scanned_total', 'Shards scanned.'],
  ['shardsSkipped', 'trawl_search_shards_skipped_total', 'Shards skipped because the search had enough or was cancelled.'],
  ['shardsSkippedFilter', 'trawl_search_shards_skipped_filter_total', 'Shards ruled out by the index.'],
  ['ngramLookups', 'trawl_search_ngram_lookups_total', 'N-gram posting lookups.'],
  ['regexpsConsidered', 'trawl_search_regexps_considered_total', 'Regular-expression executions.'],
  ['crashes', 'trawl_search_shard_crashes_total', 'Shards that failed during a search.'],
];

const STATES: RepoState[] = ['new', 'indexed', 'failed', 'deleted'];
/** A node's states in GET /api/cluster, and a shard's health: every one is exported, 0 included. */
const NODE_STATES = ['serving', 'leaving', 'dead'];
const HEALTH: ShardHealth[] = ['ok', 'under-replicated', 'unavailable'];

/**
 * How often the event-loop lag histogram (trawl_nodejs_eventloop_lag_*) samples the loop.
 * prom-client's default, 10 ms, is a repeating timer that woke an idle daemon's main thread
 * 100 times a second (a measurable share of a core spent doing nothing, found with
 * schedstat and gdb on uv_timer_start: node::IntervalHistogram), on every node of a
 * cluster sharing the cores.
 * At 100 ms a 15 s scrape still holds 150 samples, and a loop blocked for longer than that
 * shows as it did.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<'method' | 'route' | 'status'>;
  private readonly latency: client.Histogram<'method' | 'route' | 'status'>;
  private readonly searches: client.Counter<'kind' | 'exhaustive'>;
  private readonly searchCounters = new Map<keyof SearchStats, client.Counter>();
  readonly queue: client.Gauge;
  readonly running: client.Gauge;
  readonly rejected: client.Counter;
  /** Shard files that failed their checks while searching or browsing. */
  readonly shardErrors: client.Counter;
  private readonly permissionSubjects: client.Counter<'connection' | 'direction' | 'outcome'>;
  private readonly permissionPasses: client.Histogram;
  /** Code hosts' webhook deliveries (webhooks/receiver.ts): each verified one's outcome, and each push's time to searchable. */
  readonly webhooks: { delivery(host: string, outcome: string): void; searchable(seconds: number): void };
  /** Merges of compound shards (sync.ts mergeCompoundShards), by how long each took. */
  readonly compoundMerge: (seconds: number) => void;
  /** Watches (watches/): their POSTs' outcomes, and their checks after the index changed. */
  readonly watches: {
    delivery(outcome: string): void;
    check(report: CheckReport): void;
  };

  constructor(sources: { store?: Store; indexSize?: () => IndexSize; brokenRepos?: () => number; searchLoad?: () => { busy: number; queued: number } }) {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: 'trawl_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.requests = new client.Counter({
      name: 'trawl_http_requests_total',
      help: 'HTTP requests by route, method and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new client.Histogram({
      name: 'trawl_http_request_duration_seconds',
      help: 'HTTP request latency (to the last byte written) by route, method and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.searches = new client.Counter({
      name: 'trawl_searches_total',
      help: 'Searches completed, by kind (search, stream, symbols) and exhaustiveness.',
      labelNames: ['kind', 'exhaustive'],
      registers,
    });
    for (const [field, name, help] of SEARCH_COUNTERS) this.searchCounters.set(field, new client.Counter({ name, help, registers }));
    this.queue = new client.Gauge({ name: 'trawl_search_queue_length', help: 'Searches waiting for a turn.', registers });
    this.running = new client.Gauge({ name: 'trawl_searches_running', help: 'Searches running now.', registers });
    this.rejected = new client.Counter({ name: 'trawl_search_rejected_total', help: 'Searches refused because the queue was full (503).', registers });
    this.shardErrors = new client.Counter({
      name: 'trawl_index_shard_errors_total',
      help: 'Shard files that failed their checks (corrupt, truncated, wrong version, missing) while searching or browsing.',
      registers,
    });
    // The permission sync: connection names are the operator's own, never a repository's.
    this.permissionSubjects = new client.Counter({
      name: 'trawl_permission_sync_subjects_total',
      help: 'Permission sync: private repositories (direction "repositories") and linked accounts ("accounts") asked about, by connection and outcome (synced, failed).',
      labelNames: ['connection', 'direction', 'outcome'],
      registers,
    });
    this.permissionPasses = new client.Histogram({
      name: 'trawl_permission_sync_duration_seconds',
      help: 'Permission sync passes, by how long they took.',
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 1800],
      registers,
    });
    const deliveries = new client.Counter({
      name: 'trawl_webhook_deliveries_total',
      help: "Code hosts' webhook deliveries that verified, by host and outcome (queued, listing, ignored, replayed, ping).",
      labelNames: ['host', 'outcome'],
      registers,
    });
    const searchable = new client.Histogram({
      name: 'trawl_webhook_push_to_searchable_seconds',
      help: "From a push's webhook delivery to its repository's change being searchable (its sync's end).",
      buckets: [0.25, 0.5, 1, 2, 5, 15, 60, 300],
      registers,
    });
    this.webhooks = {
      delivery: (host, outcome) => deliveries.inc({ host, outcome }),
      searchable: (seconds) => searchable.observe(seconds),
    };
    const merges = new client.Histogram({
      name: 'trawl_compound_shard_merge_seconds',
      help: "Merges of small repositories' compound shards after a sync, by how long each took.",
      buckets: [0.05, 0.25, 1, 5, 30, 120],
      registers,
    });
    this.compoundMerge = (seconds) => merges.observe(seconds);
    this.watches = watchMetrics(registers);
    const { store, indexSize, brokenRepos, searchLoad } = sources;
    if (brokenRepos) {
      new client.Gauge({
        name: 'trawl_index_broken_repositories',
        help: 'Repositories whose index is damaged: left out of searches until re-indexed (trawl repos says which and why).',
        registers,
        collect() {
          this.set(brokenRepos());
        },
      });
    }
    if (searchLoad) {
      // Both zero when no search work is left (e.g. soon after every client went away).
      new client.Gauge({
        name: 'trawl_search_workers_busy',
        help: 'Search worker threads running a shard task now.',
        registers,
        collect() {
          this.set(searchLoad().busy);
        },
      });
      new client.Gauge({
        name: 'trawl_search_shard_tasks_queued',
        help: 'Shard tasks waiting for a search worker.',
        registers,
        collect() {
          this.set(searchLoad().queued);
        },
      });
    }
    if (indexSize) {
      // One scrape reads the manifests once for the four gauges.
      const size = readAtMostEverySecond(indexSize);
      const gauge = (name: string, help: string, pick: (s: IndexSize) => number) =>
        new client.Gauge({
          name,
          help,
          registers,
          collect() {
            this.set(pick(size()));
          },
        });
      gauge('trawl_index_shards', 'Shards in the index.', (s) => s.shards);
      gauge('trawl_index_bytes', 'Bytes of shard, membership and symbols files in the index.', (s) => s.bytes);
      gauge('trawl_index_files', 'Files (documents) searchable in the index.', (s) => s.files);
      gauge('trawl_index_content_bytes', 'Bytes of file content in the index.', (s) => s.contentBytes);
    }
    // Resident memory split (runtime/resident-memory.ts): the default metrics'
    // trawl_process_resident_memory_bytes is mostly mapped shard pages the kernel can drop;
    // RssAnon is what the daemon itself holds. Off Linux the gauges are not set.
    const rss = readAtMostEverySecond((): RssSample | null => rssOf('self'));
    for (const [name, help, pick] of [
      ['trawl_process_resident_anon_bytes', 'Resident anonymous memory (RssAnon): heaps, buffers, wasm memory of every thread.', (r: RssSample) => r.anon],
      [
        'trawl_process_resident_file_bytes',
        'Resident file-backed memory (RssFile): mostly mapped shard pages, which the kernel drops when it needs the memory.',
        (r: RssSample) => r.file,
      ],
      ['trawl_process_resident_shmem_bytes', 'Resident shared memory (RssShmem).', (r: RssSample) => r.shmem],
    ] as const) {
      new client.Gauge({
        name,
        help,
        registers,
        collect() {
          const r = rss();
          if (r) this.set(pick(r));
        },
      });
    }
    if (store) {
      new client.Gauge({
        name: 'trawl_repositories',
        help: 'Repositories by state.',
        labelNames: ['state'],
        registers,
        async collect() {
          const counts = new Map<RepoState, number>(STATES.map((s) => [s, 0]));
          for (const r of await store.listRepos({ includeDeleted: true })) counts.set(r.state, (counts.get(r.state) ?? 0) + 1);
          for (const [state, n] of counts) this.set({ state }, n);
        },
      });
    }
  }

  /**
   * Registers a cluster node's figures: gauges of the cluster as `status` gives it (the
   * node's view as of its last heartbeat; undefined while it joins) and the counters its
   * fan-out and replication count into, which it returns. Called once, by a node.
   */
  cluster(status: () => ClusterStatus | undefined): ClusterCounters {
    const registers = [this.registry];
    // One scrape computes the status once for the three gauges.
    const current = readAtMostEverySecond(status);
    new client.Gauge({
      name: 'trawl_cluster_nodes',
      help: "The cluster's nodes by state (serving, leaving, dead: silent longer than cluster.nodeTimeoutMs), as this node sees them.",
      labelNames: ['state'],
      registers,
      collect() {
        const s = current();
        if (!s) return;
        for (const state of NODE_STATES) this.set({ state }, s.nodes.filter((n) => n.state === state).length);
      },
    });
    new client.Gauge({
      name: 'trawl_cluster_shards',
      help: "Shards of the cluster's published index by replica health (ok, under-replicated, unavailable: no live node holds it), as this node sees them.",
      labelNames: ['health'],
      registers,
      collect() {
        const s = current();
        if (!s) return;
        const by: Record<ShardHealth, number> = { ok: s.summary.ok, 'under-replicated': s.summary.underReplicated, unavailable: s.summary.unavailable };
        for (const health of HEALTH) this.set({ health }, by[health]);
      },
    });
    new client.Gauge({
      name: 'trawl_cluster_shards_held',
      help: "Shards of the cluster's published index this node holds and serves.",
      registers,
      collect() {
        const s = current();
        const self = s?.nodes.find((n) => n.id === s.self);
        if (self) this.set(self.shards);
      },
    });
    const counter = (name: string, help: string) => new client.Counter({ name, help, registers });
    return {
      remoteRequests: counter(
        'trawl_cluster_remote_requests_total',
        'Parts of searches this node sent to other nodes (one per node asked for shards of a search, retries included).',
      ),
      remoteShards: counter('trawl_cluster_remote_shards_total', 'Shards of searches this node asked of other nodes (retries included).'),
      shardFailures: counter(
        'trawl_cluster_shard_failures_total',
        'Shards of searches a node failed (unreachable, its stream broke, or it did not hold the shard), this node included.',
      ),
      shardRetries: counter('trawl_cluster_shard_retries_total', 'Shards of searches asked again of another holder after one failed.'),
      speculativeShards: counter(
        'trawl_cluster_speculative_shards_total',
        'Shards of searches this node (coordinating) had searched speculatively, for their definitions only, betting the search would be past its cut before them.',
      ),
      shardsAskedAgain: counter(
        'trawl_cluster_shards_asked_again_total',
        'Of those, shards asked again whole because the search needed them before its cut (a lost bet: a round trip).',
      ),
      filesCut: counter('trawl_cluster_files_cut_total', "Files of other nodes a search's budget ended inside, cut on this node from their JSON."),
      filesShapedRemotely: counter(
        'trawl_cluster_files_shaped_remotely_total',
        'Such files shaped again by the node holding their shard (a round trip): the budget ended inside a chunk naming definitions, or the file came unshaped.',
      ),
      unavailableShards: counter(
        'trawl_cluster_unavailable_shards_total',
        'Shards a search left out because no live node holding them answered (named in its unavailableShards; the search is not exhaustive).',
      ),
      copiedShards: counter('trawl_cluster_copied_shards_total', 'Shards copied to this node from another (replication).'),
      copiedBytes: counter('trawl_cluster_copied_bytes_total', 'Bytes of shard, membership and symbols files copied to this node from another.'),
      copyFailures: counter('trawl_cluster_copy_failures_total', 'Copies of a shard from one node that failed (the next holder is tried).'),
    };
  }

  request(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  search(kind: 'search' | 'stream' | 'symbols', stats: SearchStats, exhaustive: boolean): void {
    this.searches.inc({ kind, exhaustive: String(exhaustive) });
    for (const [field, counter] of this.searchCounters) counter.inc(stats[field] as number);
  }

  /** A permission sync pass ended. */
  permissionPass(report: PermissionSyncReport): void {
    this.permissionPasses.observe(report.seconds);
    for (const c of report.connections) {
      for (const direction of ['repositories', 'accounts'] as const) {
        const done = c[direction];
        if (done.synced > 0) this.permissionSubjects.inc({ connection: c.connection, direction, outcome: 'synced' }, done.synced);
        if (done.failed > 0) this.permissionSubjects.inc({ connection: c.connection, direction, outcome: 'failed' }, done.failed);
      }
    }
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** The watches' metrics (watches/): their POSTs' outcomes, and their checks. */
function watchMetrics(registers: client.Registry[]): Metrics['watches'] {
  const watchPosts = new client.Counter({
    name: 'trawl_watch_deliveries_total',
    help: "Attempts to POST watches' changes, by outcome (delivered, retry, dead: given up, withheld: the owner may not see it now).",
    labelNames: ['outcome'],
    registers,
  });
  const watchEvents = new client.Counter({ name: 'trawl_watch_events_total', help: "Changes of watches' matches recorded.", registers });
  const watchSearches = new client.Counter({ name: 'trawl_watch_searches_total', help: 'Searches run to check watches after the index changed.', registers });
  const watchParts = new client.Counter({
    name: 'trawl_watch_check_part_seconds_total',
    help: 'Time the watches\' checks spent reading what changed, from the index or git (part "change") and searching (part "search").',
    labelNames: ['part'],
    registers,
  });
  const watchReads = new client.Counter({
    name: 'trawl_watch_changes_read_total',
    help: "Repositories' changes the watches' checks read, by where from (index: the state held since the last check; git; unread: not known, every watch searched).",
    labelNames: ['from'],
    registers,
  });
  const watchDeferred = new client.Counter({
    name: 'trawl_watch_changes_deferred_total',
    help: "Repositories' changes some watch could not be checked for, its search unfinished (shards no node could search then): checked again shortly.",
    registers,
  });
  const watchChecks = new client.Histogram({
    name: 'trawl_watch_check_seconds',
    help: 'Checks of the watches after the index changed, by how long they took.',
    buckets: [0.005, 0.025, 0.1, 0.5, 2, 10, 60],
    registers,
  });
  return {
    delivery: (outcome) => watchPosts.inc({ outcome }),
    check: (r) => {
      watchChecks.observe(r.ms / 1000);
      watchEvents.inc(r.events);
      watchSearches.inc(r.searched);
      watchParts.inc({ part: 'change' }, r.changeMs / 1000);
      watchParts.inc({ part: 'search' }, r.searchMs / 1000);
      watchReads.inc({ from: 'index' }, r.fromIndex);
      watchReads.inc({ from: 'git' }, r.fromGit);
      watchReads.inc({ from: 'unread' }, r.unread);
      watchDeferred.inc(r.deferred);
    },
  };
}

/**
 * `read`, called again only when its last value is more than a second old: the gauges of
 * one scrape share one reading. (Dated from the reading, not from the last use: scrapes
 * closer than a second apart would otherwise never read again.)
 */
export function readAtMostEverySecond<T>(read: () => T): () => T {
  let at = -Infinity;
  let value: T;
  return () => {
    const now = Date.now();
    if (now - at > 1000) {
      value = read();
      at = now;
    }
    return value;
  };
}
