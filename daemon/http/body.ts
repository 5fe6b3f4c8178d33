// Request bodies and query strings: read with a size limit, decoded strictly (invalid
// UTF-8 and malformed JSON are the client's error, 400), media type checked (415).

import { ServiceError } from '../errors.ts';
import type { Incoming } from './transport.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the whole body. Rejects with 413 as soon as it passes `limit` bytes (a declared
 * Content-Length over the limit is refused before reading). onData must be attached in the
 * request's own tick, which is why this is called before any await.
 */
export function readBody(request: Incoming, contentLength: string, limit: number, onAbort: (abort: () => void) => void): Promise<Buffer> {
  const declared = contentLength === '' ? undefined : Number(contentLength);
  return new Promise((resolve, reject) => {
    // A client that leaves mid-upload never sends the last chunk: settle now.
    onAbort(() => reject(new ServiceError('INVALID_REQUEST_BODY', 'the client closed the connection before the body was complete')));
    if (declared !== undefined && declared > limit) {
      reject(tooLarge(limit));
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    request.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        return;
      }
      // A transport may reuse the chunk's memory after the callback (uWS does): copy it.
      parts.push(Buffer.from(chunk));
      if (isLast) resolve(Buffer.concat(parts, size));
    });
  });
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('REQUEST_TOO_LARGE', `the request body is larger than the limit of ${limit} bytes`);
}

/** The JSON value of a body; 415 unless the request says it is JSON. */
export function parseJsonBody(body: Buffer, contentType: string): unknown {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', `send the body as JSON with Content-Type: application/json${type ? `, not ${type}` : ''}`);
  }
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new ServiceError('INVALID_REQUEST_BODY', 'the request body is not valid UTF-8');
  }
  if (text.trim() === '') throw new ServiceError('INVALID_REQUEST_BODY', 'the request body is empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError('INVALID_REQUEST_BODY', `the request body is not valid JSON (${(err as Error).message.replace(/\s+/g, ' ')})`);
  }
}

/**
 * Query parameters, each at most once (a repeated one is ambiguous, hence an error).
 * Invalid percent-encoding or UTF-8 is INVALID_QUERY_PARAMS.
 */
export function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (raw === '') return out;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decode(part.slice(eq + 1));
    if (key in out) throw new ServiceError('INVALID_QUERY_PARAMS', `query parameter "${key}" is given more than once`);
    out[key] = value;
  }
  return { ...out };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw new ServiceError('INVALID_QUERY_PARAMS', 'the query string has invalid percent-encoding or UTF-8');
  }
}
