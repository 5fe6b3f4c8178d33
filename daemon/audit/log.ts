// The audit log's recorder: what every audited action calls (the vocabulary is events.ts,
// the storage the Store's `audit`, docs/audit-log.md the operator's view).
//
// Strict for changes: a change of credentials or administration and its event are written
// in one transaction of the store (change()), so both are stored or neither is. When the
// event cannot be written (a full disk), the change fails too: there is no credential
// created, revoked or granted without its record. The same holds for an event that stands
// for a credential handed out without a store write of its own (a browser session:
// record() before the cookie is sent). Only events whose action must go on whatever
// happens to the log are best-effort (note()): signing out, and the counts of failed
// authentications (auth-failures.ts), whose requests were answered long before. A note that
// cannot be written is reported (at most once a minute) and dropped.
//
// Never a secret: call sites name credentials by their ids (key_..., sat_..., ogr_...,
// oac_...), never by the key, token, code, secret or session cookie; tests search the
// database file, the API's answers and the logs for every secret issued.

import { userInfo } from 'node:os';
import type { Identity } from '../auth/identity.ts';
import type { AuditEventRecord, Store } from '../store/store.ts';
import type { AuditActorOf, AuditAction, AuditEntry } from './events.ts';

/** A failed note is reported at most this often. */
const REPORT_EVERY_MS = 60_000;

export class AuditLog {
  #reportedAt = -Infinity;

  constructor(
    private readonly store: Pick<Store, 'audit' | 'atomically'>,
    /** The clock of the events (injectable in tests). */
    private readonly now: () => Date = () => new Date(),
    /** Told when a note could not be written (at most once a minute). */
    private readonly onNoteError?: (err: Error, action: AuditAction) => void,
  ) {}

  /**
   * Runs `change` and records what it did, in one transaction: both are stored or neither
   * (strict). `describe` gets the change's result and returns its event(s), or undefined
   * when nothing happened (an unknown id). Throws what `change` or the write throws.
   */
  change<T>(change: () => Promise<T>, describe: (result: T) => AuditEntry | AuditEntry[] | undefined): Promise<T> {
    return this.store.atomically(async () => {
      const result = await change();
      const entries = describe(result);
      const at = this.now();
      for (const entry of entries === undefined ? [] : Array.isArray(entries) ? entries : [entries]) await this.#append(entry, at);
      return result;
    });
  }

  /** Records one event on its own; throws when it cannot be written (strict). */
  record(entry: AuditEntry): Promise<AuditEventRecord> {
    return this.#append(entry, this.now());
  }

  /**
   * Records one event that must not fail what it records: a write that fails is reported
   * and dropped. Never rejects; the caller need not wait for it.
   */
  async note(entry: AuditEntry, at: Date = this.now()): Promise<void> {
    try {
      await this.#append(entry, at);
    } catch (err) {
      const now = this.now().getTime();
      if (now - this.#reportedAt < REPORT_EVERY_MS) return;
      this.#reportedAt = now;
      this.onNoteError?.(err as Error, entry.action);
    }
  }

  async #append(entry: AuditEntry, at: Date): Promise<AuditEventRecord> {
    const { userId, credentialKind, credentialId } = entry.actor;
    return this.store.audit.append({
      at: at.toISOString(),
      action: entry.action,
      outcome: entry.outcome ?? 'success',
      actor: { ...(userId !== undefined ? { userId } : {}), credentialKind, ...(credentialId !== undefined ? { credentialId } : {}) },
      ...(entry.target !== undefined ? { target: { type: entry.target.type, id: entry.target.id } } : {}),
      ...(entry.sourceAddress ? { sourceAddress: entry.sourceAddress } : {}),
      ...(entry.details !== undefined ? { details: entry.details } : {}),
    });
  }
}

/**
 * `result`, and whether it ended something for the first time (`before`: its revokedAt or
 * endedAt read just before, in the same transaction): revoking again changes nothing, and
 * is not recorded (even within the same millisecond).
 */
export function firstTime<T extends object>(before: string | undefined, result: T | undefined): (T & { first: boolean }) | undefined {
  return result && { ...result, first: before === undefined };
}

/** The actor of an API request: its user and credential (the key, token or grant id; never the secret). */
export function actorOf(identity: Identity): AuditActorOf {
  return {
    ...(identity.userId !== undefined ? { userId: identity.userId } : {}),
    credentialKind: identity.kind,
    ...(identity.tokenId !== undefined ? { credentialId: identity.tokenId } : {}),
  };
}

/**
 * The actor of a `trawl` command on the data directory: the operating-system account that
 * ran it (as the system reports it; whoever can write the data directory can write the
 * log, so this says who ran the command, not who is allowed to).
 */
export function cliActor(): AuditActorOf {
  return { credentialKind: 'cli', credentialId: osAccount() };
}

function osAccount(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for the uid (a container running as an arbitrary uid).
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}
