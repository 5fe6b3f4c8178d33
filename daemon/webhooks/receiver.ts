// A code host's webhook delivery, from the bytes received to what it asks of the sync:
//
// 1. The connections whose deliveries come to this host's route and have a webhookSecret
//    whose variable is set: none, 404 (this host's webhooks are not received here).
// 2. The signature (or secret) checked against each one's secret (verify.ts), before
//    anything is parsed: none verifies, 401. The one that verifies is the connection the
//    delivery is for.
// 3. The body read (payloads.ts): not what the host sends, 400.
// 4. A delivery already taken (its id, or its body's digest where the host gives no id,
//    within the window of seen-deliveries.ts) is answered 200 `replayed` and not acted on.
// 5. On a daemon that syncs nothing (one without connections, or with its sync turned
//    off), 503. A push (branches or tags moved) queues a sync of each repository it names that the
//    connection lists (sync/repo-queue.ts; in a cluster, cluster/asked-syncs.ts): 202 `queued`; one the connection does not list
//    (excluded, or too new to be listed) is left alone: 200 `ignored`. A repository
//    created, renamed, moved or deleted asks for a listing of the connections, which is
//    what decides such things: 202 `listing`. Anything else: 200 `ignored`.
//
// Refusals (1, 2) touch nothing and are counted for the audit log per client address and
// reason (audit/auth-failures.ts); they never say which connections exist.

import { createHash } from 'node:crypto';
import type { Config, Connection } from '../config/types.ts';
import { ServiceError } from '../errors.ts';
import { hostPrefix } from '../repos/hosts/http.ts';
import { silentLogger, type Logger } from '../runtime/logger.ts';
import type { Store } from '../store/store.ts';
import type { RepoSyncResult } from '../sync/repo-work.ts';
import { receivesFrom, type WebhookHost } from './hosts.ts';
import { MalformedDelivery, readEvent, type HostEvent } from './payloads.ts';
import type { SeenDeliveries } from './seen-deliveries.ts';
import { verified, type Received } from './verify.ts';

export type WebhookOutcome = 'queued' | 'listing' | 'ignored' | 'replayed' | 'ping';

/** The answer to a delivery that verified. */
export interface WebhookAnswer {
  status: 200 | 202;
  body: {
    outcome: WebhookOutcome;
    /** The host's name of the event. */
    event: string;
    /** Repositories whose sync was queued (their trawl names). */
    repositories?: string[];
    /** Repositories the delivery named that its connection does not list (left alone). */
    unknown?: string[];
  };
}

/** What a delivery may ask of the sync. */
export interface Syncing {
  /** Queues a repository's sync (its promise settles when the sync has ended, and never rejects). */
  request(repoId: number): Promise<RepoSyncResult>;
  /** Asks for a listing of the connections (the next sync pass, or one right after the running pass). */
  listing(): void;
}

/** Why a delivery was refused, for the audit log. */
export type Refusal = 'unknown' | 'unverified';

export interface ReceiverDeps {
  config: Config;
  store: Pick<Store, 'getRepoByName' | 'listConnections'>;
  /** The sync this daemon runs; undefined where it syncs nothing itself (a verified delivery is then answered 503). */
  syncing(): Syncing | undefined;
  seen: SeenDeliveries;
  /** Counts a refused delivery (from `address`, '' when unknown). */
  refused(address: string, host: WebhookHost, why: Refusal): void;
  /** Told of each verified delivery's outcome, and of the push-to-searchable time of each repository it had synced. */
  observe?: { delivery(host: WebhookHost, outcome: WebhookOutcome): void; searchable(seconds: number): void };
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  now?: () => number;
}

export class WebhookReceiver {
  /** Connections whose unset secret variable was logged (once each). */
  readonly #warned = new Set<string>();

  constructor(private readonly deps: ReceiverDeps) {}

