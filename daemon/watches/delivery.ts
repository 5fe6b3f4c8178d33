// Delivering watches' changes to their URLs: a signed POST per event, retried with back-off.
//
// The events wait in the store (watch_events, state 'pending' with the time of their next
// attempt), so a restart loses none. A round takes the due ones, a few at a time; an answer
// 2xx delivers, anything else (another status, a refused connection, no answer within
// POST_TIMEOUT_MS) is tried again after settings.watches.retryBaseMs, doubled per attempt
// up to retryMaxMs, until deliveryAttempts have failed: then it is a dead letter, counted
// on its watch. Redirects are not followed (a 3xx fails the attempt).
//
// What the owner may see is checked again before each attempt: an owner who cannot act now
// (deleted, suspended), or who may no longer see the repository, is not sent the change,
// which is withheld (state 'none') rather than retried.

import http from 'node:http';
import https from 'node:https';
import type { Identity } from '../auth/identity.ts';
import type { Settings } from '../config/types.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Store, WatchEventRecord } from '../store/store.ts';
import { checkWatchUrl, guardedLookup } from './url-policy.ts';
import { SIGNATURE_HEADER, signature, watchSecret } from './signature.ts';
import { eventRepoId, withId, WATCH_EVENT_TYPE } from './watch-event.ts';

/** How long one attempt may take, from connecting to the answer's status. */
export const POST_TIMEOUT_MS = 10_000;
/** How often due retries are looked for (a new event wakes the deliverer at once). */
export const ROUND_MS = 1000;
/** Attempts made at once. */
const PARALLEL = 4;
/** Due events read per round. */
const BATCH = 64;

export type DeliveryOutcome = 'delivered' | 'retry' | 'dead' | 'withheld';

export interface DelivererDeps {
  store: Pick<Store, 'watches'>;
  /** The installation's secret (the signing secrets are derived from it). */
  secret(): Buffer;
  owner(userId: string): Promise<Identity['canSee'] | undefined>;
  /** A repository's visibility now; undefined when it is no longer known. */
  visibility(repoId: number): Promise<'public' | 'private' | undefined>;
  settings: () => Settings['watches'];
  userAgent: string;
  observe?(outcome: DeliveryOutcome): void;
  /** Whether this process delivers now (in a cluster, the node that checks the watches); default: always. */
  active?(): boolean;
  now?: () => Date;
  log?: Logger;
}

export class WatchDeliverer {
  readonly #d: DelivererDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(deps: DelivererDeps) {
    this.#d = deps;
  }

  start(): void {
    this.#timer = setInterval(() => this.wake(), ROUND_MS);
    this.#timer.unref();
    this.wake();
  }

  /** Looks for due events now (an event was just recorded). */
  wake(): void {
    if (this.#stopped || this.#d.active?.() === false) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.round()
      .catch((err: Error) => this.#d.log?.warn({ err: err.message }, 'a round of watch deliveries failed: tried again in a second'))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Stops looking; the attempts under way end (their outcome is recorded). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#running;
  }

  /** One round: every event due now, PARALLEL at a time. */
  async round(): Promise<void> {
    const due = await this.#d.store.watches.dueEvents(this.#nowIso(), BATCH);
    let next = 0;
    const lane = async () => {
      while (next < due.length && !this.#stopped) await this.#attempt(due[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, due.length) }, lane));
    if (due.length === BATCH) this.#again = true;
  }

  #nowIso(): string {
    return (this.#d.now?.() ?? new Date()).toISOString();
  }

  async #attempt(event: WatchEventRecord): Promise<void> {
    const store = this.#d.store.watches;
    const watch = await store.get(event.watchId);
    if (!watch?.url) return;
    const settings = this.#d.settings();
    const canSee = await this.#d.owner(watch.userId);
    const repoId = eventRepoId(event);
    const visibility = await this.#d.visibility(repoId);
    if (!canSee || (visibility !== undefined && !canSee({ repoId, visibility }))) {
      await store.settleEvent(
        event.id,
        { state: 'none', attempts: event.attempts, lastError: 'withheld: the owner may not see this repository now' },
        this.#nowIso(),
      );
      this.#d.observe?.('withheld');
      return;
    }
    const body = Buffer.from(JSON.stringify(withId(event)));
    const error = await post(
      new URL(watch.url),
      body,
      {
        'Content-Type': 'application/json',
        'User-Agent': this.#d.userAgent,
        'X-Trawl-Event': WATCH_EVENT_TYPE,
        'X-Trawl-Delivery': String(event.id),
        [SIGNATURE_HEADER]: signature(watchSecret(this.#d.secret(), watch.salt), body),
      },
      settings.allowPrivateUrls,
    );
    const attempts = event.attempts + 1;
    if (error === undefined) {
      await store.settleEvent(event.id, { state: 'delivered', attempts }, this.#nowIso());
      this.#d.observe?.('delivered');
    } else if (attempts >= settings.deliveryAttempts) {
      await store.settleEvent(event.id, { state: 'dead', attempts, lastError: error }, this.#nowIso());
      this.#d.observe?.('dead');
      this.#d.log?.warn({ watch: watch.id, event: event.id, attempts, err: error }, 'a watch change could not be delivered: counted as a dead letter');
    } else {
      const wait = Math.min(settings.retryBaseMs * 2 ** (attempts - 1), Math.max(settings.retryMaxMs, settings.retryBaseMs));
      const nextAttemptAt = new Date((this.#d.now?.() ?? new Date()).getTime() + wait).toISOString();
      await store.settleEvent(event.id, { state: 'pending', attempts, nextAttemptAt, lastError: error }, this.#nowIso());
      this.#d.observe?.('retry');
    }
  }
}

/** POSTs `body`; undefined when answered 2xx, else why not (one line). */
function post(url: URL, body: Buffer, headers: Record<string, string>, allowPrivate: boolean): Promise<string | undefined> {
  // An address written in the URL is not looked up: it is checked here instead.
  try {
    checkWatchUrl(url.href, allowPrivate);
  } catch (err) {
    return Promise.resolve((err as Error).message);
  }
  return new Promise((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(body.length) },
        lookup: guardedLookup(allowPrivate),
        timeout: POST_TIMEOUT_MS,
        agent: false,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        resolve(status >= 200 && status < 300 ? undefined : `answered ${status}`);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${POST_TIMEOUT_MS} ms`)));
    req.on('error', (err) => resolve(err.message.split('\n')[0]));
    req.end(body);
  });
}
