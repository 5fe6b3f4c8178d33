// One page of a paged REST list (GET /api/repos, GET /api/commits) for a language model:
// a header with the position in the whole list, the items, and the page to ask for next.
// structuredContent is `{ [key]: items, total, page, perPage }`: the REST answer's items
// (cut to those the text shows and to STRUCTURED_BUDGET), X-Total-Count as `total`, and
// the page and perPage the request used.

import { structuredPrefix, TextBudget } from './budget.ts';
import type { Rendered } from './render-search.ts';

export interface PageArgs {
  page: number;
  perPage: number;
}

export function renderPage<T>(
  list: { tool: string; key: string; noun: string; items: T[]; total: number; title?: string },
  args: PageArgs,
  lines: (item: T) => string[],
): Rendered {
  const { items, total, noun } = list;
  const { page, perPage } = args;
  const pages = Math.max(1, Math.ceil(total / perPage));
  const out = new TextBudget();
  const first = (page - 1) * perPage + 1;
  const scope = list.title ? ` ${list.title}` : '';
  if (total === 0) out.add(`No ${noun}${scope}.`);
  else if (items.length === 0) out.add(`page=${page} is past the end: ${total} ${noun}${scope} make ${pages} pages of ${perPage}.`);
  else out.add(`${noun[0]!.toUpperCase()}${noun.slice(1)}${scope}: ${first}–${first + items.length - 1} of ${total} (page ${page} of ${pages}):`);
  const { shown } = out.addBlocks(items.length, (i) => lines(items[i]!));
  const hints: string[] = [];
  if (shown < items.length)
    hints.push(`${items.length - shown} more ${noun} of this page were not shown (output limit): call ${list.tool} with a smaller perPage (now ${perPage})`);
  if (page < pages) hints.push(`page ${page} of ${pages}: call ${list.tool} with page=${page + 1}`);
  const k = structuredPrefix({ [list.key]: [], total, page, perPage }, items, shown);
  return { text: out.text(hints), structured: { [list.key]: items.slice(0, k), total, page, perPage } };
}
