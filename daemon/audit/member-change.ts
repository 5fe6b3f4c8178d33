// Suspending a member, making them active again, and setting their daily request limit:
// one rule for `trawl users suspend|unsuspend|limit` (cli/users-command.ts) and for
// PATCH /api/ee/users/{id} (http/handlers/members.ts), so that both change a user the same way
// and leave the same audit events.
//
// The user is read inside the store transaction that changes it, so what the events say
// was before ("from") is what the change replaced, even when two owners act at once. An
// event is recorded only for what changed: suspending a suspended user again keeps the
// first suspendedAt and records nothing, and so does setting the limit it has.

import type { AuditLog } from './log.ts';
import type { AuditActorOf, AuditEntry } from './events.ts';
import type { Store, UserRecord } from '../store/store.ts';

export interface MemberChange {
  /** true: suspend (every credential of theirs stops working); false: active again. */
  suspended?: boolean;
  /** Requests per UTC day; null: the default limit (settings.rateLimit.requestsPerDay). */
  dailyLimit?: number | null;
}

export interface ChangedBy {
  actor: AuditActorOf;
  /** The client's address, for a change made over the API. */
  sourceAddress?: string;
  /** ISO 8601: the time of the change. */
  now: string;
}

/** Applies `change` to the user `userId` with its audit events, in one transaction; undefined when there is no such user. */
export async function changeMember(
  store: Pick<Store, 'getUser' | 'updateUser'>,
  audit: AuditLog,
  userId: string,
  change: MemberChange,
  by: ChangedBy,
): Promise<UserRecord | undefined> {
  const result = await audit.change(
    async () => {
      const before = await store.getUser(userId);
      if (!before) return undefined;
      const patch: Parameters<Store['updateUser']>[1] = {};
      if (change.suspended !== undefined && change.suspended !== (before.suspendedAt !== undefined)) patch.suspendedAt = change.suspended ? by.now : null;
      if (change.dailyLimit !== undefined && change.dailyLimit !== (before.dailyLimit ?? null)) patch.dailyLimit = change.dailyLimit;
      const after = Object.keys(patch).length === 0 ? before : await store.updateUser(userId, patch, by.now);
      return { before, after, patch };
    },
    (r) => (r ? events(r.before, r.patch, by) : undefined),
  );
  return result?.after;
}

function events(u: UserRecord, patch: Parameters<Store['updateUser']>[1], by: ChangedBy): AuditEntry[] {
  const base = { actor: by.actor, target: { type: 'user' as const, id: u.id }, ...(by.sourceAddress ? { sourceAddress: by.sourceAddress } : {}) };
  const out: AuditEntry[] = [];
  if (patch.suspendedAt !== undefined)
    out.push({ ...base, action: patch.suspendedAt === null ? 'user.unsuspended' : 'user.suspended', details: { email: u.email } });
  if (patch.dailyLimit !== undefined)
    out.push({ ...base, action: 'user.limit_changed', details: { email: u.email, from: u.dailyLimit ?? 'default', to: patch.dailyLimit ?? 'default' } });
  return out;
}
