// A git shard job's blobs, read on the thread that builds it: the files of the job that
// carry a blob id and neither bytes nor a path are read from `job.gitDir` with one
// `git cat-file --batch` (repos/cat-file.ts) into one buffer, which the thread keeps for
// its next job. Files over the size limit are not read (the builder records them as
// skipped by their size).

import { readObjects } from '../repos/cat-file.ts';
import type { ShardJob } from './shard-builder.ts';

/** Fills in `data` of the job's unread blobs; returns the buffer they are views of (pass it back as `reuse` once the job is built). */
export async function readJobBlobs(job: ShardJob, reuse?: Buffer): Promise<Buffer | undefined> {
  if (job.gitDir === undefined) return reuse;
  const files = job.files.filter((f) => f.data === undefined && f.absPath === undefined && f.oid !== undefined && f.size <= job.maxFileSize);
  if (files.length === 0) return reuse;
  let read: { buffer: Buffer; views: Uint8Array[] };
  try {
    read = await readObjects(job.gitDir, files.map((f) => f.oid!), files.map((f) => f.size), reuse);
  } catch (err) {
    throw new Error(`cannot read the blobs of shard ${job.shardIndex} from ${job.gitDir}: ${(err as Error).message}`, { cause: err });
  }
  files.forEach((f, i) => (f.data = read.views[i]!));
  return read.buffer;
}
