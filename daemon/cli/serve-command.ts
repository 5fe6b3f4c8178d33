// `trawl serve [--config FILE] [--host H] [--port N] [--node-id ID] [--advertise URL]`:
// runs the daemon until SIGTERM or SIGINT, then stops gracefully (docs/command-line.md).
// Logs are JSON lines on stdout (pino); the address it listens on is also printed, as one
// plain line on stderr.
//
// Zero configuration (`npm start`): no --config, $TRAWL_CONFIG or ./trawl.json means the
// built-in defaults with anonymous access on; and when the data dir holds no repository,
// the git repository (or directory) it is started in is indexed first, so that the first
// search finds something.

import { parseArgs } from 'node:util';
import { defaultConfig, loadConfig } from '../config/load.ts';
import type { Config } from '../config/types.ts';
import { resolveDataDir } from '../index/data-dir.ts';
import { readAllManifests } from '../index/manifest.ts';
import { startDaemon } from '../daemon.ts';
import { createLogger, type LogLevel } from '../http/logging.ts';
import { indexLocal } from '../sync/local-repos.ts';
import { findConfigFile } from './config-file.ts';
import { UsageError } from './usage.ts';
import { NODE_ID } from '../cluster/membership.ts';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'log-level': { type: 'string' },
      workers: { type: 'string' },
      'data-dir': { type: 'string' },
      'node-id': { type: 'string' },
      advertise: { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got "${positionals[0]}"`);
  const portText = values.port ?? process.env.TRAWL_PORT ?? '3000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer between 0 and 65535, got "${portText}"`);
  const level = (values['log-level'] ?? process.env.TRAWL_LOG_LEVEL ?? 'info') as LogLevel;
  if (!LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}, got "${level}"`);
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1 || workers > 256))
    throw new UsageError(`--workers must be an integer between 1 and 256, got "${values.workers}"`);
  const host = values.host ?? '127.0.0.1';
  const nodeId = values['node-id'];
  if (nodeId !== undefined && !NODE_ID.test(nodeId))
    throw new UsageError(`--node-id must be a letter or digit followed by up to 63 letters, digits, ".", "_" or "-", got "${nodeId}"`);
  const advertise = values.advertise;
  if (advertise !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(advertise))
    throw new UsageError(`--advertise must be a base URL like http://10.0.0.5:3000, got "${advertise}"`);
  const logger = createLogger(level);
  const dataDir = resolveDataDir(values['data-dir']);

  const configPath = findConfigFile(values.config);
  let config: Config;
  if (configPath !== undefined) {
    config = loadConfig(configPath);
  } else {
    config = defaultConfig();
    config.settings.anonymousAccess = true;
    logger.warn({}, 'no configuration file (--config, $TRAWL_CONFIG or ./trawl.json): built-in defaults, anonymous access ON');
  }
  if ((nodeId !== undefined || advertise !== undefined) && !config.cluster)
    throw new UsageError('--node-id and --advertise are for a cluster: the configuration has no cluster section (docs/deployment.md)');
  if (!config.cluster && readAllManifests(dataDir).length === 0 && Object.keys(config.connections).length === 0) {
    const here = process.cwd();
    logger.info({ path: here, dataDir }, 'the data dir is empty and no connection is configured: indexing the current directory');
    const summary = await indexLocal(here, { dataDir, symbols: config.settings.symbols, maxFileSize: config.settings.maxFileSize });
    logger.info({ repo: summary.repoName, files: summary.files }, 'indexed');
  }

  const daemon = await startDaemon({
    config,
    dataDir,
    host,
    port,
    logger,
    ...(workers ? { workers } : {}),
    ...(nodeId ? { nodeId } : {}),
    ...(advertise ? { advertise: advertise.replace(/\/$/, '') } : {}),
  });
  logger.info({ url: daemon.url, dataDir, config: config.path ?? null }, 'listening');
  process.stderr.write(`trawl: listening on ${daemon.url}\n`);

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal, graceMs: config.settings.http.shutdownTimeoutMs }, 'shutting down');
      void daemon.close().then(resolve, (err: unknown) => {
        logger.error({ err: (err as Error).message }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  logger.info({}, 'stopped');
  return 0;
}
