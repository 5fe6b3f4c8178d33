// Writing responses through the transport's wire (transport.ts). A response may only be
// touched until the client goes away (onAborted), writes from outside the request's own
// tick are corked into one send, and a slow client holds back its writer; Reply owns these
// rules so handlers never see the wire.

import type { ServiceError } from '../errors.ts';
import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';
import { parseJson } from '../search/wire.ts';
import type { Wire } from './transport.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The reason phrase of a status ("Unknown" for one not listed). */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? 'Unknown';
}

export const JSON_TYPE = 'application/json; charset=utf-8';

const JSON_HEADERS: Array<[string, string]> = [['Content-Type', JSON_TYPE]];

/** Streamed bodies are written in pieces of this size (see Reply.write). */
const WRITE_PIECE = 64 * 1024;

/**
 * A JSON body already serialised: a search's answer, whose files come from the workers as
 * bytes (search/wire.ts), or a kept listing (answer-cache.ts). A caller in process (the
 * tool server) reads it with value(): the value it was made from when there is one (shared
 * with every other reader: never to be changed), else the bytes parsed.
 */
export class RawJson {
  constructor(
    readonly bytes: Uint8Array,
    private readonly made?: unknown,
  ) {}

  value(): unknown {
    return this.made !== undefined ? this.made : parseJson(this.bytes);
  }
}

export class Reply {
  /** Set when the client went away; nothing may be written after. */
  aborted = false;
  /** A HEAD request: status and headers only. */
  headOnly = false;
  /** Set once the status line is out. */
  started = false;
  finished = false;
  status = 0;
  bytes = 0;
  /** The connection closes after this response (the server is shutting down). */
  closeAfter = false;
  /** Headers every response of this request carries (request id, rate-limit counters). */
  readonly headers: Array<[string, string]> = [];
  private drained: (() => void) | undefined;
  /** Where writeParts joins a message (grown to the largest so far). */
  private joined: Buffer = Buffer.alloc(0);

  constructor(readonly res: Wire) {}

  /**
   * A whole JSON response. A serialised body over WRITE_PIECE bytes is written as the
   * socket takes it (sendLarge); the promise resolves once it is out.
   */
  json(status: number, body: unknown, headers: Array<[string, string]> = [], closeConnection = false): Promise<void> {
    const all = headers.length === 0 ? JSON_HEADERS : [['Content-Type', JSON_TYPE] as [string, string], ...headers];
    if (body instanceof RawJson && body.bytes.byteLength > WRITE_PIECE && !this.headOnly && !closeConnection && !this.closeAfter)
      return this.sendLarge(status, body.bytes, all);
    this.send(status, body instanceof RawJson ? body.bytes : JSON.stringify(body), all, closeConnection);
    return Promise.resolve();
  }

  /** The error object with the status it names. */
  error(err: ServiceError, headers: Array<[string, string]> = [], closeConnection = false): void {
    void this.json(err.statusCode, err.toJSON(), headers, closeConnection);
  }

  send(status: number, body: string | Uint8Array, headers: Array<[string, string]>, closeConnection = false): void {
    if (this.aborted || this.finished) return;
    this.res.cork(() => {
      this.writeHead(status, headers);
      // HEAD: no body, and Content-Length: 0 (uWS 20.30's endWithoutBody, which would report
      // the GET's length, neither flushes nor serves a pipelined next request).
      this.res.end(this.headOnly ? '' : body, closeConnection || this.closeAfter);
    });
    this.bytes += typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    this.finished = true;
  }

