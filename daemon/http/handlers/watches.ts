// Watches (docs/watches.md): a member's saved queries whose new and removed matches, after
// each change of the index, are POSTed to a URL (signed), listed, and streamed over SSE.
//
// A watch belongs to the member who made it and sees what they see, checked again at each
// delivery. Members make them with an API key, a browser session or an OAuth token (the
// tool server's agents); a scoped access token cannot, since what it is limited to is not
// what the watch would go on seeing. Each member lists, reads, streams and deletes their
// own; an organization owner may also read and delete anyone's. None of these is rate
// limited: a watch costs its owner nothing per change.

import type { Identity } from '../../auth/identity.ts';
import { ServiceError } from '../../errors.ts';
import type { WatchEventRecord, WatchRecord } from '../../store/store.ts';
import { eventJson, eventRepoId, withId } from '../../watches/watch-event.ts';
import { checkWatchUrl } from '../../watches/url-policy.ts';
import { watchSecret } from '../../watches/signature.ts';
import type { NewWatch } from '../../watches/watch-evaluator.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services, WatchServices } from '../services.ts';

const BASE = { tag: 'Watches', rateLimited: false, authenticated: true } as const;
/** Events a stream sends from before it opened (Last-Event-ID), and a list's default and most. */
const REPLAY_MAX = 1000;
const LIST_DEFAULT = 100;
/** How often an open stream asks whether the daemon is shutting down. */
const STOPPING_POLL_MS = 250;

export function watchRoutes(s: Services): Route[] {
  return [
    {
      ...BASE,
      method: 'GET',
      path: '/api/watches',
      operationId: 'listWatches',
      summary: 'Your watches',
      query: 'EmptyQuery',
      response: { status: 200, schema: 'Watches', description: 'Your watches, oldest first.' },
      errors: ['INVALID_QUERY_PARAMS'],
      async handle(ctx) {
        const userId = member(ctx.identity, 'have watches');
        return { body: (await s.store.watches.list(userId)).map((x) => watchJson(x)) };
      },
    },
    {
      ...BASE,
      method: 'POST',
      path: '/api/watches',
      operationId: 'createWatch',
      summary: 'Makes a watch',
      description:
        'Its matches now are its baseline (a query matching more than settings.watches.maxMatches lines is refused: 400 WATCH_TOO_BROAD); after each change of the index, the lines that match and did not, and those that no longer match, are recorded as an event. ' +
        'With a url, each event is POSTed there, signed with the `secret` this answer holds (and no other).',
      body: 'NewWatch',
      response: { status: 201, schema: 'Watch', description: 'Made.' },
      errors: ['INVALID_REQUEST_BODY', 'FAILED_TO_PARSE_QUERY', 'WATCH_TOO_BROAD', 'WATCH_LIMIT_REACHED', 'INSUFFICIENT_PERMISSIONS'],
      async handle(ctx) {
        const userId = member(ctx.identity, 'make watches');
        if (ctx.identity.kind === 'scopedToken')
          throw new ServiceError(
            'INSUFFICIENT_PERMISSIONS',
            'a scoped access token cannot make watches: a watch sees what its owner sees, not what the token is limited to',
          );
        const w = watches(s);
        const settings = s.config.settings.watches;
        const body = ctx.body as NewWatch;
        const input: NewWatch = {
          userId,
          name: body.name,
          query: body.query,
          isRegexEnabled: body.isRegexEnabled ?? false,
          isCaseSensitivityEnabled: body.isCaseSensitivityEnabled ?? false,
        };
        if (body.url !== undefined) input.url = checkWatchUrl(body.url, settings.allowPrivateUrls).href;
        if ((await s.store.watches.list(userId)).length >= settings.maxPerUser)
          throw new ServiceError(
            'WATCH_LIMIT_REACHED',
            `you have ${settings.maxPerUser} watches, the most settings.watches.maxPerUser allows: delete one first`,
          );
        const made = await w.evaluator.create(input, ctx.identity.canSee);
        return { status: 201, body: watchJson(made, made.url !== undefined ? watchSecret(w.secret(), made.salt) : undefined) };
      },
    },
    {
      ...BASE,
      method: 'GET',
      path: '/api/watches/{id}',
      operationId: 'getWatch',
      summary: 'One watch',
      response: { status: 200, schema: 'Watch', description: 'The watch.' },
      errors: ['WATCH_NOT_FOUND'],
      async handle(ctx) {
        return { body: watchJson(await readable(s, ctx)) };
      },
    },
    {
      ...BASE,
      method: 'DELETE',
      path: '/api/watches/{id}',
      operationId: 'deleteWatch',
      summary: 'Deletes a watch, with its events',
      response: { status: 204, description: 'Deleted.' },
      errors: ['WATCH_NOT_FOUND'],
      async handle(ctx) {
        const watch = await readable(s, ctx);
        await s.store.watches.delete(watch.id);
        return { status: 204, body: undefined };
      },
    },
    {
      ...BASE,
      method: 'GET',
      path: '/api/watches/{id}/events',
      operationId: 'listWatchEvents',
      summary: "A watch's changes, oldest first",
      description:
        'Those after `after` (an event id), at most `limit`; kept settings.watches.eventRetentionDays. Changes in repositories you may no longer see are left out.',
      query: 'WatchEventsQuery',
      response: { status: 200, schema: 'WatchEvents', description: 'The events.' },
      errors: ['WATCH_NOT_FOUND', 'INVALID_QUERY_PARAMS'],
      async handle(ctx) {
        const watch = await own(s, ctx);
        const q = ctx.query as { after?: string; limit?: string };
        const limit = q.limit === undefined ? LIST_DEFAULT : Number(q.limit);
        if (limit < 1 || limit > REPLAY_MAX) throw new ServiceError('INVALID_QUERY_PARAMS', `limit must be between 1 and ${REPLAY_MAX}, got ${limit}`);
        const events = await s.store.watches.eventsAfter(watch.id, Number(q.after ?? 0), limit);
        const shown = await visibleEvents(watches(s), watch, events);
        return { body: shown.map(eventJson) };
      },
    },
    {
      ...BASE,
      method: 'GET',
      path: '/api/watches/{id}/stream',
      operationId: 'streamWatch',
      summary: "A watch's changes as server-sent events",
      description:
        'Each change is an event `watch.matches` whose id is the event id; a client that reconnects with Last-Event-ID is sent what it missed first (up to 1000). Comments keep the connection alive.',
      response: { status: 200, contentType: 'text/event-stream', description: 'The stream.' },
      errors: ['WATCH_NOT_FOUND'],
      async handle(ctx) {
        await stream(s, ctx, await own(s, ctx));
        return undefined;
      },
    },
  ];
}

