// The search page: results stream in from POST /api/stream_search as the shards find them
// (one list item per file, each put where the API ranks it: ranked-list.ts), then the final
// statistics and, when the search stopped at the match limit, a notice with a way to ask
// for more.
//
// The first results wait up to SETTLE_MS for more before they are drawn: most searches are
// complete by then and appear once, in their final order; a slower one shows what it has
// then, and later files are inserted at their ranks without moving what the reader is
// looking at (ranked-list.ts).

import type { SearchStats, StreamedFile } from '../../daemon/search/types.ts';
import { ApiError, apiFetch, postJson } from './api.ts';
import { clear, formatBytes, formatCount, formatNs, h } from './dom.ts';
import { RankedList } from './ranked-list.ts';
import { matchCount, renderResult } from './results.ts';
import { namesContext } from './query-context.ts';
import { MAX_MATCHES, searchUrl, type SearchForm, type SearchParams } from './search-form.ts';
import { sseMessages } from './sse.ts';
import { watchUrl } from './watch-link.ts';

type Message =
  | { type: 'chunk'; stats: SearchStats; files: StreamedFile[] }
  | { type: 'final'; accumulatedStats: SearchStats; isSearchExhaustive: boolean }
  | { type: 'error'; error: { statusCode: number; errorCode: string; message: string } };

/** The statistics shown in the details table, in this order, with how to show each. */
const STAT_ROWS: Array<[keyof SearchStats, string, (v: number) => string]> = [
  ['actualMatchCount', 'matches returned', formatCount],
  ['totalMatchCount', 'matches found', formatCount],
  ['fileCount', 'files returned', formatCount],
  ['duration', 'duration', formatNs],
  ['wait', 'waiting for a search slot', formatNs],
  ['matchTreeConstruction', 'query planning', formatNs],
  ['matchTreeSearch', 'matching', formatNs],
  ['shardFilesConsidered', 'documents in scanned shards', formatCount],
  ['filesConsidered', 'candidate documents', formatCount],
  ['filesLoaded', 'documents read', formatCount],
  ['filesSkipped', 'candidates left unexamined', formatCount],
  ['contentBytesLoaded', 'content read', formatBytes],
  ['indexBytesLoaded', 'index read', formatBytes],
  ['ngramLookups', 'n-gram lookups', formatCount],
  ['ngramMatches', 'n-gram candidate positions', formatCount],
  ['regexpsConsidered', 'regex executions', formatCount],
  ['shardsScanned', 'shards scanned', formatCount],
  ['shardsSkipped', 'shards skipped (enough results)', formatCount],
  ['shardsSkippedFilter', 'shards ruled out by the index', formatCount],
  ['crashes', 'shards that failed', formatCount],
];

/**
 * How long the first results of a search wait for more before they are drawn. The stream
 * sends its first file as soon as one is found and the rest of a batch within 100 ms
 * (daemon/search/stream-sink.ts); on the Linux source the median search completed a few
 * tens of milliseconds after its first result was on screen (docs/web-ui.md, "Speed" has
 * both times). So most searches are drawn once, complete and in order, for at most this
 * much later a first result.
 */
const SETTLE_MS = 50;

/** How long the end of a search waits for the frame that shows its first results (it never comes in a hidden tab). */
const FIRST_FRAME_WAIT_MS = 100;

/** How a search ended: the daemon's stats, the files and matches shown, and when the first results and the end came (ms since it was asked). */
interface SearchEnd {
  stats: SearchStats;
  exhaustive: boolean;
  files: number;
  matches: number;
  firstMs: number | undefined;
  totalMs: number;
}

export class SearchPage {
  private controller: AbortController | undefined;
  private readonly status = h('div', { id: 'search-status', class: 'status', role: 'status', 'aria-live': 'polite' });
  private readonly notice = h('div', { id: 'search-notice' });
  private readonly list = h('ol', { id: 'results', class: 'results', 'aria-label': 'Search results' });
  private readonly stats = h('div', { id: 'search-stats' });
  private readonly ranked = new RankedList(this.list);
  /** "Watch this query": the settings page's watch form, filled in with the search on screen (watch-link.ts). */
  private readonly watch = h(
    'a',
    { id: 'watch-query', class: 'watch-this', href: '/settings#watches', hidden: true, title: 'Be told when lines matching this query are added or removed' },
    'Watch this query',
  );
  readonly element = h(
    'section',
    { class: 'search-page', 'aria-label': 'Search' },
    h('div', { class: 'search-head' }, this.status, this.watch),
    this.notice,
    this.list,
    this.stats,
  );

  constructor(private readonly form: SearchForm) {}

