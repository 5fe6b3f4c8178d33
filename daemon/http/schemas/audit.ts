// JSON Schemas of the audit log's endpoint, GET /api/ee/audit (handlers/audit.ts; the
// vocabulary is audit/events.ts, the fields docs/audit-log.md).

import { ACTION_NAMES, CREDENTIAL_KINDS, TARGET_TYPES } from '../../audit/events.ts';
import { ref, type JsonSchema } from './common.ts';

const iso = { type: 'string', format: 'date-time' };
const dateParam = (what: string) => ({
  type: 'string',
  maxLength: 64,
  description: `${what}, inclusive: an ISO 8601 date or date-time (a date alone is the start of that day; no zone is UTC), or "N <unit>s ago" (second, minute, hour, day, week, month, year), "yesterday", "last week", "last month", "last year".`,
});
const orNull = (schema: Record<string, unknown>) => ({ ...schema, type: [schema.type as string, 'null'] });

export const auditSchemas: Record<string, JsonSchema> = {
  AuditQuery: {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
      perPage: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
      actor: {
        type: 'string',
        minLength: 1,
        maxLength: 320,
        description:
          'Events whose actor is this user (an email or a user id) or acted with this credential (its id: key_..., sat_..., ogr_..., oac_..., or the operating-system account of a `trawl` command).',
      },
      action: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        pattern: '^[a-z_]+(\\.[a-z_]*)?$',
        description: 'One action (`api_key.revoked`), or every action that starts with a name ending in "." (`api_key.`).',
      },
      target: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description: "Events about this target (its id: a key's, token's, grant's, client's, user's or license's).",
      },
      since: dateParam('Events at or after'),
      until: dateParam('Events at or before'),
    },
    additionalProperties: false,
  },
  AuditEvent: {
    type: 'object',
    description: 'One event of the audit log; never a secret: credentials are named by their ids.',
    properties: {
      id: { type: 'integer', minimum: 1, description: 'Increasing, never reused.' },
      at: iso,
      action: { enum: ACTION_NAMES },
      outcome: { enum: ['success', 'failure'] },
      actor: {
        type: 'object',
        properties: {
          userId: { type: ['string', 'null'] },
          email: { type: ['string', 'null'], description: "The user's email now (null without a user)." },
          credentialKind: { enum: [...CREDENTIAL_KINDS] },
          credentialId: {
            type: ['string', 'null'],
            description: "The credential's id (never the credential), or the operating-system account of a `trawl` command.",
          },
        },
        required: ['userId', 'email', 'credentialKind', 'credentialId'],
        additionalProperties: false,
      },
      target: {
        type: ['object', 'null'],
        properties: { type: { enum: [...TARGET_TYPES] }, id: { type: 'string' } },
        required: ['type', 'id'],
        additionalProperties: false,
      },
      sourceAddress: orNull({
        type: 'string',
        description: "The client's address as the daemon saw it (X-Forwarded-For from trusted proxies only); null for `trawl` commands.",
      }),
      details: {
        type: ['object', 'null'],
        description: 'Facts of the event (docs/audit-log.md): names, counts, repository ids, the reason of a revocation, the error code of a refusal.',
      },
    },
    required: ['id', 'at', 'action', 'outcome', 'actor', 'target', 'sourceAddress', 'details'],
    additionalProperties: false,
  },
  AuditEventsResponse: { type: 'array', items: ref('AuditEvent') },
};