function watches(s: Services): WatchServices {
  if (!s.watches)
    throw new ServiceError('SERVICE_UNAVAILABLE', 'watches are not available on this server yet (a node of a cluster that is still joining it): retry shortly');
  return s.watches;
}

/** The caller as a member: anonymous callers have no watches. */
function member(identity: Identity, what: string): string {
  if (identity.kind === 'anonymous' || identity.userId === undefined) throw new ServiceError('NOT_AUTHENTICATED', `sign in to ${what}`);
  return identity.userId;
}

async function find(s: Services, ctx: RouteContext): Promise<WatchRecord> {
  const raw = ctx.params.id!;
  const watch = /^[1-9][0-9]{0,15}$/.test(raw) ? await s.store.watches.get(Number(raw)) : undefined;
  if (!watch) throw new ServiceError('WATCH_NOT_FOUND', 'no watch with that id (GET /api/watches lists yours)');
  return watch;
}

/** The watch, when it is the caller's, or the caller is an organization owner; others' are 404 alike. */
async function readable(s: Services, ctx: RouteContext): Promise<WatchRecord> {
  const userId = member(ctx.identity, 'read watches');
  const watch = await find(s, ctx);
  if (watch.userId !== userId && ctx.identity.role !== 'owner')
    throw new ServiceError('WATCH_NOT_FOUND', 'no watch with that id (GET /api/watches lists yours)');
  return watch;
}

