// Data directories written before the embedded store kept their repository ids in
// `<dataDir>/repos.json` ({nextId, repos: [{id, name}]}); their shard directories are named
// by those ids. The first open of the store imports them with the same ids and raises the
// id sequence past nextId, so no new repository can take an id an old index already uses;
// the file is then renamed to repos.json.imported.

import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { readBoundedText } from '../bounded-read.ts';
import type BetterSqlite3 from 'better-sqlite3';
import { displayName } from '../repos/web-urls.ts';

/** The largest registry read: some 60 bytes a repository, so a million of them. */
const REGISTRY_MAX_BYTES = 64 * 1024 * 1024;

interface Registry {
  nextId: number;
  repos: Array<{ id: number; name: string }>;
}

export function importLegacyRegistry(db: BetterSqlite3.Database, dataDir: string): void {
  const path = join(dataDir, 'repos.json');
  if (!existsSync(path)) return;
  let registry: Registry;
  try {
    registry = JSON.parse(readBoundedText(path, REGISTRY_MAX_BYTES)) as Registry;
  } catch (err) {
    throw new Error(`${path}: cannot read the old repository registry (${(err as Error).message}); fix or remove it`);
  }
  const insert = db.prepare(
    `INSERT OR IGNORE INTO repos (repo_id, repo_name, display_name, code_host_type, is_fork, is_archived, visibility, state)
     VALUES (?, ?, ?, 'genericGitHost', 0, 0, 'public', 'indexed')`,
  );
  db.transaction(() => {
    for (const r of registry.repos) insert.run(r.id, r.name, displayName(r.name));
    const high = Math.max(registry.nextId - 1, ...registry.repos.map((r) => r.id), 0);
    const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'repos'").pluck().get() as number | undefined;
    if (seq === undefined) db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('repos', ?)").run(high);
    else if (seq < high) db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'repos'").run(high);
  }).immediate();
  renameSync(path, `${path}.imported`);
}
