// One HTTP/1.1 request over a plain socket, for fault tests that need what fetch hides or
// cannot do: closing the connection abruptly at a chosen moment (a reset), reading the
// Connection header, and seeing exactly how a response ended (complete, or cut).

import { connect, type Socket } from 'node:net';

export interface RawExchange {
  socket: Socket;
  /** Resolves when the first bytes of the response arrive. */
  firstBytes: Promise<void>;
  /** Resolves once the connection is closed (by either side), with what was received. */
  closed: Promise<RawResponse>;
  /** Resolves once a whole response is in (or the connection closed), whether or not the connection stays open. */
  response(): Promise<RawResponse>;
  /** Bytes received so far. */
  received(): number;
  /** What was received so far, as text (latin1: byte for byte). */
  text(): string;
  /** Sends the rest of a body held back (`hold`). */
  finish(): void;
}

export interface RawResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The body, de-chunked, as UTF-8. */
  body: string;
  /** The response ended as HTTP says (last chunk, or Content-Length bytes): not cut. */
  complete: boolean;
  /** A socket error, if the connection ended with one (e.g. ECONNRESET). */
  error?: string;
}

export interface RawOptions {
  /** The body's last byte is sent only by finish(), so the request stays in flight until then. */
  hold?: boolean;
  /**
   * No `Connection: close` from the client: `closed` then resolves only when the server
   * closes the connection itself (and only then does it say so in a Connection header).
   */
  keepAlive?: boolean;
}

export function rawRequest(url: string, method: string, path: string, body?: string, options: RawOptions = {}): RawExchange {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  // One request per connection: `closed` is the end of this response.
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`];
  if (!options.keepAlive) head.push('Connection: close');
  if (body !== undefined) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  const data = Buffer.from(`${head.join('\r\n')}\r\n\r\n${body ?? ''}`);
  let held = options.hold && body ? 1 : 0;
  socket.write(data.subarray(0, data.length - held));
  const parts: Buffer[] = [];
  let bytes = 0;
  let error: string | undefined;
  let first!: () => void;
  const firstBytes = new Promise<void>((r) => (first = r));
  let waiter: (() => void) | undefined;
  socket.on('data', (b: Buffer) => {
    parts.push(b);
    bytes += b.length;
    first();
    waiter?.();
  });
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
  const closed = new Promise<RawResponse>((resolve) => {
    socket.on('close', () => {
      const r = parseResponse(Buffer.concat(parts));
      if (error) r.error = error;
      resolve(r);
    });
  });
  const response = async (): Promise<RawResponse> => {
    let ended = false;
    void closed.then(() => (ended = true));
    for (;;) {
      const r = parseResponse(Buffer.concat(parts));
      if (r.complete) return r;
      if (ended) return closed;
      await Promise.race([new Promise<void>((w) => (waiter = w)), closed]);
    }
  };
  const finish = () => {
    if (held) socket.write(data.subarray(data.length - held));
    held = 0;
  };
  return { socket, firstBytes, closed, received: () => bytes, text: () => Buffer.concat(parts).toString('latin1'), response, finish };
}

/** Parses one response (status 0 when not even a status line came). */
export function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, body: '', complete: false };
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0]!)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const rest = raw.subarray(end + 4);
  if (headers['transfer-encoding'] !== 'chunked') {
    const length = Number(headers['content-length'] ?? -1);
    return { status, headers, body: rest.toString('utf8'), complete: length >= 0 && rest.length >= length };
  }
  const pieces: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = rest.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) break;
    if (size === 0) return { status, headers, body: Buffer.concat(pieces).toString('utf8'), complete: true };
    if (eol + 2 + size > rest.length) {
      pieces.push(rest.subarray(eol + 2));
      break;
    }
    pieces.push(rest.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return { status, headers, body: Buffer.concat(pieces).toString('utf8'), complete: false };
}
