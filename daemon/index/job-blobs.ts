// A git shard job's blobs, read on the thread that builds it: the files of the job that
// carry a blob id and neither bytes nor a path are read from `job.gitDir` with one
// `git cat-file --batch` (repos/cat-file.ts) into one buffer, which the thread keeps for
// its next job. Files over the size limit are not read (the builder records them as
// skipped by their size).

import { answerBytes, readObjects } from '../repos/cat-file.ts';
import { jobMembers, type ShardJob } from './shard-builder.ts';
import { Shard } from './shard-reader.ts';

/**
 * Fills in `data` of the job's unread blobs; returns the buffer they are views of (pass it
 * back as `reuse` once the job is built). A compound job's members each have their git
 * repository: one `git cat-file --batch` per member, into one buffer.
 */
export async function readJobBlobs(job: ShardJob, reuse?: Buffer): Promise<Buffer | undefined> {
  copyDocuments(job);
  const members = jobMembers(job);
  const unread = job.files.filter((f) => f.data === undefined && f.absPath === undefined && f.oid !== undefined && f.size <= job.maxFileSize && members[f.member ?? 0]?.gitDir !== undefined);
  if (unread.length === 0) return reuse;
  if (members.length === 1) return readFrom(job, members[0]!.gitDir!, unread, reuse);
  // One buffer for all, each member's answer in a slice of it, read a few members at a
  // time (one `git cat-file --batch` each): small repositories cost a process each.
  const byMember = new Map<number, typeof unread>();
  for (const f of unread) {
    const m = f.member ?? 0;
    let list = byMember.get(m);
    if (!list) byMember.set(m, (list = []));
    list.push(f);
  }
  const parts = [...byMember].map(([m, files]) => ({ gitDir: members[m]!.gitDir!, files, bytes: answerBytes(files.map((f) => f.oid!), files.map((f) => f.size)) }));
  const total = parts.reduce((n, p) => n + p.bytes, 0);
  const buffer = reuse && reuse.length >= total ? reuse : Buffer.allocUnsafeSlow(total);
  let at = 0;
  const slices = parts.map((p) => {
    const slice = buffer.subarray(at, at + p.bytes);
    at += p.bytes;
    return slice;
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL_READS, parts.length) }, async () => {
      while (next < parts.length) {
        const k = next++;
        await readFrom(job, parts[k]!.gitDir, parts[k]!.files, slices[k]);
      }
    }),
  );
  return buffer;
}

/**
 * Fills in the files a job copies from existing shards (ShardFile.from): their bytes (a
 * view of the shard's mapping, checked against the document's checksum) and their
 * definitions there. Each shard is opened once per job.
 */
function copyDocuments(job: ShardJob): void {
  const open = new Map<string, Shard>();
  for (const f of job.files) {
    if (f.from === undefined || f.data !== undefined) continue;
    const key = `${f.from.shard}\0${f.from.symbols ?? ''}`;
    let shard = open.get(key);
    if (!shard) open.set(key, (shard = Shard.open(f.from.shard, f.from.symbols !== undefined ? { symbols: f.from.symbols } : {})));
    f.data = shard.contentOf(f.from.doc);
    if (shard.meta.symbolsIndexed) f.known = shard.symbolsOf(f.from.doc);
  }
}

/** Members of a compound job whose blobs are read at once. */
const PARALLEL_READS = 4;

async function readFrom(job: ShardJob, gitDir: string, files: ShardJob['files'], reuse: Buffer | undefined): Promise<Buffer | undefined> {
  let read: { buffer: Buffer; views: Uint8Array[] };
  try {
    read = await readObjects(gitDir, files.map((f) => f.oid!), files.map((f) => f.size), reuse);
  } catch (err) {
    throw new Error(`cannot read the blobs of shard ${job.shardIndex} from ${gitDir}: ${(err as Error).message}`, { cause: err });
  }
  files.forEach((f, i) => (f.data = read.views[i]!));
  return read.buffer;
}