/** The watch, when it is the caller's own: what it found is shown to its owner alone. */
async function own(s: Services, ctx: RouteContext): Promise<WatchRecord> {
  const userId = member(ctx.identity, 'read watches');
  const watch = await find(s, ctx);
  if (watch.userId !== userId) throw new ServiceError('WATCH_NOT_FOUND', 'no watch with that id (GET /api/watches lists yours)');
  return watch;
}

/** The events whose repository the watch's owner may see now. */
async function visibleEvents(w: WatchServices, watch: WatchRecord, events: WatchEventRecord[]): Promise<WatchEventRecord[]> {
  const canSee = await w.owner(watch.userId);
  if (!canSee) return [];
  const out: WatchEventRecord[] = [];
  for (const e of events) {
    const repoId = eventRepoId(e);
    const visibility = await w.visibility(repoId);
    if (visibility === undefined || canSee({ repoId, visibility })) out.push(e);
  }
  return out;
}

export function watchJson(w: WatchRecord, secret?: string): Record<string, unknown> {
  return {
    id: w.id,
    name: w.name,
    query: w.query,
    isRegexEnabled: w.isRegexEnabled,
    isCaseSensitivityEnabled: w.isCaseSensitivityEnabled,
    ...(w.url !== undefined ? { url: w.url } : {}),
    owner: w.userId,
    createdAt: w.createdAt,
    ...(w.lastChangedAt !== undefined ? { lastChangedAt: w.lastChangedAt } : {}),
    delivered: w.delivered,
    deadLetters: w.deadLetters,
    ...(secret !== undefined ? { secret } : {}),
  };
}

/** The SSE stream: what the client missed (Last-Event-ID), then each change as it is recorded. */
async function stream(s: Services, ctx: RouteContext, watch: WatchRecord): Promise<void> {
  const w = watches(s);
  const reply = ctx.reply;
  let sending: Promise<void> = Promise.resolve();
  let lastWrite = Date.now();
  const send = (text: string): Promise<void> => {
    lastWrite = Date.now();
    return (sending = sending.then(() => (reply.aborted ? undefined : reply.write(text))));
  };
  const sendEvent = async (e: WatchEventRecord) => {
    if ((await visibleEvents(w, watch, [e])).length === 0) return;
    await send(`id: ${e.id}\nevent: watch.matches\ndata: ${JSON.stringify(withId(e))}\n\n`);
  };
  reply.begin(200, [
    ['Content-Type', 'text/event-stream; charset=utf-8'],
    ['Cache-Control', 'no-cache, no-transform'],
    ['X-Accel-Buffering', 'no'],
  ]);
  void send(': watching\n\n');
  // Events recorded while the missed ones are read are held, then sent after them, once.
  const held: WatchEventRecord[] = [];
  let live = false;
  let lastSent = 0;
  const stop = w.feed.subscribe(watch.id, (e) => {
    if (!live) held.push(e);
    else if (e.id > lastSent) {
      lastSent = e.id;
      void sendEvent(e);
    }
  });
  const keepAliveMs = s.config.settings.http.keepAliveMs;
  const timer = setInterval(
    () => {
      if (Date.now() - lastWrite >= keepAliveMs - 5) void send(': keep-alive\n\n');
    },
    Math.max(50, Math.floor(keepAliveMs / 3)),
  );
  try {
    const from = Number(ctx.headers['last-event-id'] ?? '');
    if (Number.isSafeInteger(from) && from > 0) {
      for (const e of await s.store.watches.eventsAfter(watch.id, from, REPLAY_MAX)) {
        lastSent = e.id;
        await sendEvent(e);
      }
    }
    for (const e of held) {
      if (e.id <= lastSent) continue;
      lastSent = e.id;
      await sendEvent(e);
    }
    live = true;
    // Until the client leaves, or the daemon begins to shut down: a stream has no end of
    // its own, and must not hold the shutdown for its whole timeout.
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) return resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      const stopping = setInterval(() => {
        if (s.unavailable() === undefined) return;
        clearInterval(stopping);
        resolve();
      }, STOPPING_POLL_MS);
      ctx.signal.addEventListener('abort', () => clearInterval(stopping), { once: true });
    });
  } finally {
    stop();
    clearInterval(timer);
    await sending.catch(() => {});
    if (!reply.aborted) reply.end();
  }
}
