// POST /api/search (blocking) and POST /api/stream_search (Server-Sent Events,
// docs/http-api.md sections 10 and 12). Both take a turn at the search gate, search within the
// configured time budget, only in repositories the caller may see, within the search
// context the query names or else the caller's default one (http/contexts.ts), and stop
// when the client goes away.

import { ServiceError } from '../../errors.ts';
import { MAX_QUERY_BYTES } from '../../search/request.ts';
import type { PlannedSearch, SearchChunk } from '../../search/searcher.ts';
import type { SearchRequest } from '../../search/types.ts';
import { FILES, jsonPartsWithFiles, jsonWithFiles } from '../../search/wire.ts';
import { callerKey } from '../caller.ts';
import { RawJson } from '../respond.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

const SEARCH_ERRORS = ['INVALID_REQUEST_BODY', 'FAILED_TO_PARSE_QUERY', 'UNKNOWN_CONTEXT'] as const;

/** An SSE message's frame. */
const DATA = Buffer.from('data: ');
const END = Buffer.from('\n\n');

export function searchRoutes(s: Services): Route[] {
  return [
    {
      method: 'POST',
      path: '/api/search',
      operationId: 'search',
      summary: 'Code search: every matching file chunk in one response',
      description:
        'Searches the default branch of each repository unless the query names branches (`branch:`). Results are ranked best first; `matches` bounds the match ranges returned.',
      tag: 'Search',
      body: 'SearchRequest',
      response: { status: 200, schema: 'SearchResponse', description: 'The results.' },
      errors: [...SEARCH_ERRORS, 'SERVICE_UNAVAILABLE'],
      rateLimited: true,
      authenticated: true,
      async handle(ctx) {
        const req = searchRequest(ctx);
        const caller = callerKey(ctx.identity, ctx.clientAddress);
        // A bad query is a 400 before the search waits for a turn; the plan is not made twice.
        const planned = await s.planner.plan(req, caller, ctx.signal);
        // The repositories it reads, resolved once, before it waits (an unknown context is a 400 now).
        const repoFilter = await s.contexts.searchFilter(ctx.identity, { named: namedContext(ctx, planned), useDefault: true });
        const release = await s.gate.enter(caller, ctx.signal);
        try {
          const res = await s.searcher.searchWire(req, {
            planned,
            caller,
            timeoutMs: s.config.settings.search.timeoutMs,
            signal: ctx.signal,
            repoFilter,
          });
          s.metrics?.search('search', res.stats, res.isSearchExhaustive);
          // The files are written as the workers shaped them (search/wire.ts).
          const fields: Array<[string, unknown]> = [
            ['stats', res.stats],
            ['files', FILES],
            ['repositoryInfo', res.repositoryInfo],
            ['isSearchExhaustive', res.isSearchExhaustive],
          ];
          if (res.unavailableShards) fields.push(['unavailableShards', res.unavailableShards]);
          const body = jsonWithFiles(fields, res.files);
          return { body: new RawJson(body) };
        } finally {
          release();
        }
      },
    },
    {
      method: 'POST',
      path: '/api/stream_search',
      operationId: 'streamSearch',
      summary: 'Code search, streaming results as they are found (Server-Sent Events)',
      description:
        'Each message is one `data: <json>` line and a blank line: `chunk` messages with results, one `final` message, or an `error` message; then `data: [DONE]`. ' +
        'Files come in shard order, each message ranked in itself; each carries its ranking `score`, by which (then repository, then path) they sort into the order `/api/search` gives. ' +
        'A `: keep-alive` comment is sent while no result is ready. Errors found before the stream starts (body, query, credentials, limits) are ordinary JSON error responses.',
      tag: 'Search',
      body: 'SearchRequest',
      response: {
        status: 200,
        schema: 'StreamMessage',
        contentType: 'text/event-stream',
        description: 'The stream; each `data:` line holds one StreamMessage (or `[DONE]`).',
      },
      errors: [...SEARCH_ERRORS, 'SERVICE_UNAVAILABLE'],
      rateLimited: true,
      authenticated: true,
      handle: (ctx) => streamSearch(s, ctx),
    },
  ];
}

/** The validated body as the searcher takes it (a bad query is a 400 from the searcher's own planning). */
function searchRequest(ctx: RouteContext): Required<SearchRequest> {
  const b = ctx.body as SearchRequest;
  if (Buffer.byteLength(b.query) > MAX_QUERY_BYTES) {
    throw new ServiceError('INVALID_REQUEST_BODY', `query must be at most ${MAX_QUERY_BYTES} bytes, got ${Buffer.byteLength(b.query)}`);
  }
  const req: Required<SearchRequest> = {
    query: b.query,
    matches: b.matches,
    contextLines: b.contextLines ?? 0,
    whole: b.whole ?? false,
    isRegexEnabled: b.isRegexEnabled ?? false,
    isCaseSensitivityEnabled: b.isCaseSensitivityEnabled ?? false,
  };
  return req;
}

