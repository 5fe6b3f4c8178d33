// Counts the messages of a Server-Sent Events body as it arrives (stream.ts), without
// decoding the large `chunk` messages: only the small ones (`final`, `error`, `[DONE]`)
// are parsed. trawl's stream (docs/http-api.md, POST /api/stream_search): `data: <json>` lines, each
// followed by a blank line, `: keep-alive` comments, and `data: [DONE]` last.

const NL = 0x0a;
const CHUNK_PREFIX = Buffer.from('data: {"type":"chunk"');

export interface SseCounts {
  /** data: messages, [DONE] included. */
  messages: number;
  chunks: number;
  keepAlives: number;
  /** A `final` message arrived. */
  final: boolean;
  /** The message of an `error` message, or of a message that is not JSON. */
  error: string | null;
  /** The last data: message was `[DONE]`. */
  endsWithDone: boolean;
  /** actualMatchCount of the final message. */
  matches: number | null;
  isSearchExhaustive: boolean | null;
}

export class SseCounter {
  private readonly counts: SseCounts = {
    messages: 0,
    chunks: 0,
    keepAlives: 0,
    final: false,
    error: null,
    endsWithDone: false,
    matches: null,
    isSearchExhaustive: null,
  };
  private pending: Buffer[] = [];
  /** The last read ended with "\n" that may start the blank line of an event. */
  private endedWithNewline = false;

  /** One read of the body (the buffer is kept until its event is complete: do not reuse it). */
  push(b: Buffer): void {
    if (b.length === 0) return;
    let pos = 0;
    // An event ends at a blank line, "\n\n", which two reads may share.
    if (this.endedWithNewline && b[0] === NL) {
      this.event(this.pending);
      this.pending = [];
      pos = 1;
    }
    for (;;) {
      const i = b.indexOf('\n\n', pos);
      if (i < 0) {
        if (pos < b.length) this.pending.push(b.subarray(pos));
        break;
      }
      this.pending.push(b.subarray(pos, i + 1));
      this.event(this.pending);
      this.pending = [];
      pos = i + 2;
    }
    this.endedWithNewline = pos < b.length && b[b.length - 1] === NL;
  }

  /** `chunk` messages complete so far. */
  get chunks(): number {
    return this.counts.chunks;
  }

  /** The counts, once the body ended (a last event without its blank line counts too). */
  end(): SseCounts {
    if (this.pending.length > 0 && Buffer.concat(this.pending).toString('utf8').trim() !== '') this.event(this.pending);
    this.pending = [];
    return { ...this.counts };
  }

  private event(parts: Buffer[]): void {
    const c = this.counts;
    // Its first bytes only: a `chunk` message is most of a stream, and joining its parts to
    // read a prefix copied every byte of the stream in the client, whose CPU the bench
    // shares with the daemon (a common literal's stream is megabytes).
    const head = Buffer.allocUnsafe(CHUNK_PREFIX.length);
    let headBytes = 0;
    for (const p of parts) {
      if (headBytes >= CHUNK_PREFIX.length) break;
      headBytes += p.copy(head, headBytes, 0, Math.min(p.length, CHUNK_PREFIX.length - headBytes));
    }
    head.fill(0, headBytes);
    if (head[0] === 0x3a /* ":" */) {
      c.keepAlives++;
      return;
    }
    c.messages++;
    c.endsWithDone = false;
    if (head.equals(CHUNK_PREFIX)) {
      c.chunks++;
      return;
    }
    const text = Buffer.concat(parts).toString('utf8').trim();
    const data = text.startsWith('data:') ? text.slice(5).trimStart() : text;
    if (data === '[DONE]') {
      c.endsWithDone = true;
      return;
    }
    try {
      const m = JSON.parse(data) as {
        type?: string;
        accumulatedStats?: { actualMatchCount?: number };
        isSearchExhaustive?: boolean;
        error?: { message?: string };
      };
      if (m.type === 'chunk') {
        c.chunks++;
      } else if (m.type === 'final') {
        c.final = true;
        c.matches = m.accumulatedStats?.actualMatchCount ?? null;
        c.isSearchExhaustive = m.isSearchExhaustive ?? null;
      } else if (m.type === 'error') {
        c.error = m.error?.message ?? JSON.stringify(m.error);
      }
    } catch {
      c.error = `a message that is not JSON: ${data.slice(0, 100)}`;
    }
  }
}
