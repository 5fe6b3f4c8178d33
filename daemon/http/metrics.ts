// Prometheus metrics (GET /metrics): requests by route and status, their latency, the
// search statistics the API reports, the search queue, the index's size and the
// repositories by state, broken repositories and shard errors (index-health.ts). Gauges of
// the index and store are read at scrape time. No label names a repository (names of
// private repositories must not leak through /metrics).

import client from 'prom-client';
import type { RepoState, Store } from '../store/store.ts';
import type { SearchStats } from '../search/types.ts';
import { rssOf, type RssSample } from '../runtime/resident-memory.ts';

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

export interface IndexSize {
  shards: number;
  bytes: number;
  files: number;
  contentBytes: number;
}

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

  constructor(sources: { store?: Store; indexSize?: () => IndexSize; brokenRepos?: () => number; searchLoad?: () => { busy: number; queued: number } }) {
    const registers = [this.registry];
    client.collectDefaultMetrics({ register: this.registry, prefix: 'trawl_' });
    this.requests = new client.Counter({ name: 'trawl_http_requests_total', help: 'HTTP requests by route, method and status.', labelNames: ['method', 'route', 'status'], registers });
    this.latency = new client.Histogram({
      name: 'trawl_http_request_duration_seconds',
      help: 'HTTP request latency (to the last byte written) by route, method and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.searches = new client.Counter({ name: 'trawl_searches_total', help: 'Searches completed, by kind (search, stream, symbols) and exhaustiveness.', labelNames: ['kind', 'exhaustive'], registers });
    for (const [field, name, help] of SEARCH_COUNTERS) this.searchCounters.set(field, new client.Counter({ name, help, registers }));
    this.queue = new client.Gauge({ name: 'trawl_search_queue_length', help: 'Searches waiting for a turn.', registers });
    this.running = new client.Gauge({ name: 'trawl_searches_running', help: 'Searches running now.', registers });
    this.rejected = new client.Counter({ name: 'trawl_search_rejected_total', help: 'Searches refused because the queue was full (503).', registers });
    this.shardErrors = new client.Counter({ name: 'trawl_index_shard_errors_total', help: 'Shard files that failed their checks (corrupt, truncated, wrong version, missing) while searching or browsing.', registers });
    const { store, indexSize, brokenRepos, searchLoad } = sources;
    if (brokenRepos) {
      new client.Gauge({
        name: 'trawl_index_broken_repositories',
        help: 'Repositories whose index is damaged: left out of searches until re-indexed (trawl repos says which and why).',
        registers,
        collect() { this.set(brokenRepos()); },
      });
    }
    if (searchLoad) {
      // Both zero when no search work is left (e.g. soon after every client went away).
      new client.Gauge({ name: 'trawl_search_workers_busy', help: 'Search worker threads running a shard task now.', registers, collect() { this.set(searchLoad().busy); } });
      new client.Gauge({ name: 'trawl_search_shard_tasks_queued', help: 'Shard tasks waiting for a search worker.', registers, collect() { this.set(searchLoad().queued); } });
    }
    if (indexSize) {
      const read = { at: 0, value: { shards: 0, bytes: 0, files: 0, contentBytes: 0 } as IndexSize };
      // One scrape reads the manifests once for the four gauges.
      const size = (): IndexSize => {
        if (Date.now() - read.at > 1000) read.value = indexSize();
        read.at = Date.now();
        return read.value;
      };
      const gauge = (name: string, help: string, pick: (s: IndexSize) => number) =>
        new client.Gauge({ name, help, registers, collect() { this.set(pick(size())); } });
      gauge('trawl_index_shards', 'Shards in the index.', (s) => s.shards);
      gauge('trawl_index_bytes', 'Bytes of shard, membership and symbols files in the index.', (s) => s.bytes);
      gauge('trawl_index_files', 'Files (documents) searchable in the index.', (s) => s.files);
      gauge('trawl_index_content_bytes', 'Bytes of file content in the index.', (s) => s.contentBytes);
    }
    // Resident memory split (runtime/resident-memory.ts): the default metrics'
    // trawl_process_resident_memory_bytes is mostly mapped shard pages the kernel can drop;
    // RssAnon is what the daemon itself holds. Off Linux the gauges are not set.
    const resident = { at: 0, value: null as RssSample | null };
    const rss = (): RssSample | null => {
      if (Date.now() - resident.at > 1000) resident.value = rssOf('self');
      resident.at = Date.now();
      return resident.value;
    };
    for (const [name, help, pick] of [
      ['trawl_process_resident_anon_bytes', 'Resident anonymous memory (RssAnon): heaps, buffers, wasm memory of every thread.', (r: RssSample) => r.anon],
      ['trawl_process_resident_file_bytes', 'Resident file-backed memory (RssFile): mostly mapped shard pages, which the kernel drops when it needs the memory.', (r: RssSample) => r.file],
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

  request(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  search(kind: 'search' | 'stream' | 'symbols', stats: SearchStats, exhaustive: boolean): void {
    this.searches.inc({ kind, exhaustive: String(exhaustive) });
    for (const [field, counter] of this.searchCounters) counter.inc(stats[field] as number);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