/** The context the request names: the body's `context` or the query's `context:` (both: they must agree). */
function namedContext(ctx: RouteContext, planned: PlannedSearch): string | undefined {
  const inBody = (ctx.body as { context?: string }).context;
  const inQuery = planned.plan.context;
  if (inBody !== undefined && inQuery !== undefined && inBody !== inQuery)
    throw new ServiceError('INVALID_REQUEST_BODY', `the body's context is "${inBody}" and the query names context:${inQuery}: name one`);
  return inBody ?? inQuery;
}

async function streamSearch(s: Services, ctx: RouteContext): Promise<undefined> {
  const req = searchRequest(ctx);
  const caller = callerKey(ctx.identity, ctx.clientAddress);
  // Errors found before the stream starts are JSON responses: plan the query now, once (a
  // queued stream that gets its turn starts searching at once).
  const planned = await s.planner.plan(req, caller, ctx.signal);
  const repoFilter = await s.contexts.searchFilter(ctx.identity, { named: namedContext(ctx, planned), useDefault: true });
  // A full queue is refused now, as JSON; a queued stream starts at once and sends
  // keep-alive comments while it waits for its turn.
  const turn = s.gate.enter(caller, ctx.signal);
  turn.catch(() => {}); // the client left while queued: handled where awaited
  const reply = ctx.reply;
  // Messages go out one at a time: each waits until the socket took the previous one, so
  // a slow client holds at most one message in memory (respond.ts).
  let sending: Promise<void> = Promise.resolve();
  const send = (line: string | Uint8Array | Uint8Array[]): Promise<void> => (sending = sending.then(() => reply.write(line)));
  let lastWrite = Date.now();
  /** One SSE message: `data: <json>` and a blank line. */
  const event = (json: Uint8Array[]): Promise<void> => {
    lastWrite = Date.now();
    // A batch's files' buffers are joined in the reply's own buffer (Reply.write).
    return send([DATA, ...json, END]);
  };
  const message = (value: unknown): Promise<void> => event([Buffer.from(JSON.stringify(value))]);
  const keepAliveMs = s.config.settings.http.keepAliveMs;
  const timer = setInterval(
    () => {
      if (Date.now() - lastWrite >= keepAliveMs - 5) {
        lastWrite = Date.now();
        void send(': keep-alive\n\n');
      }
    },
    Math.max(50, Math.floor(keepAliveMs / 3)),
  );
  let release: (() => void) | undefined;
  try {
    reply.begin(200, [
      ['Content-Type', 'text/event-stream; charset=utf-8'],
      ['Cache-Control', 'no-cache, no-transform'],
      ['X-Accel-Buffering', 'no'],
    ]);
    // uWS sends the headers with the first body bytes: a comment now tells the client at
    // once that the stream is open, however long the first result takes.
    void send(': keep-alive\n\n');
    lastWrite = Date.now();
    // uWS holds what is written (corked) until the callback that delivered the request
    // returns, and the search's synchronous start (its shards, its tasks to the workers)
    // would run before that, so the stream's first byte would wait for all of it. The
    // callback returns first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      release = await turn;
      const res = await s.searcher.search(req, {
        planned,
        caller,
        timeoutMs: s.config.settings.search.timeoutMs,
        signal: ctx.signal,
        repoFilter,
        onChunk: async (chunk: SearchChunk) => {
          // The files go out as the workers shaped them (search/wire.ts), each with its
          // score: a batch is ranked only in itself, and a client orders the batches' files
          // as /api/search would by the score (search/rank-order.ts).
          await event(
            jsonPartsWithFiles(
              [
                ['type', 'chunk'],
                ['stats', chunk.stats],
                ['files', FILES],
                ['repositoryInfo', chunk.repositoryInfo],
              ],
              chunk.files,
              true,
            ),
          );
          return !reply.aborted;
        },
      });
      s.metrics?.search('stream', res.stats, res.isSearchExhaustive);
      await message({
        type: 'final',
        accumulatedStats: res.stats,
        isSearchExhaustive: res.isSearchExhaustive,
        ...(res.unavailableShards ? { unavailableShards: res.unavailableShards } : {}),
      });
    } catch (err) {
      if (reply.aborted) return undefined; // the client left (maybe while queued): nobody to tell
      const e =
        err instanceof ServiceError ? err : new ServiceError('UNEXPECTED_ERROR', `the search failed (request id ${ctx.id}); the details are in the server log`);
      if (!(err instanceof ServiceError)) ctx.log.error({ err: { message: (err as Error).message, stack: (err as Error).stack } }, 'stream search failed');
      await message({ type: 'error', error: e.toJSON() });
    }
    await send('data: [DONE]\n\n');
    reply.end();
  } finally {
    clearInterval(timer);
    release?.();
  }
  return undefined;
}