  /**
   * A whole body of known length, written as the socket takes it (the wire's offer): what
   * the socket refuses is offered again when it is writable, not copied into a buffer of
   * the transport's. So a slow client holds its own answer rather than a copy of it (many
   * requests for one kept listing would each get one), and each offer takes a time slice
   * (runtime/time-slices.ts): many answers starting at once are not copied into their
   * sockets in one turn of the event loop. (An offered body cannot close the connection
   * after it: json() sends a response that must close with send().)
   */
  async sendLarge(status: number, body: Uint8Array, headers: Array<[string, string]>): Promise<void> {
    if (this.aborted || this.finished) return;
    if (sliceUsed()) await nextSlice();
    if (this.aborted || this.finished) return;
    const before = this.bytes;
    let offered = { at: 0, done: false };
    this.res.cork(() => {
      this.writeHead(status, headers);
      offered = this.res.offer(body, 0);
    });
    while (!offered.done) {
      this.bytes = before + offered.at;
      await this.writable();
      if (sliceUsed()) await nextSlice();
      if (this.aborted || this.finished) return;
      this.res.cork(() => {
        offered = this.res.offer(body, offered.at);
      });
    }
    this.bytes = before + body.byteLength;
    this.finished = true;
  }

  /** Starts a streamed response (status and headers now, the body in write() calls). */
  begin(status: number, headers: Array<[string, string]>): void {
    if (this.aborted || this.started) return;
    this.res.cork(() => this.writeHead(status, headers));
  }

  /**
   * Writes part of a streamed body, in pieces of at most WRITE_PIECE bytes, and resolves
   * once the socket took them. The transport keeps whatever the socket refuses and
   * reports writability before it flushes that, so waiting for onWritable after each
   * refused piece keeps at most about one piece in its buffer: a slow client holds the writer
   * (and the search behind it) instead of making the daemon buffer without bound.
   */
  async write(data: string | Uint8Array | readonly Uint8Array[]): Promise<void> {
    if (typeof data !== 'string' && !(data instanceof Uint8Array)) return this.writeParts(data);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let at = 0; at < bytes.length; at += WRITE_PIECE) {
      if (this.aborted || this.finished) return;
      const piece = bytes.subarray(at, at + WRITE_PIECE);
      let ok = true;
      this.res.cork(() => {
        ok = this.res.write(piece);
      });
      this.bytes += piece.length;
      if (!ok) await this.writable();
    }
  }

  /**
   * Writes a message given in parts (a stream's batch: its files' bytes as the workers
   * sent them) as one piece, joined in a buffer this reply keeps for its next message:
   * the wire copies what the socket does not take at once, so the buffer is free again
   * when write returns. A new Buffer.concat per batch cost the main thread ~10 % more CPU
   * per stream (GFP_KERNEL on Linux 6.1: ~34 vs ~31 ms); a write per part made a chunk of
   * the HTTP body each and halved the stream's throughput. What the socket refuses the
   * wire keeps (this message at most: one batch) until it is writable again, as in write().
   */
  private async writeParts(parts: readonly Uint8Array[]): Promise<void> {
    if (this.aborted || this.finished) return;
    let n = 0;
    for (const part of parts) n += part.length;
    if (this.joined.length < n) this.joined = Buffer.allocUnsafeSlow(Math.max(n, 2 * this.joined.length, 64 * 1024));
    let at = 0;
    for (const part of parts) {
      this.joined.set(part, at);
      at += part.length;
    }
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(this.joined.subarray(0, n));
    });
    this.bytes += n;
    if (!ok) await this.writable();
  }

  private writable(): Promise<void> {
    return new Promise((resolve) => {
      this.drained = resolve;
      this.res.onWritable(() => this.wake());
    });
  }

  /** Ends a streamed body. */
  end(): void {
    if (this.aborted || this.finished) return;
    this.res.cork(() => this.res.end('', this.closeAfter));
    this.finished = true;
  }

  /** Resolves once the response has left for the socket (the wire's sent()), or the client is gone. */
  sent(): Promise<void> {
    return this.res.sent();
  }

  /** The client went away: wakes a writer waiting for a drain that will never come. */
  abort(): void {
    this.aborted = true;
    this.wake();
  }

  /** Cuts the connection (shutdown deadline). */
  close(): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.res.close();
  }

  private wake(): void {
    const d = this.drained;
    this.drained = undefined;
    d?.();
  }

  private writeHead(status: number, headers: Array<[string, string]>): void {
    this.status = status;
    this.started = true;
    this.res.head(status, statusText(status), this.headers.length === 0 ? headers : [...this.headers, ...headers]);
  }
}
