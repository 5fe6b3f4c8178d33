// One watch's changes on the settings page: its recorded events (GET
// /api/watches/{id}/events, oldest first, read to the end so that the newest are shown,
// newest first), then each new one as it is recorded, from the watch's stream
// (GET /api/watches/{id}/stream) while the panel is open. The stream is read with fetch,
// not EventSource: the browser session's requests must carry the X-CSRF-Token header,
// which EventSource cannot send. When the stream ends or fails, the panel reconnects after
// a pause (growing to 30 s), sending the last event id it has (Last-Event-ID), and the
// server sends what was missed first; closing the panel ends the stream.
//
// Each line links to the file view: an added line at the commit the index reached, marked
// and landed on, like a search result; a removed line to the file's history at that
// commit (the line is not in that commit; its history holds the commit that took it out).

import { ApiError, apiFetch, apiJson, qs } from './api.ts';
import { formatCount, h } from './dom.ts';
import { commitUrl, repoUrl, viewUrl } from './route.ts';
import { timeEl } from './settings-common.ts';
import { sseEvents } from './sse.ts';
import type { Watch, WatchEvent, WatchMatch } from './watch-types.ts';

/** The changes shown; older ones are counted, not drawn. */
const SHOWN = 50;
/** The events endpoint's most per request. */
const PAGE = 1000;
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

export interface ChangesPanel {
  element: HTMLElement;
  /** Ends the stream (the panel's element is the caller's to remove). */
  close(): void;
}

/** `onEvent`: a change arrived over the stream (the caller refreshes the watch's row). */
export function changesPanel(watch: Watch, onClose: () => void, onEvent: (e: WatchEvent) => void): ChangesPanel {
  const controller = new AbortController();
  const heading = h('h3', { id: 'watch-changes-title', tabindex: -1 }, `Changes of “${watch.name}”`);
  const status = h('p', { class: 'status', id: 'watch-changes-status', role: 'status' }, 'Loading the changes…');
  const error = h('p', { class: 'form-error', id: 'watch-changes-error', role: 'alert' });
  const list = h('ol', { class: 'watch-events', id: 'watch-events', 'aria-label': `Changes of ${watch.name}, newest first` });
  const older = h('p', { class: 'hint', id: 'watch-events-older' });
  const element = h(
    'section',
    { class: 'watch-changes', id: 'watch-changes', 'aria-labelledby': 'watch-changes-title', 'data-watch-id': watch.id },
    h('div', { class: 'watch-changes-head' }, heading, h('button', { type: 'button', class: 'link', id: 'watch-changes-close', onclick: onClose }, 'Close')),
    status,
    error,
    list,
    older,
  );
  let last = 0;
  let count = 0;
  const show = (events: WatchEvent[]): void => {
    for (const e of events) {
      if (e.id <= last) continue;
      last = e.id;
      count++;
      list.prepend(eventItem(e));
    }
    while (list.children.length > SHOWN) list.lastElementChild!.remove();
    older.textContent = count > SHOWN ? `${formatCount(count - SHOWN)} older ${count - SHOWN === 1 ? 'change is' : 'changes are'} not shown.` : '';
  };

  void (async () => {
    try {
      for (;;) {
        const page = await apiJson<WatchEvent[]>(`/api/watches/${watch.id}/events?${qs({ after: last, limit: PAGE })}`, { signal: controller.signal });
        show(page);
        if (page.length < PAGE) break;
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      status.textContent = '';
      error.textContent = `The changes could not be loaded: ${(err as Error).message}`;
      return;
    }
    if (count === 0) list.before(h('p', { class: 'status', id: 'watch-events-none' }, 'No change yet: its matches are as they were when it was made.'));
    await follow(watch, controller.signal, () => last, {
      live: () => {
        status.textContent = 'Live: new changes appear at the top as the index changes.';
        error.textContent = '';
      },
      event: (e) => {
        if (e.id <= last) return;
        document.getElementById('watch-events-none')?.remove();
        show([e]);
        status.textContent = `A new change in ${e.repository.name}: ${e.added.length} added, ${e.removed.length} removed.`;
        onEvent(e);
      },
      lost: (message, retryMs) => {
        status.textContent = '';
        error.textContent = retryMs === undefined ? message : `${message}; trying again in ${Math.round(retryMs / 1000)} s.`;
      },
    });
  })();

  return {
    element,
    close() {
      controller.abort();
    },
  };
}

interface Follow {
  /** The stream is open. */
  live(): void;
  event(e: WatchEvent): void;
  /** The stream ended or failed; `retryMs` undefined: for good. */
  lost(message: string, retryMs: number | undefined): void;
}

/** Reads the watch's stream until `signal` aborts, reconnecting with the last event id after a pause. */
async function follow(watch: Watch, signal: AbortSignal, lastId: () => number, to: Follow): Promise<void> {
  let wait = RETRY_FIRST_MS;
  while (!signal.aborted) {
    let message = 'The live stream ended';
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (lastId() > 0) headers['Last-Event-ID'] = String(lastId());
      const res = await apiFetch(`/api/watches/${watch.id}/stream`, { headers, signal });
      to.live();
      wait = RETRY_FIRST_MS;
      for await (const e of sseEvents(res.body!, signal)) if (e.event === 'watch.matches') to.event(JSON.parse(e.data) as WatchEvent);
    } catch (err) {
      if (signal.aborted) return;
      // Gone (deleted elsewhere), or signed out: nothing to come back to.
      if (err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 401 || err.statusCode === 403)) {
        to.lost(`The live stream stopped: ${err.message}`, undefined);
        return;
      }
      message = `The live stream failed: ${(err as Error).message}`;
    }
    if (signal.aborted) return;
    to.lost(message, wait);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, wait);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
    wait = Math.min(wait * 2, RETRY_MAX_MS);
  }
}

