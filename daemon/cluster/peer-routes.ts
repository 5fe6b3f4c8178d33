// The node-to-node endpoints (http/server.ts INTERNAL_PREFIX; peer-auth.ts checks the
// caller): a node's part of a fanned-out search and its control, shaping a file of a shard
// again, and a shard file for a node that copies it (replicator.ts).
//
//   POST /_cluster/search          body PeerSearchBody (msgpack); answers 200 at once, then
//                                  frames (frames.ts): the units' replies as each is done,
//                                  END when all are. A unit this node does not hold at the
//                                  asked generation is answered failed with NOT_HELD.
//   POST /_cluster/search/control  body PeerControlBody: stop a part, or search the rest of
//                                  its shards for definitions only (merge.ts)
//   POST /_cluster/reshape         body: a worker message of one file with PeerReshapeBody;
//                                  answers a worker message of the file shaped again
//   GET  /_cluster/file?repo=&name=  a file the node's current index names (or retired
//                                  lately), as it is on disk
//   POST /_cluster/forward?m=&t=&k=...  an API request of a browsing route that the sending
//                                  node cannot serve (it cannot read the repository's git
//                                  source, or lacks shards of a directory's index), run here
//                                  as the caller it authenticated, not counted again against
//                                  their limit; answers 200 with the route's answer inside.
//                                  Wire: forward.ts; served by http/forward-endpoint.ts (it
//                                  runs the API's routes, a floor above this one)

import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../errors.ts';
import type { InternalRoute } from './internal-route.ts';
import { shardsDir } from '../index/data-dir.ts';
import { fileGeneration, loadManifest, named } from '../index/manifest.ts';
import { packMessage, releaseFile, unpackMessage } from '../search/file-codec.ts';
import type { PoolRun } from '../search/pool.ts';
import type { ShardReply } from '../search/protocol.ts';
import { foreignPlanId } from '../search/plan-cache.ts';
import type { Searcher } from '../search/searcher.ts';
import { bodies, CONTROL_PATH, NOT_HELD, RESHAPE_PATH, SEARCH_PATH, type PeerControlBody, type PeerReshapeBody, type PeerSearchBody } from './fan-out.ts';
import { encodeFrame, FRAME, type Frame } from './frames.ts';

export const FILE_PATH = '/_cluster/file';

export function peerRoutes(searcher: Searcher, dataDir: string): InternalRoute[] {
  /** Parts running here, by the coordinator's name for them. */
  const parts = new Map<string, PoolRun>();
  return [
    {
      method: 'POST',
      path: SEARCH_PATH,
      async handle({ body, reply, signal }) {
        const req = bodies.unpack(body ?? Buffer.alloc(0)) as PeerSearchBody;
        if (!req || !Array.isArray(req.units) || typeof req.part !== 'string') throw new ServiceError('INVALID_REQUEST_BODY', 'not a search part');
        const cancel = new SharedArrayBuffer(4);
        const plan = new Uint8Array(req.task.plan);
        const unitRun = searcher.startUnits(req.units, { ...req.task, plan, planId: foreignPlanId(plan) }, cancel, Infinity);
        const run = unitRun.run;
        parts.set(req.part, run);
        const stop = () => {
          Atomics.store(new Int32Array(cancel), 0, 1);
          run.stop();
        };
        signal.addEventListener('abort', stop, { once: true });
        reply.begin(200, [['Content-Type', 'application/octet-stream']]);
        // Frames go out one at a time, in the order they were made.
        let sending: Promise<void> = Promise.resolve();
        const send = (frame: Frame) => (sending = sending.then(() => reply.write(encodeFrame(frame))));
        const units: number[] = [];
        unitRun.held.forEach((at, k) => {
          if (at < 0) void send(repliesFrame([k], [{ status: 'failed', error: NOT_HELD, queuedNs: 0 }]));
          else units[at] = k;
        });
        run.onPartial = (at, p) => {
          void send({ kind: FRAME.PARTIAL, shard: units[at]!, message: packMessage({ ...p, files: [] }, [p.files], true) });
          for (const f of p.files) releaseFile(f);
        };
        try {
          await Promise.all(
            run.replies.map(async (r, at) => {
              const rep = await r;
              await send(repliesFrame([units[at]!], [rep]));
              if (rep.status === 'done') for (const f of rep.files) releaseFile(f);
            }),
          );
          await send({ kind: FRAME.END });
          await sending;
          reply.end();
        } finally {
          signal.removeEventListener('abort', stop);
          parts.delete(req.part);
          unitRun.release();
        }
      },
    },
    {
      method: 'POST',
      path: CONTROL_PATH,
      async handle({ body, reply }) {
        const req = bodies.unpack(body ?? Buffer.alloc(0)) as PeerControlBody;
        const run = parts.get(req?.part);
        if (run && req.action === 'stop') run.stop();
        if (run && req.action === 'definitionsOnly') run.definitionsOnly();
        reply.json(200, { found: run !== undefined });
      },
    },
    {
      method: 'POST',
      path: RESHAPE_PATH,
      async handle({ body, reply }) {
        const bytes = new Uint8Array(new ArrayBuffer(body?.length ?? 0));
        if (body) bytes.set(body);
        const { value, groups } = unpackMessage(bytes);
        const req = value as PeerReshapeBody;
        const f = groups[0]?.[0];
        if (!f || !req?.unit) throw new ServiceError('INVALID_REQUEST_BODY', 'not a file to shape');
        const shaped = searcher.reshapeUnit(req.unit, req.shape, f, req.budget);
        if (!shaped) throw new ServiceError('NOT_FOUND', NOT_HELD);
        reply.send(200, packMessage({}, [[shaped]]), [['Content-Type', 'application/octet-stream']]);
      },
    },
    {
      method: 'GET',
      path: FILE_PATH,
      async handle({ query, reply, signal }) {
        const q = new URLSearchParams(query);
        const repoId = Number(q.get('repo'));
        const name = q.get('name') ?? '';
        if (!Number.isSafeInteger(repoId) || repoId <= 0 || fileGeneration(name) === undefined) throw new ServiceError('INVALID_REQUEST_BODY', 'repo must be a repository id and name an index file name');
        const m = loadManifest(dataDir, repoId);
        const listed = m && !('unreadable' in m) && (named(m).includes(name) || m.retired.some((r) => r.file === name));
        const path = join(shardsDir(dataDir, repoId), name);
        const size = listed ? statSync(path, { throwIfNoEntry: false })?.size : undefined;
        if (size === undefined) throw new ServiceError('NOT_FOUND', `this node holds no file ${name} of repository ${repoId}`);
        reply.begin(200, [
          ['Content-Type', 'application/octet-stream'],
          // The copier checks it got the whole file (the body is sent in chunks).
          ['X-Trawl-Size', String(size)],
        ]);
        const stream = createReadStream(path, { highWaterMark: 1 << 20, signal });
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

function repliesFrame(shards: number[], replies: ShardReply[]): Frame {
  const groups = replies.map((r) => (r.status === 'done' ? r.files : []));
  const values = replies.map((r) => (r.status === 'done' ? { ...r, files: [] } : r));
  return { kind: FRAME.REPLIES, shards, message: packMessage(values, groups) };
}
