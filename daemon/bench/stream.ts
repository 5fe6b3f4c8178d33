// One streaming search read as a client would (POST /api/stream_search with fetch), its
// Server-Sent Events counted as they arrive (sse.ts): bytes, messages, time to first byte,
// total time, MB/s: the streaming figures of the HTTP phase.

import { load, markPids, round2, log, type Load } from './load.ts';
import { formatBytes, formatMs } from './format.ts';
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

/**
 * Reads a response body as it arrives, handing each non-empty chunk to `chunk`; the time
 * of the first byte in ms since `t0` (a performance.now() reading), null with no body.
 */
async function readBody(res: Response, t0: number, chunk: (value: Uint8Array) => void): Promise<number | null> {
  let firstByteMs: number | null = null;
  if (!res.body) return null;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return firstByteMs;
    if (!value || value.byteLength === 0) continue;
    firstByteMs ??= performance.now() - t0;
    chunk(value);
  }
}

/** The daemon a stream is read from: its URL, and its process for the CPU it used. */
export interface StreamTarget {
  url: string;
  pid: number | undefined;
}

/** One stream, read with fetch; the messages counted as they arrive (sse.ts). */
export async function streamOnce(trawl: StreamTarget, body: string, run: number): Promise<StreamRun> {
  const at = () => markPids([{ name: 'trawl', pid: trawl.pid }]);
  const from = at();
  const t0 = performance.now();
  const res = await fetch(`${trawl.url}/api/stream_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const headersMs = performance.now() - t0;
  let bytes = 0;
  const counter = new SseCounter();
  let firstResultMs: number | null = null;
  const firstByteMs = await readBody(res, t0, (value) => {
    bytes += value.byteLength;
    counter.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    if (firstResultMs === null && counter.chunks > 0) firstResultMs = performance.now() - t0;
  });
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
      `${r.error ? `, error: ${r.error}` : ''}; trawl ${l.serverCores['trawl']?.toFixed(2) ?? '?'} cores, other ${l.foreignCores?.toFixed(2) ?? '?'}`,
  );
  return r;
}

