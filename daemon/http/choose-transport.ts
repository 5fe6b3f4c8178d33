// Which transport serves HTTP (transport.ts): uWebSockets.js where its native build loads
// for this Node, else node:http. TRAWL_HTTP_TRANSPORT=node or =uws asks for one (a
// benchmark of the two side by side, or a check of uWS's build); asking for uws where it
// does not load is an error, never a quiet fallback.

import { nodeTransport } from './transport-node.ts';
import { loadUws, uwsTransport } from './transport-uws.ts';
import type { Transport } from './transport.ts';

export function chooseTransport(asked: string | undefined = process.env.TRAWL_HTTP_TRANSPORT): Transport {
  if (asked === 'node') return nodeTransport();
  if (asked === 'uws') return uwsTransport(loadUws());
  if (asked !== undefined && asked !== '' && asked !== 'auto') throw new Error(`TRAWL_HTTP_TRANSPORT is "${asked}": use node, uws or auto`);
  try {
    return uwsTransport(loadUws());
  } catch {
    return nodeTransport();
  }
}
