// Watches for a language model: a member's watches (list_watches, create_watch) and the
// changes of one (get_watch_changes, and the text of its resource trawl://watches/{id}).
// A change is one event of the REST API (GET /api/watches/{id}/events): a header naming
// the event, its repository and commit, then grep-like lines, `+ path:line: text` for a
// line that matches now and did not, `- path:line: text` for one that no longer matches.
// What each structuredContent is, exactly, is said above each function.

import type { WatchMatch } from '../store/store.ts';
import { clip, structuredPrefix, TextBudget } from './budget.ts';
import { plural, type Rendered } from './render-search.ts';

/** The URI of a watch's resource (watch-resources.ts). */
export const watchUri = (id: number): string => `trawl://watches/${id}`;

/** A watch as the REST API answers it (the Watch schema). */
export interface WatchAnswer {
  id: number;
  name: string;
  query: string;
  isRegexEnabled: boolean;
  isCaseSensitivityEnabled: boolean;
  url?: string;
  owner: string;
  createdAt: string;
  lastChangedAt?: string;
  delivered: number;
  deadLetters: number;
  secret?: string;
}

/** A change as the REST API answers it (the WatchEvent schema). */
export interface WatchEventAnswer {
  type: 'watch.matches';
  id: number;
  at: string;
  watch: { id: number; name: string; query: string };
  repository: { id: number; name: string; commit?: string };
  added: WatchMatch[];
  removed: WatchMatch[];
  delivery?: { state: string; attempts: number; nextAttemptAt?: string; lastError?: string };
}

/** A watch on two lines: what it is called and watches, then its options and counts. */
function watchLines(w: WatchAnswer): string[] {
  const notes: string[] = [];
  if (w.isRegexEnabled) notes.push('regex');
  if (w.isCaseSensitivityEnabled) notes.push('case-sensitive');
  notes.push(
    w.url === undefined ? 'not POSTed anywhere' : `POSTs to ${w.url} (${w.delivered} delivered, ${plural(w.deadLetters, 'dead letter', 'dead letters')})`,
  );
  notes.push(`created ${w.createdAt}`);
  notes.push(w.lastChangedAt === undefined ? 'no change yet' : `last changed ${w.lastChangedAt}`);
  return [`id=${w.id}  "${clip(w.name)}"  query: ${clip(w.query)}`, `  ${watchUri(w.id)}; ${notes.join('; ')}`];
}

/** structuredContent: `{ watches }`, the REST answer cut to the watches the text shows (and to STRUCTURED_BUDGET). */
export function renderWatches(watches: WatchAnswer[]): Rendered {
  const out = new TextBudget();
  out.add(
    watches.length === 0
      ? 'You have no watches. Make one with create_watch.'
      : `${plural(watches.length, 'watch', 'watches')}, oldest first (read a watch's changes with get_watch_changes id=N, or subscribe to its resource):`,
  );
  const { shown } = out.addBlocks(watches.length, (i) => ['', ...watchLines(watches[i]!)]);
  const hints = shown < watches.length ? [`${watches.length - shown} more watches were not shown (output limit)`] : [];
  const k = structuredPrefix({ watches: [] }, watches, shown);
  return { text: out.text(hints), structured: { watches: watches.slice(0, k) } };
}

/** structuredContent: the REST answer, the watch made (with its `secret` when it has a url). */
export function renderNewWatch(w: WatchAnswer): Rendered {
  const out = new TextBudget();
  out.add(`Watch made:`, '', ...watchLines(w), '');
  out.add(
    'Its matches now are its baseline. After each change of the index, the lines that match and did not, and those that no longer match, are recorded as a change: ' +
      `read them with get_watch_changes id=${w.id}, or subscribe to the resource ${watchUri(w.id)} to be told of each.`,
  );
  if (w.secret !== undefined)
    out.add(
      '',
      `Each change is POSTed to ${w.url}, signed: X-Trawl-Signature-256 is sha256=HMAC-SHA256(secret, body) in hex, with the secret ${w.secret} (shown this once; keep it).`,
    );
  return { text: out.text(), structured: { ...w } };
}