function eventItem(e: WatchEvent): HTMLElement {
  const repo = e.repository;
  return h(
    'li',
    { class: 'watch-event', 'data-event-id': e.id },
    h(
      'div',
      { class: 'watch-event-head' },
      timeEl(e.at),
      ' in ',
      h('a', { href: repoUrl(repo.name), class: 'repo' }, repo.name),
      repo.commit ? [' at ', h('a', { href: commitUrl(repo.name, repo.commit), class: 'sha', title: repo.commit }, repo.commit.slice(0, 10))] : null,
      h(
        'span',
        { class: 'diff-counts' },
        h('span', { class: 'added-count' }, `+${e.added.length}`),
        h('span', { class: 'removed-count' }, `−${e.removed.length}`),
        h('span', { class: 'sr-only' }, ` (${e.added.length} added, ${e.removed.length} removed)`),
      ),
      e.delivery ? h('span', { class: `delivery ${e.delivery.state}` }, deliveryText(e.delivery)) : null,
    ),
    h(
      'table',
      { class: 'code-table watch-lines' },
      h('tbody', {}, [...e.added.map((m) => lineRow(e, m, true)), ...e.removed.map((m) => lineRow(e, m, false))]),
    ),
  );
}

function lineRow(e: WatchEvent, m: WatchMatch, added: boolean): HTMLElement {
  const { name, commit } = e.repository;
  const at = m.line > 0 ? `:${m.line}` : '';
  let href = repoUrl(name);
  if (commit !== undefined)
    href = added ? `${viewUrl('blob', name, commit, m.path)}${m.line > 0 ? `?hl=${m.line}#L${m.line}` : ''}` : viewUrl('commits', name, commit, m.path);
  return h(
    'tr',
    { class: added ? 'add' : 'del' },
    h('td', { class: 'sign', 'aria-hidden': 'true' }, added ? '+' : '−'),
    h(
      'td',
      { class: 'where' },
      h(
        'a',
        { href, title: added ? 'The line as it is now' : 'The line as it was: the history of the file shows the commit that changed it' },
        h('span', { class: 'sr-only' }, added ? 'added: ' : 'removed: '),
        `${m.path}${at}`,
      ),
    ),
    h('td', { class: 'code' }, m.text),
  );
}

function deliveryText(d: NonNullable<WatchEvent['delivery']>): string {
  const attempts = `${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}`;
  switch (d.state) {
    case 'delivered':
      return `delivered (${attempts})`;
    case 'pending':
      return d.attempts === 0 ? 'delivery pending' : `delivery pending after ${attempts}${d.lastError ? `: ${d.lastError}` : ''}`;
    case 'dead':
      return `dead letter after ${attempts}${d.lastError ? `: ${d.lastError}` : ''}`;
    default:
      return `not sent${d.lastError ? ` (${d.lastError})` : ''}`;
  }
}
