// The sync of one repository the store knows, asked for by name or id (a code host's
// webhook, POST /api/repos/{id}/sync, `trawl sync --repo`) rather than found by a listing:
// its Work is made from its record, which holds what the last listing of its connection
// said of it, and its connection as configured now.

import type { Connection } from '../config/types.ts';
import type { ConnectionRecord, RepoRecord } from '../store/store.ts';
import { createCodeHost } from '../repos/hosts/index.ts';
import type { HostRepo } from '../repos/hosts/types.ts';
import { silentLogger } from '../runtime/logger.ts';
import { syncWork, type RepoJob, type RepoOutcome, type SyncOptions, type Work } from './sync.ts';

/** How a repository's sync ended (sync.ts SyncReport), or why it could not start. */
export interface RepoSyncResult {
  repoId: number;
  outcome: RepoOutcome;
  error?: string;
  seconds: number;
}

/** Why a repository cannot be synced alone: its message says what to do instead. */
export class NotSyncable extends Error {
  override readonly name = 'NotSyncable';
}

/**
 * The Work of `record`'s sync. NotSyncable when it is not a connection's repository (made
 * by `trawl index PATH`: that command indexes it again), when its connection is no longer
 * configured, or when the listing refused its clone URL (the record then keeps none).
 */
export async function repoWork(options: Pick<SyncOptions, 'config' | 'store' | 'log' | 'hostOptions'>, record: RepoRecord): Promise<Work> {
  const found = await connectionOf(options, record);
  if (typeof found === 'string') throw new NotSyncable(found);
  const { conn, connection } = found;
  if (record.cloneUrl === undefined) throw new NotSyncable(unfetchable(record));
  const host = createCodeHost(conn.name, connection, { log: options.log ?? silentLogger, ...options.hostOptions });
  return { record, host, hostRepo: hostRepoOf(record, record.cloneUrl, connection.type === 'git'), connection, connectionName: conn.name };
}

/**
 * The job of `record`'s sync in a cluster (sync.ts RepoJob: plain data, run by whichever
 * node takes it), made as repoWork makes its Work; tried even when the repository backs
 * off (it was asked for). NotSyncable as repoWork.
 */
export async function repoJob(options: Pick<SyncOptions, 'config' | 'store'>, record: RepoRecord): Promise<RepoJob> {
  const found = await connectionOf(options, record);
  if (typeof found === 'string') throw new NotSyncable(found);
  if (record.cloneUrl === undefined) throw new NotSyncable(unfetchable(record));
  const hostRepo = hostRepoOf(record, record.cloneUrl, found.connection.type === 'git');
  return { repoId: record.repoId, connection: found.conn.name, hostRepo, force: true };
}

/** Why `record` cannot be synced alone (repoWork), or undefined when it can. */
export async function syncRefusal(options: Pick<SyncOptions, 'config' | 'store'>, record: RepoRecord): Promise<string | undefined> {
  const found = await connectionOf(options, record);
  if (typeof found === 'string') return found;
  return record.cloneUrl === undefined ? unfetchable(record) : undefined;
}

/** Why a repository the listing refused (its record keeps no clone URL) is not fetched. */
function unfetchable(record: RepoRecord): string {
  return `${record.repoName} cannot be fetched: ${record.lastError ?? 'its connection refused its clone URL'}`;
}

/** The connection `record` was listed by, as configured now; or why there is none. */
async function connectionOf(
  options: Pick<SyncOptions, 'config' | 'store'>,
  record: RepoRecord,
): Promise<{ conn: ConnectionRecord; connection: Connection } | string> {
  if (record.state === 'deleted') return `${record.repoName} was removed: its connection no longer lists it`;
  if (record.connectionId === undefined) return `${record.repoName} was indexed from a path, not listed by a connection: run trawl index on it again`;
  const conn = (await options.store.listConnections()).find((c) => c.id === record.connectionId);
  const connection = conn === undefined ? undefined : options.config.connections[conn.name];
  if (conn === undefined || connection === undefined) return `${record.repoName}'s connection is no longer configured: the next sync pass removes it`;
  return { conn, connection };
}

/**
 * What the last listing said of the repository, as its record keeps it; but a `git`
 * connection's repository takes its default branch from the repository itself (its HEAD,
 * read by the fetch), as its listing does: the record's is only the one last indexed.
 */
function hostRepoOf(r: RepoRecord, cloneUrl: string, headDecides: boolean): HostRepo {
  return {
    repoName: r.repoName,
    displayName: r.displayName,
    codeHostType: r.codeHostType,
    cloneUrl,
    ...(r.externalWebUrl !== undefined ? { externalWebUrl: r.externalWebUrl } : {}),
    ...(r.defaultBranch !== undefined && !headDecides ? { defaultBranch: r.defaultBranch } : {}),
    isFork: r.isFork,
    isArchived: r.isArchived,
    visibility: r.visibility,
    ...(r.pushedAt !== undefined ? { pushedAt: r.pushedAt } : {}),
    ...(r.imageUrl !== undefined ? { imageUrl: r.imageUrl } : {}),
    topics: r.topics,
  };
}

/**
 * Syncs the repositories `repoIds` name as one batch (sync.ts syncWork), each one's result;
 * one that cannot be synced alone (NotSyncable) or is unknown fails with the reason. A
 * repository backing off after failures is tried anyway: it was asked for, most often
 * because its host says it changed.
 */
export async function syncRepos(options: SyncOptions, repoIds: readonly number[]): Promise<RepoSyncResult[]> {
  const results: RepoSyncResult[] = [];
  const work: Work[] = [];
  for (const repoId of repoIds) {
    const record = await options.store.getRepo(repoId);
    if (record === undefined) {
      results.push({ repoId, outcome: 'failed', error: `no repository with id ${repoId}`, seconds: 0 });
      continue;
    }
    try {
      work.push(await repoWork(options, record));
    } catch (err) {
      if (!(err instanceof NotSyncable)) throw err;
      results.push({ repoId, outcome: 'failed', error: err.message, seconds: 0 });
    }
  }
  for (const r of await syncWork({ ...options, force: true }, work)) {
    results.push({ repoId: r.repoId, outcome: r.outcome, ...(r.error !== undefined ? { error: r.error } : {}), seconds: r.seconds });
  }
  return results;
}
