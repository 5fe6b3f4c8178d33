// Asking a code host as one of its accounts with that account's own token (from a member's
// sign-in with the host, or a token they linked) instead of the connection's: the one way
// every host's permission API does it. The token goes in place of the connection's
// credentials, never beside them: a host given both may answer for either. A refusal is
// then the account's to mend (sign in with the host again), not the operator's, so its
// message names the account; never the token, nor the connection's environment variable,
// which is not at fault.

import type { ClientConfig } from './http.ts';
import { JsonClient } from './http.ts';
import { HostError } from './types.ts';

/**
 * `ask`'s answer through a client on the connection's settings (base URL, headers, time
 * limits) that authenticates with `auth` alone: the credential headers of the own token of
 * account `login`, or of a token being linked (`login` undefined: its account is not known
 * yet). A rejected or under-privileged token is a HostError of the same kind
 * ('unauthorized', 'forbidden') that says whose token it was.
 */
export async function withOwnToken<T>(
  settings: ClientConfig,
  auth: Record<string, string>,
  login: string | undefined,
  ask: (client: JsonClient) => Promise<T>,
): Promise<T> {
  // Without the connection's token and its variable, the client's own messages cannot
  // send the operator to a variable that is not at fault.
  const { name, transport } = settings.context;
  const client = new JsonClient({ ...settings, context: { name, transport }, auth });
  try {
    return await ask(client);
  } catch (err) {
    if (!(err instanceof HostError)) throw err;
    const host = new URL(client.baseUrl).origin;
    const whose = login === undefined ? 'the token being linked' : `the own token of account "${login}"`;
    if (err.kind === 'unauthorized') throw client.error('unauthorized', `${host} rejected ${whose}: it is invalid, expired or revoked`);
    if (err.kind === 'forbidden') throw client.error('forbidden', `${host} refused ${whose}: it lacks the permission or scope to read this`);
    throw err;
  }
}
