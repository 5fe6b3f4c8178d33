// A node's id when `--node-id` is not given: made once from the host name and a random
// suffix, and kept in the data dir (node-id), so that a node restarted on the same data dir
// is the same node to the others (its shards are where placement expects them).

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { readBoundedText } from '../bounded-read.ts';
import { writeFileAtomic } from '../index/data-dir.ts';
import { NODE_ID } from './membership.ts';

export const NODE_ID_FILE = 'node-id';
/** The largest node-id file read: it holds one short name. */
const NODE_ID_MAX_BYTES = 4096;

export function nodeIdOf(dataDir: string): string {
  const path = join(dataDir, NODE_ID_FILE);
  if (existsSync(path)) {
    const id = readBoundedText(path, NODE_ID_MAX_BYTES).trim();
    if (!NODE_ID.test(id)) throw new Error(`${path} does not hold a node id (letters, digits, ".", "_", "-"); remove it or pass --node-id`);
    return id;
  }
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 48) || 'node';
  const id = `${host}-${randomBytes(3).toString('hex')}`;
  writeFileAtomic(path, `${id}\n`);
  return id;
}
