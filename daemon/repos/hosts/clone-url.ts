// Where a connection may fetch from. A code host's answers are not trusted, and its clone
// URLs decide what the sync reads: a local path or file:// URL would have the sync index a
// repository of this server's own disk in place and serve it as the host's (sync.ts reads
// local repositories where they are), and an http(s) URL of another host would be sent the
// connection's token (mirror.ts authenticates to whatever the URL names). So a clone URL a
// host lists must be an http(s) URL of the connection's own origin (the scheme, host and
// port of its `url`) or of one its `cloneOrigins` lists.
//
// What each host type legitimately hands out, and trawl reads: GitHub `clone_url`, GitLab
// `http_url_to_repo`, Gitea `clone_url`, Bitbucket Cloud the `https` clone link and Server
// the `http` one, Azure DevOps `remoteUrl` (the user name Bitbucket and Azure put in it is
// dropped first): http(s) URLs of the host itself. Gerrit's are built from `url`. The ssh
// forms (`ssh://`, `git@host:path`) and git:// are never read: trawl fetches over http(s)
// only. Only a `git` connection, which the operator writes, names local paths.

import type { Connection, HostConnection } from '../../config/types.ts';
import { redact } from './http.ts';
import { httpOrigin } from '../web-urls.ts';

// A refused URL is quoted in the log and the repository's lastError: a host must not be
// able to fill either with an answer of any size.
const MAX_SHOWN = 200;

/** Why the clone URL `cloneUrl`, listed by `connection`, must not be fetched; undefined when it may. */
export function cloneUrlRefusal(connection: Connection, cloneUrl: string): string | undefined {
  if (connection.type === 'git') return undefined;
  const allowed = cloneOrigins(connection);
  const where = allowed.length === 1 ? allowed[0]! : `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)!}`;
  const origin = httpOrigin(cloneUrl);
  if (origin === undefined) return `clone URL ${shown(cloneUrl)} refused: not an http(s) URL (a ${connection.type} connection fetches from ${where} only)`;
  if (!allowed.includes(origin)) {
    return `clone URL ${shown(cloneUrl)} refused: not on ${where} (list ${origin} in the connection's cloneOrigins if the host does serve its repositories there)`;
  }
  return undefined;
}

/** The origins a host connection fetches from: its url's, then those of its cloneOrigins. */
function cloneOrigins(connection: HostConnection): string[] {
  return [new URL(connection.url).origin, ...(connection.cloneOrigins ?? [])];
}

/** The origins `connection` reaches over plain http, where anyone on the path can answer for the host. */
export function plainHttpOrigins(connection: Connection): string[] {
  return connection.type === 'git' ? [] : cloneOrigins(connection).filter((o) => o.startsWith('http:'));
}

function shown(url: string): string {
  const text = redact(url);
  return JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}...` : text);
}
