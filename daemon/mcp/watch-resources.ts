// A member's watches as MCP resources, so that an agent is told when one changes: each of
// the session user's watches is the resource trawl://watches/{id} (resources/list lists
// them; resources/read reads the watch and its most recent changes, as text for a model
// and as JSON), and resources/subscribe to one makes the session listen to the watch's
// feed (watches/watch-feed.ts): each change recorded is a notifications/resources/updated
// with the uri, sent when the watch's owner may still see the change's repository (the rule
// of the REST events: http/handlers/watches.ts visibleEvents). The notification names the
// resource only; the client reads it, or calls get_watch_changes, for what changed.
//
// Reading and subscribing go through the REST routes as the caller (GET /api/watches,
// GET /api/watches/{id}, GET /api/watches/{id}/events), so a member reads and subscribes to
// their own watches only, with the routes' errors: another member's watch is
// WATCH_NOT_FOUND, the resource-not-found error (-32002). resources/unsubscribe, and the
// session's end, stop listening.
//
// Notifications not tied to a request go out on the session's standalone event stream,
// the GET of /api/mcp (the SDK's Streamable HTTP transport: without it open they are
// dropped); MCP clients open it after initialize.

import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../errors.ts';
import type { WatchEventRecord } from '../store/store.ts';
import { eventRepoId } from '../watches/watch-event.ts';
import type { WatchServices } from '../watches/watch-runtime.ts';
import type { Invoke, RouteAnswer, RouteKey, ToolCaller } from './invoke.ts';
import { renderWatchResource, watchUri, type WatchAnswer, type WatchEventAnswer } from './render-watches.ts';
import type { PrepareCall } from './tools.ts';

/** The JSON-RPC error of a resource that does not exist (or is not the caller's), as MCP specifies it. */
export const RESOURCE_NOT_FOUND = -32002;
/** Changes a resource shows: the most recent. */
export const RESOURCE_CHANGES = 20;
/** Events read per request while finding the most recent, and the most requests (then the most recent of those read). */
const PAGE = 1000;
const MAX_PAGES = 100;

const URI = /^trawl:\/\/watches\/([1-9][0-9]{0,15})$/;

export function registerWatchResources(server: McpServer, invoke: Invoke, prepare: PrepareCall, watches: WatchServices): void {
  const rest = async (caller: ToolCaller, route: RouteKey, input: Record<string, unknown>, id?: string): Promise<RouteAnswer> => {
    try {
      return await invoke(route, input, caller, id === undefined ? {} : { id });
    } catch (err) {
      throw asMcpError(err);
    }
  };
  server.registerResource(
    'watch',
    new ResourceTemplate('trawl://watches/{id}', {
      list: async (extra) => {
        const caller = await prepare(extra);
        let listed: WatchAnswer[];
        try {
          listed = (await invoke('GET /api/watches', {}, caller)).body as WatchAnswer[];
        } catch (err) {
          // Anonymous callers have no watches; a node of a cluster still joining it has none yet.
          if (err instanceof ServiceError && (err.errorCode === 'NOT_AUTHENTICATED' || err.errorCode === 'SERVICE_UNAVAILABLE')) return { resources: [] };
          throw asMcpError(err);
        }
        return {
          resources: listed.map((w) => ({
            uri: watchUri(w.id),
            name: `watch ${w.id}`,
            title: w.name,
            description: `Your watch of the query ${JSON.stringify(w.query)}: its most recent changes. Subscribe to be told of each.`,
            mimeType: 'text/plain',
          })),
        };
      },
    }),
    {
      title: 'A watch and its most recent changes',
      description:
        "One of your watches (create_watch): the watch, then its most recent changes, each a repository's re-index with the lines that came to match its query and those that no longer do. " +
        'resources/subscribe to it: notifications/resources/updated is sent with its uri each time a change is recorded.',
      mimeType: 'text/plain',
    },
    async (uri, variables, extra): Promise<ReadResourceResult> => {
      const id = String(variables.id);
      const caller = await prepare(extra);
      const { recent, earlier } = await recentChanges((input) => rest(caller, 'GET /api/watches/{id}/events', input, id));
      const watch = (await rest(caller, 'GET /api/watches/{id}', {}, id)).body as WatchAnswer;
      return {
        contents: [
          { uri: uri.href, mimeType: 'text/plain', text: renderWatchResource(watch, recent, earlier) },
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ watch, events: recent }) },
        ],
      };
    },
  );

  // The session's subscriptions: uri → stop listening.
  const subscriptions = new Map<string, () => void>();
  const notify = async (uri: string, userId: string, event: WatchEventRecord): Promise<void> => {
    const canSee = await watches.owner(userId);
    if (!canSee) return;
    const repoId = eventRepoId(event);
    const visibility = await watches.visibility(repoId);
    if (visibility !== undefined && !canSee({ repoId, visibility })) return;
    await server.server.sendResourceUpdated({ uri });
  };
  server.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const id = URI.exec(uri)?.[1];
    if (id === undefined) throw new McpError(RESOURCE_NOT_FOUND, `no resource ${uri}: a watch's is trawl://watches/{id} (resources/list lists yours)`);
    const caller = await prepare(extra);
    // The events route is the rule: a member's own watch (WATCH_NOT_FOUND otherwise).
    await rest(caller, 'GET /api/watches/{id}/events', { limit: 1 }, id);
    const userId = caller.identity.userId!;
    subscriptions.get(uri)?.();
    subscriptions.set(
      uri,
      watches.feed.subscribe(Number(id), (event) => {
        notify(uri, userId, event).catch((err: Error) => caller.log.warn({ uri, err: err.message }, 'notifying an mcp session of a watch change failed'));
      }),
    );
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.get(request.params.uri)?.();
    subscriptions.delete(request.params.uri);
    return {};
  });
  const closed = server.server.onclose;
  server.server.onclose = () => {
    for (const stop of subscriptions.values()) stop();
    subscriptions.clear();
    closed?.();
  };
}

/**
 * The most recent RESOURCE_CHANGES events of a watch (oldest first), read forward in pages
 * (the route lists oldest first); `earlier`: older ones were passed over. A page cut short
 * by events the owner may no longer see is not the last: reading ends at an empty page.
 */
async function recentChanges(
  page: (input: { after: number; limit: number }) => Promise<RouteAnswer>,
): Promise<{ recent: WatchEventAnswer[]; earlier: boolean }> {
  let recent: WatchEventAnswer[] = [];
  let earlier = false;
  let after = 0;
  for (let n = 0; n < MAX_PAGES; n++) {
    const events = (await page({ after, limit: PAGE })).body as WatchEventAnswer[];
    if (events.length === 0) break;
    const all = [...recent, ...events];
    if (all.length > RESOURCE_CHANGES) earlier = true;
    recent = all.slice(-RESOURCE_CHANGES);
    after = events.at(-1)!.id;
  }
  return { recent, earlier };
}

/** A route's error as the JSON-RPC error of a resource request: `errorCode: message`, the code in data. */
function asMcpError(err: unknown): unknown {
  if (!(err instanceof ServiceError)) return err;
  const code = err.errorCode === 'WATCH_NOT_FOUND' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidRequest;
  return new McpError(code, `${err.errorCode}: ${err.message}`, { errorCode: err.errorCode });
}
