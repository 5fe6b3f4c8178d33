// A daemon logger that keeps every line, serialized, so that tests can grep the log
// output for secrets that must never appear in it.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HttpLogger } from '../../daemon/http/logging.ts';

export function logRecorder(): HttpLogger & { text: () => string } {
  const lines: string[] = [];
  const make = (base: Record<string, unknown>): HttpLogger => ({
    info: (f, msg) => lines.push(JSON.stringify({ ...base, ...f, msg })),
    warn: (f, msg) => lines.push(JSON.stringify({ ...base, ...f, msg })),
    error: (f, msg) => lines.push(JSON.stringify({ ...base, ...f, msg })),
    child: (f) => make({ ...base, ...f }),
  });
  return Object.assign(make({}), { text: () => lines.join('\n') });
}

/** The database file and its write-ahead log as one string, for the same grep. */
export function databaseText(dataDir: string): string {
  return ['trawl.db', 'trawl.db-wal']
    .map((f) => join(dataDir, f))
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString('latin1'))
    .join('');
}
