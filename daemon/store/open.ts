// The store a data directory uses. Only SQLite exists today; a server backend would be
// chosen here (by configuration) and would run the same conformance suite.

import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from './store.ts';
import { importLegacyRegistry } from './legacy-registry.ts';
import { openSqliteDatabase, openSqliteStore } from './sqlite-store.ts';

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
