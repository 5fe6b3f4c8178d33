// Whose turn a request takes where callers share the search machinery (the search gate,
// the query planner, the search workers): a signed-in user, all their keys, tokens and
// sessions together, or an anonymous client by its address (an IPv6 client by its /64, as
// one machine usually holds a whole one: client-address.ts addressKey).

import type { Identity } from '../auth/identity.ts';
import { addressKey } from './client-address.ts';

export function callerKey(identity: Identity, clientAddress: string): string {
  return identity.userId !== undefined ? `user:${identity.userId}` : `anonymous@${addressKey(clientAddress)}`;
}
