// The query planner: turns a search's query into its plan off the main thread. Planning
// parses the query, compiles its regular expressions with RE2 and analyses them for
// prefilters; its cost is bounded (regex-cost.ts, the parser's term limits, the analyses'
// time budget: query/analysis-budget.ts) but stays long for a pathological query of
// many kilobytes, and the main thread serves every other request meanwhile. So
// each plan is made on one of a few planner threads (plan-thread.ts), while the main thread
// only looks the query up in the plan cache (plan-cache.ts) and waits.
//
// Fairness: queries wait by caller (runtime/fair-queue.ts) and one caller has at most
// `threads - 1` of them being planned at once, so a caller sending costly queries has
// them planned one after the other while another caller's query takes the next free
// thread. A query sent again while it is being planned waits for that plan.
//
// A plan that takes longer than `timeoutMs` (which the bounds should make impossible) has
// its thread replaced and its query refused, so no query can hold a thread for good.

import type { Worker } from 'node:worker_threads';
import { ERROR_CODES, ServiceError, type ErrorCode } from '../errors.ts';
import type { Plan } from '../query/plan.ts';
import { FairQueue } from '../runtime/fair-queue.ts';
import { startTsWorker } from '../runtime/ts-worker.ts';
import { cachedPlan, keepPlan, planKey, plannedFrom, planSearch, type PlannedSearch, type PlanRequest } from './plan-cache.ts';
import { packr } from './protocol.ts';

/** The planner thread's module (started by path: an entry point of the compiled build). */
const THREAD = 'daemon/search/plan-thread.ts';

/** A query sent to a planner thread. */
export interface PlanJob {
  id: number;
  request: PlanRequest;
}

/** A planner thread's answer: the plan encoded, the query refused, or the thread's failure; first, that it is ready. */
export type PlanAnswer =
  | { ready: true }
  | { id: number; bytes: Uint8Array; planNs: number }
  | { id: number; refused: { errorCode: ErrorCode; message: string } }
  | { id: number; failed: string };

export interface PlannerOptions {
  /** Planner threads; 0: plans are made in this thread (a command on a small index, tests). Default 2. */
  threads?: number;
  /** A plan taking longer than this (ms) has its thread replaced and its query refused. Default 5,000. */
  timeoutMs?: number;
}

interface Waiter {
  resolve: (p: PlannedSearch) => void;
  reject: (e: Error) => void;
}

interface Job {
  id: number;
  key: string;
  caller: string;
  request: PlanRequest;
  waiters: Waiter[];
}

