// Gerrit's project list, read by the listing (gerrit.ts) as the connection's user and by
// the permission API (gerrit-permissions.ts) as each account.
//
//   GET /projects/?d&t&n=100&S=skip  the projects the caller may see, as a map
//        name -> {id, state, web_links, description}; more follow when the last entry
//        carries `_more_projects: true`, fetched with S (skip) advanced by the count.
// Every JSON answer starts with the line `)]}'` (against XSSI). Project states: ACTIVE,
// READ_ONLY, HIDDEN.

import type { JsonClient, Page } from './http.ts';
import { arr, isObject, obj, optStr } from './http.ts';

const PAGE_SIZE = 100;
// Gerrit's own configuration repositories: permissions and accounts, no code.
const SYSTEM_PROJECTS = new Set(['All-Projects', 'All-Users']);

export interface ProjectEntry {
  name: string;
  state: string;
  webLinks: Array<{ name: string; url: string }>;
}

/** Every project the client's caller may see, but Gerrit's configuration projects. */
export async function listProjects(client: JsonClient, signal: AbortSignal | undefined): Promise<ProjectEntry[]> {
  let skip = 0;
  const page = (data: unknown): Page<ProjectEntry> => {
    const map = obj(data, 'project map');
    const items: ProjectEntry[] = [];
    let more = false;
    for (const [name, v] of Object.entries(map)) {
      const info = obj(v, `project "${name}"`);
      // The flag sits on the last entry; JSON.parse moves integer-like names first, so
      // look at every entry rather than trust the order.
      if (info._more_projects === true) more = true;
      items.push(entryFrom(name, info));
    }
    skip += items.length;
    const next = more && items.length > 0 ? `/projects/?d&t&n=${PAGE_SIZE}&S=${skip}` : undefined;
    return next === undefined ? { items } : { items, next };
  };
  const all = await client.paginate(`/projects/?d&t&n=${PAGE_SIZE}&S=0`, page, { signal, xssiPrefix: true });
  return all.filter((p) => !SYSTEM_PROJECTS.has(p.name));
}

export function entryFrom(name: string, info: Record<string, unknown>): ProjectEntry {
  const links = info.web_links === undefined ? [] : arr(info.web_links, 'web_links');
  const webLinks: ProjectEntry['webLinks'] = [];
  for (const l of links) {
    if (isObject(l) && typeof l.url === 'string') webLinks.push({ name: String(l.name ?? ''), url: l.url });
  }
  return { name, state: optStr(info, 'state') ?? 'ACTIVE', webLinks };
}
