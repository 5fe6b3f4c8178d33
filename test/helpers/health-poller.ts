// /api/health polled back to back from a worker thread while a fault test loads a daemon,
// with the scheduler's account of the daemon's main thread and of the polling thread
// around each request: how long either waited for a CPU is the machine's load (other test
// files, other processes), and how long the polling thread ran is its own work (the first
// fetch of a thread loads and compiles its HTTP client: tens of milliseconds, more on a
// slow machine, which is why a request made before polling starts is not a sample). None
// of that is the daemon's own delay.

import { Worker } from 'node:worker_threads';

/** One /api/health request: its latency, and what the daemon's main thread did meanwhile. */
export interface HealthSample {
  ms: number;
  /** Milliseconds the daemon's main thread ran (at other work, but for this request's own handling). */
  cpuMs: number;
  /** Milliseconds it was ready to run but waited for a CPU (the machine's load, not the daemon). */
  waitMs: number;
  /** Milliseconds the polling thread itself waited for a CPU meanwhile (it sends the request and reads the answer). */
  pollerWaitMs: number;
  /** Milliseconds the polling thread itself ran meanwhile (its HTTP client, its garbage collection). */
  pollerRunMs: number;
}

/**
 * /api/health polled back to back from a worker thread (this thread reads the listings'
 * megabytes, which must not count as the daemon's latency), with the scheduler's account
 * of the daemon's main thread around each request (/proc/PID/task/PID/schedstat: time on
 * a CPU, time waiting for one).
 */
export function healthPoller(url: string, pid: number): { started: Promise<void>; stop(): Promise<HealthSample[]> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const { readFileSync } = require('node:fs');
    const sched = () => readFileSync('/proc/' + workerData.pid + '/task/' + workerData.pid + '/schedstat', 'utf8').split(' ').map(Number);
    // This thread's own account (/proc/thread-self: the thread reading it).
    const own = () => readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    const health = async () => {
      const res = await fetch(workerData.url + '/api/health', { signal: AbortSignal.timeout(60000) });
      await res.arrayBuffer();
    };
    let polling = true;
    const samples = [];
    parentPort.on('message', () => { polling = false; });
    (async () => {
      await health();
      while (polling) {
        const [run0, wait0] = sched();
        const [ownRun0, ownWait0] = own();
        const t0 = performance.now();
        await health();
        const ms = performance.now() - t0;
        const [ownRun1, ownWait1] = own();
        const [run1, wait1] = sched();
        samples.push({
          ms,
          cpuMs: (run1 - run0) / 1e6,
          waitMs: (wait1 - wait0) / 1e6,
          pollerWaitMs: (ownWait1 - ownWait0) / 1e6,
          pollerRunMs: (ownRun1 - ownRun0) / 1e6,
        });
        if (samples.length === 1) parentPort.postMessage('started');
        await new Promise((r) => setTimeout(r, 5));
      }
      parentPort.postMessage(samples);
    })();
    `,
    { eval: true, workerData: { url, pid } },
  );
  const messages: unknown[] = [];
  const waiting: Array<(m: unknown) => void> = [];
  worker.on('message', (m: unknown) => {
    const w = waiting.shift();
    if (w) w(m);
    else messages.push(m);
  });
  worker.on('error', (err) => {
    const w = waiting.shift();
    if (w) w(err);
    else messages.push(err);
  });
  const next = async (): Promise<unknown> => {
    const m = messages.length > 0 ? messages.shift() : await new Promise((r) => waiting.push(r));
    if (m instanceof Error) throw m;
    return m;
  };
  const started = next().then(() => undefined);
  return {
    started,
    async stop() {
      await started;
      worker.postMessage('stop');
      const samples = (await next()) as HealthSample[];
      await worker.terminate();
      return samples;
    },
  };
}

/**
 * A sample's latency less the larger of the time the daemon's main thread waited for a CPU
 * and the time the polling thread was busy with itself (waiting for a CPU, or running):
 * while both are held up, the request is delayed once.
 */
export const ownDelay = (s: HealthSample): number => Math.max(0, s.ms - Math.max(s.waitMs, s.pollerWaitMs + s.pollerRunMs));

/** A sample as a line of a test's diagnostics. */
export const showHealth = (s: HealthSample): string =>
  `${s.ms.toFixed(1)} ms (the daemon's thread ran ${s.cpuMs.toFixed(1)} ms, waited for a CPU ${s.waitMs.toFixed(1)} ms; the polling thread waited ${s.pollerWaitMs.toFixed(1)} ms and ran ${s.pollerRunMs.toFixed(1)} ms)`;

/**
 * Whether the samples keep the daemon's own delay (ownDelay) under `bound`: every sample
 * but one, and that one under 2.5 times the bound. One sample past it in a hundred or more
 * while neither thread ran nor waited for a CPU is the machine's stall (another process's
 * disk writes, the hypervisor), which a daemon blocking its own thread repeats or makes
 * far longer. `why` names the samples past the bound.
 */
export function withinBound(samples: readonly HealthSample[], bound: number): { ok: boolean; why: string } {
  const over = samples.filter((s) => ownDelay(s) >= bound);
  const ok = over.length === 0 || (over.length === 1 && ownDelay(over[0]!) < 2.5 * bound && samples.length >= 20);
  return { ok, why: `${over.length} of ${samples.length} samples past ${bound} ms: ${over.map(showHealth).join('; ')}` };
}
