// The node-to-node endpoints (http/server.ts INTERNAL_PREFIX; peer-auth.ts checks the
// caller) besides the link that carries searches (GET /_cluster/link: link-frames.ts):
//
//   GET  /_cluster/file?repo=&name=  a file the node's current index names (or retired
//                                  lately), as it is on disk
//   POST /_cluster/forward?m=&t=&k=...  an API request of a browsing route that the sending
//                                  node cannot serve (it cannot read the repository's git
//                                  source, or lacks shards of a directory's index), run here
//                                  as the caller it authenticated, not counted again against
//                                  their limit; answers 200 with the route's answer inside.
//                                  Wire: forward.ts; served by http/forward-endpoint.ts (it
//                                  runs the API's routes, a floor above this one)

import { closeSync, createReadStream } from 'node:fs';
import { join } from 'node:path';
import { openRegularFile, type RegularFile } from '../bounded-read.ts';
import { ServiceError } from '../errors.ts';
import type { InternalRoute } from './internal-route.ts';
import { shardsDir } from '../index/data-dir.ts';
import { fileGeneration, loadManifest, namedPaths, PACK_NAME, PACK_SYMBOLS_NAME } from '../index/manifest.ts';

export const FILE_PATH = '/_cluster/file';

export function peerRoutes(dataDir: string): InternalRoute[] {
  return [
    {
      method: 'GET',
      path: FILE_PATH,
      async handle({ query, reply, signal }) {
        const q = new URLSearchParams(query);
        const repoId = Number(q.get('repo'));
        const name = q.get('name') ?? '';
        const packed = PACK_NAME.test(name) || PACK_SYMBOLS_NAME.test(name);
        if (!Number.isSafeInteger(repoId) || repoId <= 0 || (!packed && fileGeneration(name) === undefined))
          throw new ServiceError('INVALID_REQUEST_BODY', 'repo must be a repository id and name an index file name');
        const m = loadManifest(dataDir, repoId);
        // A file the repository's manifest names (a compound shard in the packs directory), or one it retired.
        let path: string | undefined;
        if (m && !('unreadable' in m))
          path =
            namedPaths(dataDir, m).find((f) => f.file === name)?.path ??
            (!packed && m.retired.some((r) => r.file === name) ? join(shardsDir(dataDir, repoId), name) : undefined);
        let file: RegularFile | undefined;
        try {
          // A regular file only, and no more of it than its size at the open: what stands at
          // the path may be anything (a FIFO would hold a thread, a device send without end).
          if (path !== undefined) file = openRegularFile(path);
        } catch {
          // missing or not a regular file: another node serves it
        }
        if (file === undefined) throw new ServiceError('NOT_FOUND', `this node holds no file ${name} of repository ${repoId}`);
        const { fd, size } = file;
        reply.begin(200, [
          ['Content-Type', 'application/octet-stream'],
          // The copier checks it got the whole file (the body is sent in chunks).
          ['X-Trawl-Size', String(size)],
        ]);
        if (size === 0) {
          closeSync(fd);
          reply.end();
          return;
        }
        const stream = createReadStream('', { fd, start: 0, end: size - 1, highWaterMark: 1 << 20, signal });
        try {
          for await (const chunk of stream) await reply.write(chunk as Buffer);
          reply.end();
        } catch (err) {
          reply.close();
          if (!signal.aborted) throw err;
        }
      },
    },
  ];
}