  /** Handles one delivery (steps above); throws the ServiceError of a refusal. */
  async receive(host: WebhookHost, d: Received, address: string): Promise<WebhookAnswer> {
    const { deps } = this;
    const log = deps.log ?? silentLogger;
    const received = (deps.now ?? Date.now)();
    const candidates = this.#receiving(host);
    if (candidates.length === 0) {
      deps.refused(address, host, 'unknown');
      throw new ServiceError('NOT_FOUND', `${host} webhooks are not received here: no ${host} connection has a webhookSecret (docs/configuration.md)`);
    }
    const from = candidates.find((c) => verified(host, c.secret, d));
    if (from === undefined) {
      deps.refused(address, host, 'unverified');
      throw new ServiceError('NOT_AUTHENTICATED', `the ${host} delivery's signature does not verify with the webhook secret of any ${host} connection`);
    }
    let event: HostEvent;
    try {
      event = readEvent(host, d);
    } catch (err) {
      if (err instanceof MalformedDelivery) throw new ServiceError('INVALID_REQUEST_BODY', `the ${host} delivery cannot be read: ${err.message}`);
      throw err;
    }
    const syncing = deps.syncing();
    if (syncing === undefined)
      throw new ServiceError('SERVICE_UNAVAILABLE', 'this server syncs no repositories (it has no connections, or its sync is turned off)');
    const answer = await this.#act(syncing, from, event, d.body, received);
    deps.observe?.delivery(host, answer.body.outcome);
    log.info({ connection: from.name, host, event: event.event, outcome: answer.body.outcome, repositories: answer.body.repositories }, 'webhook delivery');
    return answer;
  }

  /** The connections this host's deliveries may be for, with their secrets. */
  #receiving(host: WebhookHost): Array<{ name: string; connection: Connection; secret: string }> {
    const env = this.deps.env ?? process.env;
    const out: Array<{ name: string; connection: Connection; secret: string }> = [];
    for (const [name, connection] of Object.entries(this.deps.config.connections)) {
      if (!receivesFrom(host, connection)) continue;
      const secret = env[connection.webhookSecret.env];
      // An unset variable receives nothing: an empty secret would verify anyone's HMAC.
      if (secret === undefined || secret === '') {
        if (this.#warned.has(name)) continue;
        this.#warned.add(name);
        (this.deps.log ?? silentLogger).warn(
          { connection: name, variable: connection.webhookSecret.env },
          'the webhook secret variable is not set: this connection refuses its webhooks',
        );
        continue;
      }
      out.push({ name, connection, secret });
    }
    return out;
  }

  async #act(syncing: Syncing, from: { name: string; connection: Connection }, event: HostEvent, body: Buffer, received: number): Promise<WebhookAnswer> {
    const { deps } = this;
    const base = { event: event.event };
    const id = event.delivery ?? `sha256:${createHash('sha256').update(body).digest('hex')}`;
    if (!deps.seen.firstTime(`${from.name} ${id}`)) return { status: 200, body: { ...base, outcome: 'replayed' } };
    if (event.kind === 'ping') return { status: 200, body: { ...base, outcome: 'ping' } };
    if (event.kind === 'ignored') return { status: 200, body: { ...base, outcome: 'ignored' } };
    if (event.kind === 'repository') {
      syncing.listing();
      return { status: 202, body: { ...base, outcome: 'listing' } };
    }
    // A host's repositories are named after its URL; a git server's notice names them as trawl does.
    const prefix = from.connection.type === 'git' ? '' : `${hostPrefix(from.connection.url)}/`;
    const connectionId = (await deps.store.listConnections()).find((c) => c.name === from.name)?.id;
    const queued: string[] = [];
    const unknown: string[] = [];
    for (const path of new Set(event.paths)) {
      const name = `${prefix}${path}`;
      const record = await deps.store.getRepoByName(name);
      if (record === undefined || record.state === 'deleted' || connectionId === undefined || record.connectionId !== connectionId) {
        unknown.push(name);
        continue;
      }
      queued.push(name);
      void syncing.request(record.repoId).then((r) => {
        if (r.outcome === 'indexed') deps.observe?.searchable(((deps.now ?? Date.now)() - received) / 1000);
      });
    }
    if (queued.length === 0) return { status: 200, body: { ...base, outcome: 'ignored', unknown } };
    return { status: 202, body: { ...base, outcome: 'queued', repositories: queued, ...(unknown.length > 0 ? { unknown } : {}) } };
  }
}
