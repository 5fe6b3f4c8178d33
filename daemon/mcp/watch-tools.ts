// The watch tools (docs/watches.md): a member's saved queries whose new and removed matches
// are recorded after each change of the index. create_watch, list_watches, get_watch_changes
// and delete_watch are the REST routes of /api/watches, called as the caller (so who may
// make, read and delete a watch is one rule: http/handlers/watches.ts), rendered by
// render-watches.ts. Being told of a change as it is recorded is the resource subscription
// of watch-resources.ts. create_watch and delete_watch are the only tools that change
// anything; on a session whose server has the watch resources, they tell the client that
// the list of resources changed.

import { z } from 'zod';
import { watchSchemas } from '../http/schemas/watches.ts';
import { renderNewWatch, renderWatchChanges, renderWatches, watchUri, type WatchAnswer, type WatchEventAnswer } from './render-watches.ts';
import { bound, prop } from './rest-bounds.ts';
import type { ToolKit } from './tool-kit.ts';

/** get_watch_changes' default `limit`, and its largest: the REST route's (GET /api/watches/{id}/events, 1 to 1000). */
export const WATCH_CHANGES_LIMIT = 50;
export const WATCH_CHANGES_MAX_LIMIT = 1000;

const NAME_MAX = bound(prop(watchSchemas, 'NewWatch', 'name'), 'maxLength');
const QUERY_MAX = bound(prop(watchSchemas, 'NewWatch', 'query'), 'maxLength');
const URL_MAX = bound(prop(watchSchemas, 'NewWatch', 'url'), 'maxLength');

const watchId = (what: string) =>
  z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe(`The id of the watch ${what}, as create_watch and list_watches show it.`);

export function registerWatchTools(t: ToolKit): void {
  createWatchTool(t);
  listWatchesTool(t);
  getWatchChangesTool(t);
  deleteWatchTool(t);
}

function createWatchTool(t: ToolKit): void {
  t.server.registerTool(
    'create_watch',
    {
      title: 'Watch a query',
      description: [
        "Save a search query as a watch: its matches now are its baseline, and after each change of the index the lines that newly match it and those that no longer do are recorded as a change (one per repository). Use it to follow code you care about: a deprecated call's last uses going away, a new use of an API appearing.",
        "The query is search_code's query language (not type:diff, type:commit or history:yes); a query matching too many lines now is refused (WATCH_TOO_BROAD): narrow it with repo:, file:, lang:.",
        'Read the changes with get_watch_changes, or subscribe to the resource trawl://watches/{id} (resources/subscribe) to be notified of each. With `url`, each change is also POSTed there, signed with the secret this result shows once.',
      ].join('\n'),
      inputSchema: {
        name: z.string().min(1).max(NAME_MAX).describe('What the watch is called where it is shown, e.g. "new uses of legacyAuth".'),
        query: z.string().min(1).max(QUERY_MAX).describe("The query, in search_code's query language."),
        isRegexEnabled: z.boolean().default(false).describe('Treat terms as RE2 regular expressions instead of literal substrings.'),
        isCaseSensitivityEnabled: z.boolean().default(false).describe('Match case exactly (a case: filter in the query overrides this).'),
        url: z
          .string()
          .min(1)
          .max(URL_MAX)
          .optional()
          .describe('An http(s) URL to POST each change to, signed. Default: none; changes are only recorded, listed and notified.'),
      },
      annotations: { title: 'Watch a query', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'POST /api/watches', {
        name: args.name,
        query: args.query,
        isRegexEnabled: args.isRegexEnabled,
        isCaseSensitivityEnabled: args.isCaseSensitivityEnabled,
        url: args.url,
      });
      t.watchesChanged();
      return renderNewWatch(a.body as WatchAnswer);
    }),
  );
}

function listWatchesTool(t: ToolKit): void {
  t.server.registerTool(
    'list_watches',
    {
      title: 'List your watches',
      description:
        'List your watches (saved queries whose changes are recorded; create_watch makes one), oldest first: id, name, query, options, ' +
        'where changes are POSTed and how that went, when each last changed, and its resource URI.',
      inputSchema: {},
      annotations: { title: 'List your watches', readOnlyHint: true, openWorldHint: false },
    },
    t.call(async (_args, caller) => {
      const a = await t.rest(caller, 'GET /api/watches', {});
      return renderWatches(a.body as WatchAnswer[]);
    }),
  );
}

function getWatchChangesTool(t: ToolKit): void {
  t.server.registerTool(
    'get_watch_changes',
    {
      title: "Read a watch's changes",
      description:
        "Read the changes of one of your watches, oldest first: each change is one repository's re-index, with the lines that now match the watch's query " +
        '(`+ path:line: text`) and those that no longer match (`- path:line: text`, as they were). ' +
        'Give `after` = the id of the last change you read to get only the later ones; the result ends with the `after` to use next. ' +
        'Changes are kept for a limited time (settings.watches.eventRetentionDays); those in repositories you can no longer see are left out.',
      inputSchema: {
        id: watchId('to read'),
        after: z
          .number()
          .int()
          .min(0)
          .max(Number.MAX_SAFE_INTEGER)
          .default(0)
          .describe('Only changes with a greater id: the last change you read (0: from the first kept).'),
        limit: z.number().int().min(1).max(WATCH_CHANGES_MAX_LIMIT).default(WATCH_CHANGES_LIMIT).describe('The most changes to return.'),
      },
      annotations: { title: "Read a watch's changes", readOnlyHint: true, openWorldHint: false },
    },
    t.call(async (args, caller) => {
      const a = await t.rest(caller, 'GET /api/watches/{id}/events', { after: args.after, limit: args.limit }, { id: String(args.id) });
      return renderWatchChanges(a.body as WatchEventAnswer[], args);
    }),
  );
}

function deleteWatchTool(t: ToolKit): void {
  t.server.registerTool(
    'delete_watch',
    {
      title: 'Delete a watch',
      description: 'Delete one of your watches, with its recorded changes: nothing more is recorded, POSTed or notified for it.',
      inputSchema: { id: watchId('to delete') },
      annotations: { title: 'Delete a watch', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    t.call(async (args, caller) => {
      await t.rest(caller, 'DELETE /api/watches/{id}', {}, { id: String(args.id) });
      t.watchesChanged();
      return { text: `Watch ${args.id} deleted, with its changes (its resource ${watchUri(args.id)} is gone).`, structured: { id: args.id, deleted: true } };
    }),
  );
}
