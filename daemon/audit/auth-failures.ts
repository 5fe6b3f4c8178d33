// Failed authentications in the audit log, counted rather than listed: a client guessing
// keys, or a script still using a revoked one, sends thousands of requests, and one event
// each would bury everything else (and let anyone grow the database at will). Failures are
// counted per (client address, credential kind) over a window (a minute) that opens at the
// first failure; when it has passed, one `auth.failed` event records the count, the first
// failure's time (the event's `at`) and the last's. The window closes on the next failure
// from there, or on the daemon's maintenance tick (flush()), or at shutdown (flush(true)).
//
// The same counting serves refused webhook deliveries (webhooks/receiver.ts): action
// `webhook.refused`, credential kind `webhook`, and a subject (the host and the reason)
// that keeps their windows apart.
//
// Memory is bounded: at most `maxTracked` addresses are counted apart at once. Failures
// from further addresses, while that many windows are open, are counted together per
// credential kind (an event without an address, `details.overflow: true`): the count is
// never lost, only the addresses of a flood that wide.

import type { Authenticator, Credentials } from '../auth/identity.ts';
import { credentialKindOf } from '../auth/authenticator.ts';
import { ServiceError } from '../errors.ts';
import type { AuditCredentialKind } from './events.ts';
import type { AuditLog } from './log.ts';

export const FAILURE_WINDOW_MS = 60_000;
export const MAX_TRACKED_ADDRESSES = 10_000;

interface Window {
  kind: AuditCredentialKind;
  /** What the refusals were of, besides the kind (a webhook's host and reason); undefined for credentials. */
  subject?: string;
  /** Undefined: the overflow window of this kind. */
  address?: string;
  count: number;
  first: number;
  last: number;
}

export interface AuthFailuresOptions {
  log: AuditLog;
  /** The event recorded per window (default auth.failed). */
  action?: 'auth.failed' | 'webhook.refused';
  now: () => Date;
  windowMs?: number;
  maxTracked?: number;
}

export class AuthFailures {
  readonly #open = new Map<string, Window>();
  /** Open windows with an address (the overflow windows are not counted against the cap). */
  #tracked = 0;
  readonly #windowMs: number;
  readonly #maxTracked: number;

  constructor(private readonly options: AuthFailuresOptions) {
    this.#windowMs = options.windowMs ?? FAILURE_WINDOW_MS;
    this.#maxTracked = options.maxTracked ?? MAX_TRACKED_ADDRESSES;
  }

  /** Counts one refused credential of `kind` (of `subject`, when given) from `address` ('' when unknown). */
  add(address: string, kind: AuditCredentialKind, subject?: string): void {
    const now = this.options.now().getTime();
    const of = subject === undefined ? kind : `${kind} ${subject}`;
    let key = `${of} ${address}`;
    if (!this.#open.has(key) && this.#tracked >= this.#maxTracked) {
      this.flush();
      if (this.#tracked >= this.#maxTracked) key = `${of} *`;
    }
    let window = this.#open.get(key);
    if (window !== undefined && now - window.first >= this.#windowMs) {
      this.#close(key, window);
      window = undefined;
    }
    if (window === undefined) {
      window = { kind, count: 0, first: now, last: now, ...(key.endsWith(' *') ? {} : { address }), ...(subject === undefined ? {} : { subject }) };
      this.#open.set(key, window);
      if (window.address !== undefined) this.#tracked++;
    }
    window.count++;
    window.last = now;
  }

  /**
   * Records the windows that have passed (all of them with `all`: at shutdown). A window
   * enters the map when it opens, so the map is in the order of their first failures and
   * the walk stops at the first window still open: a flush costs what it closes.
   */
  flush(all = false): void {
    const now = this.options.now().getTime();
    for (const [key, window] of this.#open) {
      if (!all && now - window.first < this.#windowMs) break;
      this.#close(key, window);
    }
  }

  /** Windows open now (tests: the bound on memory). */
  get openWindows(): number {
    return this.#open.size;
  }

  #close(key: string, w: Window): void {
    this.#open.delete(key);
    if (w.address !== undefined) this.#tracked--;
    this.options.log.note(
      {
        action: this.options.action ?? 'auth.failed',
        outcome: 'failure',
        actor: { credentialKind: w.kind },
        ...(w.address ? { sourceAddress: w.address } : {}),
        details: {
          ...(w.subject === undefined ? {} : { subject: w.subject }),
          count: w.count,
          lastAt: new Date(w.last).toISOString(),
          windowSeconds: this.#windowMs / 1000,
          ...(w.address === undefined ? { overflow: true } : {}),
        },
      },
      new Date(w.first),
    );
  }
}

/**
 * `inner`, with every 401 for a credential that was sent counted in `failures`, by the
 * address the credentials came `from` (auth/identity.ts Credentials). Callers that give no
 * address are not counted: GET /api/session asking whether a stale cookie still works is
 * not an attempt to get in.
 */
export function countingFailures(inner: Authenticator, failures: AuthFailures): Authenticator {
  return {
    // A forwarded caller (another node authenticated it, and counted any refusal there) passes through.
    ...(inner.resume ? { resume: inner.resume.bind(inner) } : {}),
    ...(inner.memberSees ? { memberSees: inner.memberSees.bind(inner) } : {}),
    async authenticate(credentials: Credentials) {
      try {
        return await inner.authenticate(credentials);
      } catch (err) {
        if (credentials.from !== undefined && err instanceof ServiceError && err.statusCode === 401) {
          const kind = credentialKindOf(credentials);
          if (kind !== 'anonymous') failures.add(credentials.from, kind);
        }
        throw err;
      }
    },
  };
}
