// One streaming search read as a client would (POST /api/stream_search), its Server-Sent
// Events counted as they arrive (sse.ts): bytes, messages, time to first byte, total time,
// MB/s: the streaming figures of the HTTP phase.
//
// The client is node:http, not fetch: the client shares this machine's two cores with the
// daemon it measures, and fetch (undici: its HTTP parser in WebAssembly, a web stream
// and a promise per read) spent half as much CPU again per stream as node:http, in the
// same daemon, alternating, and the measured MB/s fell with it. A client of its own
// machine pays neither.

import http from 'node:http';
import { load, markPids, round2, log, type Load } from './load.ts';
import { formatBytes, formatMs } from '../../daemon/cli/format.ts';
import { SseCounter, type SseCounts } from './sse.ts';

/** A stream's counts (sse.ts) and timings. */
export interface StreamRun extends SseCounts {
  /** 0: the untimed warm-up. */
  run: number;
  status: number;
  bytes: number;
  headersMs: number;
  firstByteMs: number | null;
  /**
   * Time to the first `chunk` message complete: the first results. The first byte is the
   * `: keep-alive` comment the daemon sends as the stream opens (search.ts), before any
   * result; this is what a user waits for. Null: no chunk came.
   */
  firstResultMs: number | null;
  totalMs: number;
  mbPerSecond: number;
  /** Bytes over the time from the first body byte to the end: the transfer without the wait for the first result. */
  afterFirstByteMbPerSecond: number | null;
  load: Load;
}

/** Bytes per second (10^6) between the first byte and the end; null when too short to tell. */
function afterFirstByte(bytes: number, firstByteMs: number | null, totalMs: number): number | null {
  if (firstByteMs === null || totalMs - firstByteMs < 0.5) return null;
  return round2(bytes / 1e6 / ((totalMs - firstByteMs) / 1000));
}

/** The daemon a stream is read from: its URL, and its process for the CPU it used. */
export interface StreamTarget {
  url: string;
  pid: number | undefined;
}

/** One stream, read with node:http; the messages counted as they arrive (sse.ts). */
export async function streamOnce(trawl: StreamTarget, body: string, run: number): Promise<StreamRun> {
  const at = () => markPids([{ name: 'trawl', pid: trawl.pid }]);
  const from = at();
  const t0 = performance.now();
  let bytes = 0;
  const counter = new SseCounter();
  let firstResultMs: number | null = null;
  let firstByteMs: number | null = null;
  const res = await post(`${trawl.url}/api/stream_search`, body, (value) => {
    firstByteMs ??= performance.now() - t0;
    bytes += value.byteLength;
    counter.push(value);
    if (firstResultMs === null && counter.chunks > 0) firstResultMs = performance.now() - t0;
  });
  const headersMs = res.headersAt - t0;
  const totalMs = performance.now() - t0;
  const counts = counter.end();
  const l = load(from, at());
  const r: StreamRun = {
    run,
    status: res.status,
    bytes,
    ...counts,
    headersMs: round2(headersMs),
    firstByteMs: firstByteMs === null ? null : round2(firstByteMs),
    firstResultMs: firstResultMs === null ? null : round2(firstResultMs),
    totalMs: round2(totalMs),
    mbPerSecond: round2(bytes / 1e6 / (totalMs / 1000)),
    afterFirstByteMbPerSecond: afterFirstByte(bytes, firstByteMs, totalMs),
    load: l,
  };
  log(
    `  ${run === 0 ? 'warm-up' : `run ${run}`}: ${r.status} ${formatBytes(bytes)} in ${formatMs(totalMs)} (${r.mbPerSecond.toFixed(1)} MB/s), first byte ${formatMs(r.firstByteMs)}, first result ${formatMs(r.firstResultMs)}, ` +
      `${r.messages} messages (${r.chunks} chunks${r.keepAlives ? `, ${r.keepAlives} keep-alives` : ''}), final ${r.final ? 'yes' : 'NO'}, [DONE] last ${r.endsWithDone ? 'yes' : 'NO'}, ${r.matches ?? '?'} matches` +
      `${r.error ? `, error: ${r.error}` : ''}; trawl ${l.serverCores.trawl?.toFixed(2) ?? '?'} cores, other ${l.foreignCores?.toFixed(2) ?? '?'}`,
  );
  return r;
}

/** Connections kept between a client's streams, as fetch keeps them. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/**
 * POSTs `body` as JSON and hands each non-empty piece of the response body to `chunk` as
 * it arrives; resolves at the body's end with the status and when the headers came (a
 * performance.now() reading).
 */
function post(url: string, body: string, chunk: (value: Buffer) => void): Promise<{ status: number; headersAt: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const headersAt = performance.now();
        res.on('data', (value: Buffer) => {
          if (value.length > 0) chunk(value);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headersAt }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
