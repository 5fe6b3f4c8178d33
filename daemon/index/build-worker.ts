// Index worker: builds the shards it is sent, one at a time, and reports progress; or adds
// the symbols to a shard built without them (symbols-pass.ts). Jobs arrive by structured
// clone; a git shard's blobs are read here (job-blobs.ts), into a buffer kept for the next.

import { parentPort } from 'node:worker_threads';
import { readJobBlobs } from './job-blobs.ts';
import { buildShard, type ShardJob, type ShardResult } from './shard-builder.ts';
import { addSymbols, type SymbolsJob, type SymbolsResult } from './symbols-pass.ts';
import { releaseFreeMemory } from '../../core/index.ts';
import { mmap } from './mmap.ts';
import { lowerThisThreadsPriority } from '../runtime/thread-priority.ts';

export type BuildRequest = { id: number; job: ShardJob } | { id: number; symbols: SymbolsJob };
export type BuildReply =
  | { id: number; type: 'progress'; files: number; bytes: number }
  | ({ id: number; type: 'done' } & Omit<ShardResult, 'path'>)
  | ({ id: number; type: 'symbols-done' } & SymbolsResult)
  | { id: number; type: 'error'; message: string };

lowerThisThreadsPriority();

const port = parentPort!;
// The pool sends a thread its next job only once it has answered the last one, so the
// buffer is free again whenever a job arrives.
let blobBuffer: Buffer | undefined;
/** Whether this thread built a shard's content since its last symbols job. */
let builtContent = false;
port.on('message', async (req: BuildRequest) => {
  try {
    if ('symbols' in req) {
      // A thread goes on from a build's content to its symbols pass (indexer.ts): the core's
      // memory that the posting lists took is let go first, so that the pass's own
      // (about half as much) is not added to it in the process's resident set.
      if (builtContent) {
        builtContent = false;
        blobBuffer = undefined;
        releaseFreeMemory((memory, offset, length) => mmap.advise(memory, offset, length, mmap.MADV_DONTNEED));
      }
      port.postMessage({ id: req.id, type: 'symbols-done', ...addSymbols(req.symbols) } satisfies BuildReply);
      return;
    }
    builtContent = true;
    blobBuffer = await readJobBlobs(req.job, blobBuffer);
    const result = buildShard(req.job, (files, bytes) => port.postMessage({ id: req.id, type: 'progress', files, bytes } satisfies BuildReply));
    const { path: _path, ...rest } = result;
    port.postMessage({ id: req.id, type: 'done', ...rest } satisfies BuildReply);
  } catch (err) {
    port.postMessage({ id: req.id, type: 'error', message: (err as Error).message } satisfies BuildReply);
  }
});
