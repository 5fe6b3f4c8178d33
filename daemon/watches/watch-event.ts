// What a change of a watch's matches says (the JSON POSTed, streamed and listed):
//
//   { "type": "watch.matches", "id": <event id>, "at": ISO time,
//     "watch": { "id", "name", "query" },
//     "repository": { "id", "name", "commit": the default branch's indexed commit },
//     "added": [{ "path", "line", "text" }], "removed": [{ "path", "line", "text" }] }
//
// `added` are as the lines are now, `removed` as they were last reported (a line that only
// moved was not reported again, so it keeps the line number it had then). The
// stored payload has no "id" (the store assigns it with the row): withId adds it as sent.

import type { WatchEventRecord, WatchMatch, WatchRecord } from '../store/store.ts';

export const WATCH_EVENT_TYPE = 'watch.matches';

export interface WatchEventBody {
  type: typeof WATCH_EVENT_TYPE;
  at: string;
  watch: { id: number; name: string; query: string };
  repository: { id: number; name: string; commit?: string };
  added: WatchMatch[];
  removed: WatchMatch[];
}

export function watchEventBody(
  watch: WatchRecord,
  repository: WatchEventBody['repository'],
  change: { added: WatchMatch[]; removed: WatchMatch[] },
  at: string,
): WatchEventBody {
  return {
    type: WATCH_EVENT_TYPE,
    at,
    watch: { id: watch.id, name: watch.name, query: watch.query },
    repository,
    added: change.added,
    removed: change.removed,
  };
}

/** The event as delivered: its stored body with its id first. */
export function withId(event: WatchEventRecord): WatchEventBody & { id: number } {
  const body = JSON.parse(event.payload) as WatchEventBody;
  const { type, ...rest } = body;
  return { type, id: event.id, ...rest };
}

/** The repository an event is about (its visibility is checked at delivery). */
export function eventRepoId(event: WatchEventRecord): number {
  return (JSON.parse(event.payload) as WatchEventBody).repository.id;
}

/** An event as the API lists it (GET /api/watches/{id}/events): its body, and how its POST went when it has one. */
export function eventJson(e: WatchEventRecord): Record<string, unknown> {
  const body: Record<string, unknown> = { ...withId(e) };
  if (e.state !== 'none' || e.attempts > 0 || e.lastError !== undefined) {
    body.delivery = {
      state: e.state === 'none' ? 'withheld' : e.state,
      attempts: e.attempts,
      ...(e.nextAttemptAt !== undefined ? { nextAttemptAt: e.nextAttemptAt } : {}),
      ...(e.lastError !== undefined ? { lastError: e.lastError } : {}),
    };
  }
  return body;
}
