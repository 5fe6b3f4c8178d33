// Index worker: builds the shards it is sent, one at a time, and reports progress; or adds
// the symbols to a shard built without them (symbols-pass.ts). Jobs arrive by structured
// clone (git blobs are transferred, not copied).

import { parentPort } from 'node:worker_threads';
import { buildShard, type ShardJob, type ShardResult } from './shard-builder.ts';
import { addSymbols, type SymbolsJob, type SymbolsResult } from './symbols-pass.ts';

export type BuildRequest = { id: number; job: ShardJob } | { id: number; symbols: SymbolsJob };
export type BuildReply =
  | { id: number; type: 'progress'; files: number; bytes: number }
  | ({ id: number; type: 'done' } & Omit<ShardResult, 'path'>)
  | ({ id: number; type: 'symbols-done' } & SymbolsResult)
  | { id: number; type: 'error'; message: string };

const port = parentPort!;
port.on('message', (req: BuildRequest) => {
  try {
    if ('symbols' in req) {
      port.postMessage({ id: req.id, type: 'symbols-done', ...addSymbols(req.symbols) } satisfies BuildReply);
      return;
    }
    const result = buildShard(req.job, (files, bytes) => port.postMessage({ id: req.id, type: 'progress', files, bytes } satisfies BuildReply));
    const { path: _path, ...rest } = result;
    port.postMessage({ id: req.id, type: 'done', ...rest } satisfies BuildReply);
  } catch (err) {
    port.postMessage({ id: req.id, type: 'error', message: (err as Error).message } satisfies BuildReply);
  }
});
