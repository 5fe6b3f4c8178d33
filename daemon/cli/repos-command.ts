// `trawl repos [--json] [--all]`: the repositories the store knows and their state, and
// whether their index is damaged (index-health.ts: read from the data dir, so a damage
// any process found shows here; --json adds `indexDamage`, the reason), and whether their
// symbols are still being added to a searchable content (`symbolsPending` in --json).

import { parseArgs } from 'node:util';
import { resolveDataDir } from '../index/data-dir.ts';
import { readIndexState } from '../index/index-health.ts';
import { symbolsPending } from '../index/manifest.ts';
import { openStore } from '../store/open.ts';
import type { RepoRecord } from '../store/store.ts';
import { UsageError } from './usage.ts';
import { escapeControl, formatTable, jsonText } from './format.ts';
import { eventLagSeconds } from '../sync/repo-queue.ts';

export async function reposCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, all: { type: 'boolean' }, 'data-dir': { type: 'string' }, verbose: { type: 'boolean' } },
  });
  if (positionals.length > 0) throw new UsageError(`repos takes no arguments, got "${positionals[0]}"`);
  const repos = await listRepos(resolveDataDir(values['data-dir']), values.all === true);
  if (values.json) {
    process.stdout.write(`${jsonText(repos, 2)}\n`);
    return 0;
  }
  if (repos.length === 0) {
    process.stdout.write('no repositories (trawl index PATH, or trawl sync --config FILE)\n');
    return 0;
  }
  // A repository's name comes from its code host or its directory, its error from git: escaped.
  const rows = repos.map((r) => row(r).map(escapeControl));
  const now = Date.now();
  const rows2 = rows.map((cells, i) => [...cells.slice(0, 5), eventCell(repos[i]!, now), cells[5]!]);
  const head = ['ID', 'REPOSITORY', 'STATE', 'REFS', 'INDEXED', 'LAST EVENT', 'LAST ERROR'];
  for (const line of formatTable(head, rows2)) process.stdout.write(`${line}\n`);
  return 0;
}

export type Listed = RepoRecord & { indexDamage?: string; symbolsPending?: true };

/** The store's repositories with the damage any process found in their index (what --json prints). */
export async function listRepos(dataDir: string, includeDeleted: boolean): Promise<Listed[]> {
  const store = openStore(dataDir);
  try {
    const index = readIndexState(dataDir);
    const damage = new Map(index.broken.map((b) => [b.repoId, b.reason]));
    const pending = new Set(index.manifests.filter(symbolsPending).map((m) => m.repoId));
    return (await store.listRepos({ includeDeleted })).map((r) => {
      const reason = r.state === 'deleted' ? undefined : damage.get(r.repoId);
      const out: Listed = reason === undefined ? r : { ...r, indexDamage: reason };
      return r.state !== 'deleted' && pending.has(r.repoId) ? { ...out, symbolsPending: true } : out;
    });
  } finally {
    await store.close();
  }
}

/** The last event that asked for the repository's sync: how long it took to be searchable, or how long it has waited. */
function eventCell(r: Listed, now: number): string {
  if (r.lastEventAt === undefined) return '-';
  const lag = eventLagSeconds(r.lastEventAt, r.lastEventSyncedAt, now);
  if (lag === undefined) return '-';
  return r.lastEventSyncedAt === undefined ? `waiting ${lag.toFixed(1)} s` : `searchable in ${lag.toFixed(1)} s`;
}

function row(r: Listed): string[] {
  let error = r.lastError ? `${r.lastError}${r.nextAttemptAt ? ` (retry after ${r.nextAttemptAt})` : ''}` : '';
  let state = r.state === 'failed' && r.indexedAt ? 'failed (serving last index)' : r.symbolsPending ? `${r.state} (symbols pending)` : r.state;
  if (r.indexDamage !== undefined) {
    state = 'damaged (not served)';
    error = `index damaged: ${r.indexDamage}; rebuilt by the next sync or trawl index${error ? `; ${error}` : ''}`;
  }
  return [String(r.repoId), r.repoName, state, String(r.indexedRefs.length), r.indexedAt ?? '-', error];
}