interface Slot {
  worker: Worker;
  /** The thread has loaded its modules (its first message): only then is a query's time counted. */
  ready: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class Planner {
  readonly threads: number;
  private readonly timeoutMs: number;
  private readonly perCaller: number;
  private readonly slots: Slot[] = [];
  private readonly queue = new FairQueue<Job>();
  private readonly jobs = new Map<string, Job>();
  private readonly planning = new Map<string, number>();
  private nextJob = 1;
  private closed = false;

  constructor(options: PlannerOptions = {}) {
    this.threads = options.threads ?? 2;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.perCaller = Math.max(1, this.threads - 1);
  }

  /** Starts the threads now rather than at the first query (a thread loads the parser and its tables). */
  warm(): void {
    while (!this.closed && this.slots.length < this.threads) this.slots.push(this.spawn());
  }

  /**
   * The plan of `req`'s query for `caller` (http/caller.ts); rejects with the
   * FAILED_TO_PARSE_QUERY ServiceError that refuses it. `signal`: the caller went away (a
   * query nobody waits for any more leaves the queue).
   */
  async plan(req: PlanRequest, caller = '', signal?: AbortSignal): Promise<PlannedSearch> {
    if (this.threads === 0) return planSearch(req);
    const t = process.hrtime.bigint();
    const key = planKey(req);
    const known = cachedPlan(key);
    if (known) return plannedFrom(known, Number(process.hrtime.bigint() - t));
    if (this.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'the planner is closed: the server is shutting down');
    return new Promise<PlannedSearch>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      let job = this.jobs.get(key);
      if (job) job.waiters.push(waiter);
      else {
        job = {
          id: this.nextJob++,
          key,
          caller,
          request: { query: req.query, isRegexEnabled: req.isRegexEnabled === true, isCaseSensitivityEnabled: req.isCaseSensitivityEnabled === true },
          waiters: [waiter],
        };
        this.jobs.set(key, job);
        this.queue.push(caller, job);
      }
      if (signal) signal.addEventListener('abort', () => this.abandon(job, waiter), { once: true });
      this.dispatch();
    });
  }

  /** Stops the threads; queries waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const gone = new ServiceError('SERVICE_UNAVAILABLE', 'the planner is closed: the server is shutting down');
    for (const job of this.jobs.values()) for (const w of job.waiters) w.reject(gone);
    this.jobs.clear();
    for (;;) if (!this.queue.shift()) break;
    await Promise.all(this.slots.map((s) => (clearTimeout(s.timer), s.worker.terminate())));
    this.slots.length = 0;
  }

  /** A waiter went away: a query nobody waits for any more leaves the queue (once being planned, it is planned and kept). */
  private abandon(job: Job, waiter: Waiter): void {
    const i = job.waiters.indexOf(waiter);
    if (i < 0) return;
    job.waiters.splice(i, 1);
    waiter.reject(new Error('the client went away while its query was being planned'));
    if (job.waiters.length === 0 && this.queue.remove(job.caller, job)) this.jobs.delete(job.key);
  }

  /** Hands queued queries to idle threads, callers by turns, each caller within its share. */
  private dispatch(): void {
    this.warm();
    for (const slot of this.slots) {
      if (slot.job || !slot.ready) continue;
      const next = this.queue.shift((caller) => (this.planning.get(caller) ?? 0) < this.perCaller);
      if (!next) return;
      const job = next.entry;
      slot.job = job;
      this.planning.set(job.caller, (this.planning.get(job.caller) ?? 0) + 1);
      slot.timer = setTimeout(() => this.overrun(slot), this.timeoutMs);
      slot.worker.postMessage({ id: job.id, request: job.request } satisfies PlanJob);
    }
  }

  /** The thread of `slot` is done with its job (answered, overran or died). */
  private release(slot: Slot): Job | undefined {
    const job = slot.job;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    if (job) {
      this.jobs.delete(job.key);
      const left = (this.planning.get(job.caller) ?? 1) - 1;
      if (left > 0) this.planning.set(job.caller, left);
      else this.planning.delete(job.caller);
    }
    return job;
  }

  private answered(slot: Slot, answer: PlanAnswer): void {
    if ('ready' in answer) {
      slot.ready = true;
      this.dispatch();
      return;
    }
    if (slot.job?.id !== answer.id) return;
    const job = this.release(slot)!;
    if ('failed' in answer) {
      for (const w of job.waiters) w.reject(new Error(`planning the query failed: ${answer.failed}`));
    } else {
      const outcome =
        'refused' in answer
          ? keepPlan(job.key, {
              refused: new ServiceError(answer.refused.errorCode in ERROR_CODES ? answer.refused.errorCode : 'FAILED_TO_PARSE_QUERY', answer.refused.message),
            })
          : keepPlan(job.key, { plan: packr.unpack(answer.bytes) as Plan, bytes: answer.bytes });
      for (const w of job.waiters) {
        try {
          w.resolve(plannedFrom(outcome, 'planNs' in answer ? answer.planNs : 0));
        } catch (err) {
          w.reject(err as Error);
        }
      }
    }
    this.dispatch();
  }

  /** A plan ran past the time limit: its query is refused (and remembered so), its thread replaced. */
  private overrun(slot: Slot): void {
    const job = this.release(slot);
    this.replace(slot);
    if (job) {
      const refused = new ServiceError(
        'FAILED_TO_PARSE_QUERY',
        `the query took more than ${this.timeoutMs} ms to plan; make it simpler (fewer or shorter regular expressions)`,
      );
      keepPlan(job.key, { refused });
      for (const w of job.waiters) w.reject(refused);
    }
    this.dispatch();
  }

  /** A thread died (out of memory, a crash): its query fails, a new thread takes its place. */
  private died(slot: Slot, err: Error): void {
    if (this.closed || !this.slots.includes(slot)) return;
    const job = this.release(slot);
    this.replace(slot);
    if (job) for (const w of job.waiters) w.reject(new Error(`the planner thread failed: ${err.message}`));
    this.dispatch();
  }

  private replace(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    void slot.worker.terminate();
    if (this.closed) this.slots.splice(i, 1);
    else this.slots[i] = this.spawn();
  }

  private spawn(): Slot {
    // Bounded like a search worker's heap (search/worker-limits.ts), young space small alike.
    const worker = startTsWorker(THREAD, {}, { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 4 });
    const slot: Slot = { worker, ready: false, job: undefined, timer: undefined };
    worker.unref();
    worker.on('message', (answer: PlanAnswer) => this.answered(slot, answer));
    worker.on('error', (err) => this.died(slot, err));
    worker.on('exit', (code) => this.died(slot, new Error(`exited with code ${code}`)));
    return slot;
  }
}
