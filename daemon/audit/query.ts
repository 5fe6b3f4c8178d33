// Reading the audit log, the same way for GET /api/ee/audit and `trawl audit`: the filters
// as given (an actor's email, a user or credential id, an action or a prefix of one, date
// bounds) made into the store's query, and an event as the JSON both answer with.

import { ServiceError } from '../errors.ts';
import { parseHistoryDate } from '../repos/history-dates.ts';
import type { AuditEventRecord, AuditQuery, IdentityStore } from '../store/store.ts';
import { isActionFilter } from './events.ts';

export interface AuditFilters {
  /** A user's email, a user id, or a credential id (key_..., sat_..., ogr_..., oac_..., an OS account of the CLI). */
  actor?: string;
  /** An action ("api_key.revoked") or the start of some ending in "." ("api_key."). */
  action?: string;
  /** A target's id. */
  target?: string;
  /** Dates as history's since/until take them (ISO 8601, "7 days ago", ...), both inclusive. */
  since?: string;
  until?: string;
}

/**
 * The store query of `filters` for the page at `offset` of `limit` events; `now` (epoch
 * ms) is what relative dates count back from. Throws 400 INVALID_QUERY_PARAMS naming the
 * filter that is wrong: an action no event has, an email of no user, a date it cannot read.
 */
export async function auditQuery(
  store: Pick<IdentityStore, 'getUserByEmail'>,
  filters: AuditFilters,
  now: number,
  page: { offset: number; limit: number },
): Promise<AuditQuery> {
  const query: AuditQuery = { offset: page.offset, limit: page.limit };
  if (filters.actor !== undefined) {
    const actor = filters.actor.trim();
    if (actor.includes('@')) {
      const user = await store.getUserByEmail(actor);
      if (!user) throw new ServiceError('INVALID_QUERY_PARAMS', `actor: no user has the email ${actor.slice(0, 320)}`);
      query.actor = user.id;
    } else {
      query.actor = actor;
    }
  }
  if (filters.action !== undefined) {
    if (!isActionFilter(filters.action)) {
      throw new ServiceError(
        'INVALID_QUERY_PARAMS',
        `action: "${filters.action.slice(0, 64)}" is not an audited action or the start of one ending in "." (docs/audit-log.md lists them; e.g. api_key.revoked, or api_key. for all API key events)`,
      );
    }
    query.action = filters.action;
  }
  if (filters.target !== undefined) query.target = filters.target.trim();
  if (filters.since !== undefined) query.since = new Date(parseHistoryDate(filters.since, 'since', now)).toISOString();
  if (filters.until !== undefined) query.until = new Date(parseHistoryDate(filters.until, 'until', now)).toISOString();
  return query;
}

/** An event as the API and `trawl audit --json` give it: absent fields as null, the actor's email beside their id. */
export function auditEventJson(event: AuditEventRecord, emailOf: (userId: string) => string | undefined): Record<string, unknown> {
  const userId = event.actor.userId;
  return {
    id: event.id,
    at: event.at,
    action: event.action,
    outcome: event.outcome,
    actor: {
      userId: userId ?? null,
      email: (userId !== undefined ? emailOf(userId) : undefined) ?? null,
      credentialKind: event.actor.credentialKind,
      credentialId: event.actor.credentialId ?? null,
    },
    target: event.target ?? null,
    sourceAddress: event.sourceAddress ?? null,
    details: event.details ?? null,
  };
}
