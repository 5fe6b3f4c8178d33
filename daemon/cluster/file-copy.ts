// Copying one index file from another node (GET /_cluster/file, peer-routes.ts): the
// replicator's copies of the shards placed on this node, and a pack job's sources. File
// names are unique in the cluster (published.ts), so a file of that name on any node is
// that file. The copy is written under a temporary name of this process's (removed when
// it was left behind: runtime/left-behind.ts) and renamed into place whole.

import { randomBytes } from 'node:crypto';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { PeerClient } from './peer-client.ts';
import { FILE_PATH } from './peer-routes.ts';

/** What to copy: repository `repoId`'s file `name` from the node at `url` to `path`. */
interface IndexFileCopy {
  url: string;
  repoId: number;
  name: string;
  path: string;
  timeoutMs: number;
}

/** Copies one index file from another node; the bytes copied. */
export async function copyIndexFile(peers: PeerClient, { url, repoId, name, path, timeoutMs }: IndexFileCopy): Promise<number> {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const res = await peers.send(url, { method: 'GET', target: `${FILE_PATH}?repo=${repoId}&name=${encodeURIComponent(name)}`, timeoutMs });
    const size = Number(res.headers['x-trawl-size']);
    const out = createWriteStream(temp, { flags: 'wx' });
    let got = 0;
    res.on('data', (b: Buffer) => (got += b.length));
    await pipeline(res, out);
    if (!Number.isSafeInteger(size) || got !== size) throw new Error(`got ${got} bytes of ${name}, expected ${size}`);
    renameSync(temp, path);
    return got;
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
