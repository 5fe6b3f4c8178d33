// `trawl sync [--config FILE] [--force] [--repo NAME ...]`: one sync pass (discover, fetch,
// index what moved, remove what is gone) with a progress display, or with --repo only the
// repositories named (fetched and indexed, without listing the connections); exit status 1
// when anything failed or was refused (a clone URL the connection may not fetch:
// repos/hosts/clone-url.ts).

import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { mergeCompoundShards, syncOnce, type SyncEvent, type SyncOptions, type SyncReport } from '../sync/sync.ts';
import { syncRefusal, syncRepos } from '../sync/repo-work.ts';
import { openStore } from '../store/open.ts';
import type { Logger } from '../runtime/logger.ts';
import { buildProgressLine, escaped, escapeControl, formatCount, jsonText, symbolsProgressLine, throttled } from './format.ts';
import type { BuildProgress } from '../index/indexer.ts';
import { findConfigFile } from './config-file.ts';
import { UsageError } from './usage.ts';

export async function syncCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      force: { type: 'boolean' },
      'data-dir': { type: 'string' },
      verbose: { type: 'boolean' },
      repo: { type: 'string', multiple: true },
    },
  });
  if (positionals.length > 0) throw new UsageError(`sync takes no arguments, got "${positionals[0]}"`);
  const configPath = configFile(values.config);
  const config = loadConfig(configPath);
  if (Object.keys(config.connections).length === 0) throw new UsageError(`${configPath} has no connections: nothing to sync`);
  const dataDir = resolveDataDir(values['data-dir']);
  const store = openStore(dataDir);
  const tty = process.stderr.isTTY === true;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const status = (line: string) => {
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
  };
  // Redrawn at most every 100 ms: a build reports every 256 files.
  const drawBuild = throttled(
    (e: { label: string; p: BuildProgress }) => status(buildProgressLine(e.label, e.p).slice(1)),
    (e) => e.p.files >= e.p.totalFiles,
  );
  const onEvent = (e: SyncEvent): void => {
    if (e.type === 'connection') {
      out(e.error ? escaped`connection ${e.name}: FAILED: ${e.error}` : escaped`connection ${e.name}: ${formatCount(e.repos ?? 0)} repositories`);
      return;
    }
    // A repository's name comes from its code host, an error from git or the host: escaped.
    if (e.type === 'repo-refused') {
      out(escaped`connection ${e.connection}: ${e.repoName}: REFUSED, skipped: ${e.error}`);
      return;
    }
    if (e.type === 'packs-progress') {
      drawBuild({ label: `compound shards of ${formatCount(e.repos)} repositor${e.repos === 1 ? 'y' : 'ies'}`, p: e.build });
      return;
    }
    const at = `[${e.index + 1}/${e.total}]`;
    const repoName = escapeControl(e.repoName);
    if (e.type === 'repo-progress') {
      if (e.build) drawBuild({ label: `${at} ${repoName}`, p: e.build });
      if (e.symbols) status(symbolsProgressLine(`${at} ${repoName}`, e.symbols).slice(1));
      return;
    }
    if (e.type === 'repo-start') {
      status(`${at} ${repoName}: ${e.stage === 'fetch' ? 'fetching' : 'indexing'}`);
      return;
    }
    if (tty) process.stderr.write('\r\x1b[K');
    const s = e.summary;
    const detail =
      e.outcome === 'failed'
        ? escaped`FAILED: ${e.error}`
        : e.outcome === 'backing-off'
          ? 'failed before; waiting to retry (--force retries now)'
          : e.outcome === 'unchanged'
            ? 'up to date'
            : s?.mode === 'delta'
              ? `indexed incrementally: ${formatCount(s.builtFiles)} changed file versions, ${s.refs.length} refs`
              : `indexed in full: ${formatCount(s?.files ?? 0)} files, ${s?.refs.length ?? 0} refs${s?.fullReason ? escaped` (${s.fullReason})` : ''}`;
    out(`${at} ${repoName}: ${detail} (${e.seconds.toFixed(1)} s)`);
  };
  // The pass's warnings (a host reached over plain http, a page URL left out of a host's
  // answer); its errors are told by the events above.
  const log: Logger = {
    info() {},
    error() {},
    warn: (fields, message) => {
      if (tty) process.stderr.write('\r\x1b[K');
      process.stderr.write(`trawl: warning: ${escapeControl(message)} ${jsonText(fields)}\n`);
    },
  };
  try {
    const named = values.repo ?? [];
    const report =
      named.length > 0
        ? await syncNamed({ config, dataDir, store, onEvent, log }, named)
        : await syncOnce({ config, dataDir, store, force: values.force === true, onEvent, log });
    if (tty) process.stderr.write('\r\x1b[K');
    const count = (o: string) => report.repos.filter((r) => r.outcome === o).length;
    const failedConnections = report.connections.filter((c) => !c.ok).length;
    out(
      `sync done: ${count('indexed')} indexed, ${count('unchanged')} up to date, ${count('failed')} failed, ` +
        `${count('refused')} refused, ${count('backing-off')} waiting to retry, ${count('deleted')} removed` +
        (failedConnections > 0 ? `; ${failedConnections} connection${failedConnections === 1 ? '' : 's'} could not be listed` : ''),
    );
    // The repositories are searchable now; the compound shards are tidied after.
    await mergeCompoundShards({ config, dataDir, store, log });
    return count('failed') > 0 || count('refused') > 0 || failedConnections > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

/**
 * The repositories named (by name, as `trawl repos` lists them), synced as the daemon syncs
 * one asked for (sync/repo-work.ts): each must be a connection's repository that can be
 * fetched, or nothing is synced.
 */
async function syncNamed(options: SyncOptions, names: readonly string[]): Promise<SyncReport> {
  const ids: number[] = [];
  for (const name of new Set(names)) {
    const record = await options.store.getRepoByName(name);
    if (record === undefined || record.state === 'deleted') throw new UsageError(escaped`no repository named ${name} (trawl repos lists them)`);
    const refusal = await syncRefusal(options, record);
    if (refusal !== undefined) throw new Error(escaped`cannot sync ${name}: ${refusal}`);
    ids.push(record.repoId);
  }
  const repos = await syncRepos(options, ids);
  return {
    connections: [],
    repos: await Promise.all(repos.map(async (r) => ({ ...r, repoName: (await options.store.getRepo(r.repoId))?.repoName ?? String(r.repoId) }))),
  };
}

/** --config, else $TRAWL_CONFIG, else ./trawl.json (config-file.ts); sync needs one. */
export function configFile(flag: string | undefined): string {
  const path = findConfigFile(flag);
  if (path === undefined) throw new UsageError('no configuration: pass --config FILE (or set TRAWL_CONFIG, or create ./trawl.json)');
  return path;
}