  /** Runs a search (replacing the one on screen). `push`: a new history entry. */
  async run(p: SearchParams, push: boolean): Promise<void> {
    this.controller?.abort();
    const controller = (this.controller = new AbortController());
    const url = searchUrl(p);
    if (push && location.pathname + location.search !== url) history.pushState(null, '', url);
    document.title = `${p.query} · trawl`;
    this.watch.href = watchUrl(p);
    this.watch.hidden = false;
    this.form.showError(undefined);
    this.ranked.clear();
    delete this.list.dataset.firstResultAt;
    delete this.list.dataset.doneAt;
    clear(this.notice);
    clear(this.stats);
    this.status.textContent = 'Searching…';
    this.list.setAttribute('aria-busy', 'true');
    const started = performance.now();
    let firstAt: number | undefined;
    /** Resolves once the frame that shows the first results has started. */
    let firstFrame: Promise<void> | undefined;
    let files = 0;
    let matches = 0;
    /** Files received and not drawn yet (the first ones, while they settle). */
    const held: StreamedFile[] = [];
    let settle: ReturnType<typeof setTimeout> | undefined;
    const draw = (): void => {
      clearTimeout(settle);
      settle = undefined;
      // A newer search has the list now.
      if (controller.signal.aborted || held.length === 0) return;
      this.ranked.insert(held.splice(0), renderResult);
      if (firstAt !== undefined) return;
      firstAt = performance.now() - started;
      // For the bench (bench/suite/phase-web.ts): when the frame that shows the first
      // result starts, in ms since the page's navigation began.
      firstFrame = new Promise((resolve) =>
        requestAnimationFrame((t) => {
          this.list.dataset.firstResultAt = t.toFixed(1);
          resolve();
        }),
      );
    };
    try {
      const res = await apiFetch(
        '/api/stream_search',
        postJson(
          {
            query: p.query,
            matches: p.matches,
            contextLines: 1,
            isRegexEnabled: p.regex,
            isCaseSensitivityEnabled: p.caseSensitive,
            // A context: in the query is the query's own (the server refuses two that differ).
            ...(p.context !== undefined && !namesContext(p.query) ? { context: p.context } : {}),
          },
          { signal: controller.signal },
        ),
      );
      for await (const raw of sseMessages(res.body!, controller.signal)) {
        const msg = raw as Message;
        if (msg.type === 'chunk') {
          if (msg.files.length === 0) continue;
          for (const f of msg.files) {
            held.push(f);
            files++;
            matches += matchCount(f);
          }
          if (firstAt !== undefined) draw();
          else settle ??= setTimeout(draw, SETTLE_MS);
          this.status.textContent = `${formatCount(matches)} ${matches === 1 ? 'match' : 'matches'} in ${formatCount(files)} ${files === 1 ? 'file' : 'files'} so far…`;
        } else if (msg.type === 'final') {
          draw();
          // The end is marked once the first results are on screen (drawn just now when the
          // search ended while they settled), so that it never comes before them.
          if (firstFrame) await Promise.race([firstFrame, new Promise((resolve) => setTimeout(resolve, FIRST_FRAME_WAIT_MS))]);
          if (controller.signal.aborted) return;
          this.list.dataset.doneAt = performance.now().toFixed(1);
          this.finish(p, {
            stats: msg.accumulatedStats,
            exhaustive: msg.isSearchExhaustive,
            files,
            matches,
            firstMs: firstAt,
            totalMs: performance.now() - started,
          });
        } else if (msg.type === 'error') {
          draw();
          this.status.textContent = '';
          this.notice.append(h('p', { class: 'notice error', role: 'alert' }, `The search failed: ${msg.error.message}`));
        }
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      // What arrived before the failure is shown with it.
      draw();
      this.status.textContent = '';
      if (err instanceof ApiError && (err.errorCode === 'FAILED_TO_PARSE_QUERY' || err.errorCode === 'INVALID_REQUEST_BODY')) {
        this.form.showError(err.message, p.query);
        // A query the server cannot parse cannot be watched either.
        this.watch.hidden = true;
      } else {
        this.notice.append(
          h('p', { class: 'notice error', role: 'alert' }, err instanceof ApiError ? err.message : `The search could not be run: ${(err as Error).message}`),
        );
      }
    } finally {
      if (this.controller === controller) this.list.removeAttribute('aria-busy');
    }
  }

  private finish(p: SearchParams, { stats: s, exhaustive, files, matches, firstMs, totalMs }: SearchEnd): void {
    this.status.textContent =
      files === 0 ? 'No results.' : `${formatCount(matches)} ${matches === 1 ? 'match' : 'matches'} in ${formatCount(files)} ${files === 1 ? 'file' : 'files'}`;
    if (!exhaustive) {
      const more = Math.min(p.matches * 10, MAX_MATCHES);
      const why =
        s.actualMatchCount >= p.matches || s.filesSkipped > 0 || s.shardsSkipped > 0
          ? `the search stopped at the limit of ${formatCount(p.matches)} matches`
          : 'the search did not finish everywhere (a time limit or a failed shard)';
      this.notice.append(
        h(
          'div',
          { class: 'notice truncated', id: 'truncated', role: 'note' },
          h('strong', {}, 'Results are truncated: '),
          `${why}; ${formatCount(s.totalMatchCount)} matches found so far, ${formatCount(s.actualMatchCount)} shown. `,
          more > p.matches
            ? h('a', { href: searchUrl({ ...p, matches: more }) }, `Search for up to ${formatCount(more)} matches`)
            : 'Narrow the query with filters to see the rest.',
        ),
      );
    }
    const timing = `${formatNs(s.duration)} in the daemon${firstMs !== undefined ? `, first result on screen after ${firstMs.toFixed(0)} ms, all after ${totalMs.toFixed(0)} ms` : `, ${totalMs.toFixed(0)} ms in all`}`;
    this.stats.append(
      h(
        'details',
        { class: 'stats' },
        h('summary', {}, `${formatCount(s.filesConsidered)} candidate files, ${formatCount(s.shardsScanned)} shards scanned · ${timing}`),
        h(
          'table',
          {},
          h(
            'tbody',
            {},
            STAT_ROWS.map(([key, label, fmt]) =>
              h('tr', {}, h('th', { scope: 'row' }, label), h('td', { 'data-stat': key, 'data-value': s[key] }, fmt(s[key] as number))),
            ),
            h('tr', {}, h('th', { scope: 'row' }, 'flush reason'), h('td', { 'data-stat': 'flushReason' }, s.flushReason)),
          ),
        ),
      ),
    );
  }

  /** The result links, in order, for keyboard moves. */
  links(): HTMLAnchorElement[] {
    return [...this.list.querySelectorAll<HTMLAnchorElement>('a[data-result-link]')];
  }
}
