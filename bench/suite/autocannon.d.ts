// The part of autocannon 8's programmatic API that load.ts uses (the package ships no
// types). See node_modules/autocannon/README.md, "API".

declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds to wait for a response before counting a timeout (default 10). */
      timeout?: number;
      pipelining?: number;
      method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';
      headers?: Record<string, string>;
      body?: string | Buffer;
      title?: string;
      /** Leave non-2xx responses out of the latency and throughput figures. */
      excludeErrorStats?: boolean;
      /** A sequence each connection loops over, in order (each may change the path, method, body and headers). */
      requests?: Array<{ path?: string; method?: Options['method']; headers?: Record<string, string>; body?: string | Buffer }>;
    }

    /** An hdr-histogram-percentiles-obj summary. */
    interface Histogram {
      min: number;
      max: number;
      average: number;
      mean: number;
      stddev: number;
      total: number;
      p0_001: number;
      p0_01: number;
      p0_1: number;
      p1: number;
      p2_5: number;
      p10: number;
      p25: number;
      p50: number;
      p75: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
      p99_99: number;
      p99_999: number;
    }

    interface Result {
      title?: string;
      url: string;
      /** Milliseconds, whole (1 ms resolution), 2xx responses only unless excludeErrorStats is false. */
      latency: Histogram & { totalCount: number };
      /** Completed requests per one-second sample; `total` is all of them, `sent` the requests sent. */
      requests: Histogram & { sent: number };
      /** Response bytes (headers included) per one-second sample. */
      throughput: Histogram;
      /** Seconds. */
      duration: number;
      samples: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      connections: number;
      pipelining: number;
    }

    /** A running benchmark: an event emitter that is also a promise of the result. */
    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
      /** Each response: its status, its bytes (headers included) and its time in ms (fractional). */
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this;
      on(event: 'reqError', listener: (error: Error) => void): this;
      on(event: string | symbol, listener: (...args: any[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;

  export default autocannon;
}
