// Reads a Server-Sent Events body from fetch. EventSource cannot POST (/api/stream_search)
// nor send headers: a browser session's requests must carry X-CSRF-Token, a watch's
// stream (/api/watches/{id}/stream) included, so the page reads both streams itself.
// sseEvents yields each event with its name and id (`event:`, `id:`; comments such as
// `: keep-alive` are skipped); sseMessages reads the search stream, where every message is
// one `data: <json>` line and a blank line and `data: [DONE]` ends the stream
// (docs/http-api.md section 12).

export interface SseEvent {
  /** The `event:` field; "message" when there was none. */
  event: string;
  /** The last `id:` field seen so far (the stream's last event id), "" before any. */
  id: string;
  data: string;
}

export async function* sseEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id = '';
  const onAbort = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        let line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', id, data: data.join('\n') };
          data = [];
          event = '';
          continue;
        }
        const colon = line.indexOf(':');
        // A comment (": keep-alive"), or a field the page has no use for (retry:).
        if (colon === 0) continue;
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}

export async function* sseMessages(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<unknown> {
  for await (const e of sseEvents(body, signal)) {
    if (e.data === '[DONE]') return;
    yield JSON.parse(e.data);
  }
}
