// Between uWebSockets.js and the MCP SDK's web-standard transport: the route's request
// becomes a fetch-API Request, the transport's Response goes out through the route's Reply.
// A JSON answer is sent whole; an event stream (a GET stream, or a POST answered as SSE) is
// copied piece by piece as the transport produces it, and cancelled when the client leaves
// or the daemon's shutdown deadline passes, so the SDK sees the stream end.

import type { RouteContext } from '../http/route.ts';

/** Response headers uWS writes itself, or that do not apply to how we write. */
const SKIP = new Set(['content-length', 'transfer-encoding', 'connection', 'date']);

export function toWebRequest(ctx: RouteContext, method: string, url: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(ctx.headers)) headers.set(k, v);
  const init: RequestInit = { method, headers, signal: ctx.signal };
  if (method === 'POST') init.body = ctx.rawBody ?? new Uint8Array(0);
  return new Request(url, init);
}

export async function sendWebResponse(ctx: RouteContext, response: Response): Promise<void> {
  const headers: Array<[string, string]> = [];
  response.headers.forEach((v, k) => {
    if (!SKIP.has(k)) headers.push([k, v]);
  });
  const reply = ctx.reply;
  if (reply.headOnly) {
    // HEAD of the GET stream: the headers, not a stream that would never end.
    await response.body?.cancel();
    reply.send(response.status, '', headers);
    return;
  }
  const type = response.headers.get('content-type') ?? '';
  if (!response.body || !type.startsWith('text/event-stream')) {
    reply.send(response.status, new Uint8Array(await response.arrayBuffer()), headers);
    return;
  }
  reply.begin(response.status, headers);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const stop = () => void reader.cancel().catch(() => {});
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || reply.aborted) break;
      const text = decoder.decode(value, { stream: true });
      if (text) await reply.write(text);
    }
  } catch {
    // Cancelled (client gone, shutdown): nothing left to tell anyone.
  } finally {
    ctx.signal.removeEventListener('abort', stop);
    stop();
    reply.end();
  }
}
