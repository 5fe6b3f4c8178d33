// Reads a Server-Sent Events body from fetch (EventSource cannot POST): every message of
// /api/stream_search is one `data: <json>` line and a blank line; `: keep-alive` comments
// are skipped; `data: [DONE]` ends the stream (docs/http-api.md section 12).

export async function* sseMessages(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
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
          if (data.length === 0) continue;
          const text = data.join('\n');
          data = [];
          if (text === '[DONE]') return;
          yield JSON.parse(text);
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line[5] === ' ' ? 6 : 5));
        }
        // Comments (": keep-alive") and other fields carry nothing for us.
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}
