// Requests a permission API sends with an account's own token instead of the connection's:
// the context such a client runs in, and failures that say whose token the host refused.
// The client's own messages would send the operator to the connection's variable, which
// is not the token that failed.

import type { HostContext, JsonClient } from './http.ts';
import { HostError } from './types.ts';

/** The connection's context (name, transport) with `token` in place of its own. */
export function accountContext(context: HostContext, token: string): HostContext {
  return { name: context.name, token, transport: context.transport };
}

/**
 * `run`, whose requests `client` sends with a token that is not the connection's: a
 * refusal says it was `whose` ("account "alice"'s own token"). Messages never hold a token.
 */
export async function asAccount<T>(client: JsonClient, whose: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof HostError)) throw err;
    if (err.kind === 'unauthorized') throw client.error('unauthorized', `${whose} was refused by ${client.baseUrl}`);
    if (err.kind === 'forbidden') throw client.error('forbidden', `${whose} was denied by ${client.baseUrl}: it lacks a permission or scope the request needs`);
    throw err;
  }
}
