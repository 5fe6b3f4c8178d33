// Gerrit's permission API over the data set, in Gerrit's shapes (`)]}'` before every JSON
// answer): the projects the caller may see, GET /a/projects/?d&t&n=..&S=.. paged with
// `_more_projects`; accounts by username or id, GET /a/accounts/{id}; the caller's own
// account, GET /a/accounts/self.
//
// An account sees Gerrit's configuration projects, the public projects and the private
// ones it reads (FakeRepo.readers). A HIDDEN project is listed only to its owners, here
// its readers, with state HIDDEN.
// Credentials: HTTP basic auth under /a/. USER with TOKEN is the connection's user
// (id 1000000), who holds the Run As capability and may send `X-Gerrit-RunAs: <id or
// username>`; an account signs in with its login and its FakeAccount.token as its HTTP
// password. The connection's own project list, and every request with other credentials,
// are left to the listing fake.

import type { Env, FakeAccount, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';
import { TOKEN, USER, missingParam } from '../fake-http.ts';

const XSSI = ")]}'\n";
const BOT = { id: 1_000_000, login: USER, email: `${USER}@example.com` };

export function gerritPermissions(env: Env): PermissionApi {
  const json = (body: unknown): Reply => ({ status: 200, headers: { 'content-type': 'application/json' }, raw: XSSI + JSON.stringify(body) });
  const text = (status: number, message: string): Reply => ({ status, headers: { 'content-type': 'text/plain' }, raw: message });
  const byId = (id: string): FakeAccount | undefined => env.accounts.find((a) => String(a.id) === id || a.login === id);
  const accountJson = (a: { id: number; login: string; email: string }): unknown => ({ _account_id: a.id, name: a.login, email: a.email, username: a.login });

  const visibleTo = (a: FakeAccount): string[] =>
    [
      'All-Projects',
      'All-Users',
      ...env.repos.filter((r) => (r.readers?.includes(a.login) ?? false) || (!r.hidden && !r.private)).map((r) => `${r.owner}/${r.name}`),
    ].sort();
  const projects = (a: FakeAccount, query: URLSearchParams): Reply => {
    const bad = missingParam(query, { d: null, t: null, n: null });
    if (bad) return bad;
    const names = visibleTo(a);
    const n = Math.min(Number(query.get('n')), env.pageSize);
    const skip = Number(query.get('S') ?? '0');
    const page = names.slice(skip, skip + n);
    const map: Record<string, Record<string, unknown>> = {};
    for (const name of page) {
      const r = env.repos.find((x) => `${x.owner}/${x.name}` === name);
      map[name] = {
        id: encodeURIComponent(name),
        state: r?.hidden ? 'HIDDEN' : r?.archived ? 'READ_ONLY' : 'ACTIVE',
        description: `the ${name} project`,
        web_links: [{ name: 'browse', url: `/plugins/gitiles/${name}`, target: '_blank' }],
      };
    }
    if (skip + n < names.length && page.length > 0) map[page[page.length - 1]!]!._more_projects = true;
    return json(map);
  };

  return {
    route(req: FakeRequest): Reply | undefined {
      if (req.method !== 'GET' || req.segments[0] !== 'a') return undefined;
      const creds = basicCredentials(req.headers.authorization);
      if (creds === undefined) return undefined;
      const connection = creds.login === USER && creds.password === TOKEN;
      const own = env.accounts.find((a) => a.login === creds.login && a.token === creds.password);
      if (!connection && own === undefined) return undefined;
      let as = own;
      const runAs = req.headers['x-gerrit-runas'];
      if (typeof runAs === 'string') {
        if (!connection) return text(403, 'not permitted to use X-Gerrit-RunAs');
        as = byId(runAs);
        if (as === undefined) return text(403, 'no account matches X-Gerrit-RunAs');
      }
      const s = req.segments.slice(1);
      if (s.length === 2 && s[0] === 'projects' && s[1] === '') return as === undefined ? undefined : projects(as, req.query);
      if (s.length === 2 && s[0] === 'accounts') {
        if (s[1] === 'self') return json(accountJson(as ?? BOT));
        const found = s[1] === USER || s[1] === String(BOT.id) ? BOT : byId(s[1]!);
        return found === undefined ? text(404, `Not found: ${s[1]}`) : json(accountJson(found));
      }
      return undefined;
    },
  };
}

function basicCredentials(authorization: string | undefined): { login: string; password: string } | undefined {
  const m = /^Basic (.+)$/.exec(authorization ?? '');
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString();
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { login: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