/** A change's header and its lines. */
function eventLines(e: WatchEventAnswer): string[] {
  const commit = e.repository.commit === undefined ? '' : ` commit=${e.repository.commit}`;
  const notes = [`${e.added.length} added`, `${e.removed.length} removed`];
  if (e.delivery !== undefined) notes.push(`POST ${e.delivery.state}${e.delivery.lastError === undefined ? '' : `: ${clip(e.delivery.lastError, 200)}`}`);
  const line = (sign: string, m: WatchMatch) => (m.line === 0 ? `${sign} ${m.path}  (the path matches)` : `${sign} ${m.path}:${m.line}: ${clip(m.text)}`);
  return [
    `## change ${e.id} at ${e.at}: repo=${e.repository.name}${commit}  (${notes.join('; ')})`,
    ...e.added.map((m) => line('+', m)),
    ...e.removed.map((m) => line('-', m)),
  ];
}

/** The changes in the text, in order, and what the text left out (as hints). */
function changeBlocks(out: TextBudget, events: WatchEventAnswer[]): { shown: number; hints: string[] } {
  const { shown, cut } = out.addBlocks(events.length, (i) => ['', ...eventLines(events[i]!)]);
  const hints: string[] = [];
  if (cut)
    hints.push(`change ${events[0]!.id} was cut to fit (${events[0]!.added.length + events[0]!.removed.length} lines): a narrower query makes smaller changes`);
  return { shown, hints };
}

/**
 * The changes of watch `args.id` after change `args.after`, oldest first.
 * structuredContent: `{ events }`, the REST answer cut to the changes the text shows (and
 * to STRUCTURED_BUDGET).
 */
export function renderWatchChanges(events: WatchEventAnswer[], args: { id: number; after: number; limit: number }): Rendered {
  const out = new TextBudget();
  const first = events[0];
  const since = args.after === 0 ? '' : ` after change ${args.after}`;
  out.add(
    first === undefined
      ? `No changes of watch ${args.id}${since}${args.after === 0 ? ': none recorded yet, or none kept any more' : ''}.`
      : `${plural(events.length, 'change', 'changes')} of watch ${args.id} "${clip(first.watch.name)}" (query: ${clip(first.watch.query)})${since}, oldest first:`,
  );
  const { shown, hints } = changeBlocks(out, events);
  const next = (n: number) => `call get_watch_changes with id=${args.id} after=${events[n - 1]!.id}`;
  if (shown < events.length) hints.push(`${plural(events.length - shown, 'more change was', 'more changes were')} not shown (output limit): ${next(shown)}`);
  else if (events.length === args.limit) hints.push(`more changes may follow (limit ${args.limit} reached): ${next(shown)}`);
  else if (shown > 0) hints.push(`those are all the changes so far; for later ones ${next(shown)}`);
  const k = structuredPrefix({ events: [] }, events, shown);
  return { text: out.text(hints), structured: { events: events.slice(0, k) } };
}

/** The text of a watch's resource: the watch, then its most recent changes (`earlier`: older ones exist). */
export function renderWatchResource(w: WatchAnswer, recent: WatchEventAnswer[], earlier: boolean): string {
  const out = new TextBudget();
  out.add(...watchLines(w), '');
  out.add(
    recent.length === 0
      ? 'No changes: none recorded yet, or none kept any more.'
      : `Its ${earlier ? `${plural(recent.length, 'most recent change', 'most recent changes')}` : plural(recent.length, 'change', 'changes')}, oldest first:`,
  );
  const { shown, hints } = changeBlocks(out, recent);
  if (shown < recent.length)
    hints.push(`${recent.length - shown} more recent changes were not shown (output limit): get_watch_changes with id=${w.id} after=${recent[shown - 1]!.id}`);
  if (earlier) hints.push(`earlier changes are kept too: get_watch_changes with id=${w.id} lists them from the first`);
  return out.text(hints);
}
