// `trawl audit` (docs/audit-log.md): the audit log of the data dir's store, newest first,
// with the filters of GET /api/ee/audit (audit/query.ts). The operator's view on the data
// directory: no license or owner's key needed (whoever can read the data dir reads the
// store anyway).

import { parseArgs } from 'node:util';
import { auditEventJson, auditQuery } from '../audit/query.ts';
import { ServiceError } from '../errors.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { openStore } from '../store/open.ts';
import type { AuditEventRecord } from '../store/store.ts';
import { escapeControl, jsonText } from './format.ts';
import { UsageError } from './usage.ts';

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), now: () => new Date() };

export const AUDIT_HELP = `usage: trawl audit [--actor WHO] [--action ACTION] [--target ID] [--since DATE] [--until DATE]
                   [--limit N] [--json]

The audit log: who created, used or revoked which credential, and changed which user or
license, from where; newest first. One line per event: time, action (and "FAILURE" when
refused), actor (email or account, credential kind and id), target, client address,
details. Failed authentications are one event per address and credential kind per minute,
with the count. Events older than settings.audit.retentionDays (180) are pruned by the
daemon.

  --actor WHO       a user's email or id, or a credential's id (key_..., sat_..., ogr_...,
                    oac_...), or the operating-system account of a trawl command
  --action ACTION   one action (api_key.revoked), or all that start with a name ending in
                    "." (api_key.); docs/audit-log.md lists them
  --target ID       events about this key, token, grant, client, user or license
  --since DATE      at or after: ISO 8601 (2026-05-01, 2026-05-01T12:00:00Z) or
                    "N <unit>s ago", "yesterday", "last week|month|year"
  --until DATE      at or before, likewise
  --limit N         at most N events, the newest (default 50, at most 10000)
  --json            one JSON array, the events as GET /api/ee/audit gives them
  --data-dir DIR    data directory`;

const MAX_LIMIT = 10_000;

export async function auditCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      actor: { type: 'string' },
      action: { type: 'string' },
      target: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      'data-dir': { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length > 0)
    throw new UsageError(`audit takes no arguments, got "${positionals[0]}" (filters are --actor, --action, --target, --since, --until)`);
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}, got "${values.limit}"`);
  const store = openStore(resolveDataDir(values['data-dir']));
  try {
    let query;
    try {
      query = await auditQuery(store, values, io.now().getTime(), { offset: 0, limit });
    } catch (err) {
      // The API's 400 is a usage error here: "--since must be ...".
      if (err instanceof ServiceError) throw new UsageError(`--${err.message}`);
      throw err;
    }
    const { events, total } = await store.audit.list(query);
    const emails = new Map((await store.listUsers()).map((u) => [u.id, u.email]));
    if (values.json) {
      io.out(jsonText(events.map((e) => auditEventJson(e, (id) => emails.get(id)))));
      return 0;
    }
    if (events.length === 0) io.out('no audit events');
    for (const e of events) io.out(line(e, emails));
    if (total > events.length) io.err(`trawl: the newest ${events.length} of ${total} events; --limit, --since and --until show others`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * One event on one line: time, action, actor, target, address, details. Every field is
 * shown escaped: an id, a name or an email that came with a request is data, and a newline
 * in it must not print as a line of its own that reads like another event.
 */
function line(e: AuditEventRecord, emails: Map<string, string>): string {
  const who = e.actor.userId !== undefined ? (emails.get(e.actor.userId) ?? e.actor.userId) : undefined;
  const actor = [who, e.actor.credentialKind, e.actor.credentialId].filter((p) => p !== undefined).join(' ');
  const parts = [e.at, e.outcome === 'failure' ? `${e.action} FAILURE` : e.action, `by ${actor}`];
  if (e.target) parts.push(`on ${e.target.type} ${e.target.id}`);
  if (e.sourceAddress) parts.push(`from ${e.sourceAddress}`);
  if (e.details) parts.push(JSON.stringify(e.details));
  return parts.map(escapeControl).join('  ');
}
