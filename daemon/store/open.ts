// The store an installation uses: SQLite in the data directory (one node, the default), or
// PostgreSQL when the configuration has a cluster section (its `store` URL), which every
// node and every command of the cluster shares. Both run the same conformance suite.

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from './store.ts';
import { importLegacyRegistry } from './legacy-registry.ts';
import { openSqliteDatabase, openSqliteStore } from './sqlite-store.ts';
import { openPgStore } from './pg-store.ts';

/** The store's file inside the data directory. */
export const STORE_FILE = 'trawl.db';

/** Opens `<dataDir>/trawl.db`, creating the directory and the database when missing. */
export function openStore(dataDir: string): Store {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, STORE_FILE);
  if (existsSync(join(dataDir, 'repos.json'))) {
    const db = openSqliteDatabase(path);
    try {
      importLegacyRegistry(db, dataDir);
    } finally {
      db.close();
    }
  }
  return openSqliteStore(path);
}

/** The configured store: the cluster's PostgreSQL (config.cluster.store), else the data dir's SQLite. */
export function openConfiguredStore(config: { cluster?: { store: string } } | undefined, dataDir: string): Store {
  return config?.cluster ? openPgStore(config.cluster.store) : openStore(dataDir);
}
