// A git shard job's blobs, read on the thread that builds it: the files of the job that
// carry a blob id and neither bytes nor a path are read from their repository with `git
// cat-file --batch` (repos/cat-file.ts), one process for a repository or for a few
// small ones, into one buffer, which the thread keeps for its next job. Files over the size limit are not read (the builder records them as
// skipped by their size).

import { alternateSafe, answerBytes, readObjects } from '../repos/cat-file.ts';
import { objectsDir } from '../repos/git-dir.ts';
import { readLooseBlob } from '../repos/loose-objects.ts';
import { jobMembers, type ShardJob } from './shard-builder.ts';
import { Shard } from './shard-reader.ts';

/**
 * Fills in `data` of the job's unread blobs; returns the buffer they are views of (pass it
 * back as `reuse` once the job is built). A compound job's members each have their git
 * repository: read a few at a time, into one buffer.
 */
export async function readJobBlobs(job: ShardJob, reuse?: Buffer): Promise<Buffer | undefined> {
  copyDocuments(job);
  const members = jobMembers(job);
  const unread = job.files.filter(
    (f) => f.data === undefined && f.absPath === undefined && f.oid !== undefined && f.size <= job.maxFileSize && members[f.member ?? 0]?.gitDir !== undefined,
  );
  if (unread.length === 0) return reuse;
  if (members.length === 1) return readFrom(job, members[0]!.gitDir!, unread, reuse);
  // Loose objects are read here (loose-objects.ts). The rest: one buffer for all, each
  // group's answer in a slice of it, a few groups read at once. Small repositories cost a
  // process each when read one by one (more than reading their blobs): neighbours are read
  // together by one `git cat-file --batch` that has the others' object directories as
  // alternates (cat-file.ts).
  const byMember = new Map<number, typeof unread>();
  for (const f of unread) {
    const m = f.member ?? 0;
    let list = byMember.get(m);
    if (!list) byMember.set(m, (list = []));
    list.push(f);
  }
  const parts: Part[] = [];
  let open: Part | undefined;
  for (const [m, listed] of byMember) {
    const gitDir = members[m]!.gitDir!;
    const objects = objectsDir(gitDir);
    const files = objects === undefined ? listed : listed.filter((f) => (f.data = readLooseBlob(objects, f.oid!, f.size)) === undefined);
    if (files.length === 0) continue;
    const bytes = answerBytes(
      files.map((f) => f.oid!),
      files.map((f) => f.size),
    );
    if (objects === undefined || !alternateSafe(objects)) {
      parts.push({ gitDir, alternates: [], files, bytes });
      continue;
    }
    if (open && open.alternates.length + 1 < READ_TOGETHER) {
      open.alternates.push(objects);
      open.files.push(...files);
      open.bytes += bytes;
      continue;
    }
    open = { gitDir, alternates: [], files: [...files], bytes };
    parts.push(open);
  }
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
        const p = parts[k]!;
        await readFrom(job, p.gitDir, p.files, slices[k], p.alternates);
      }
    }),
  );
  return buffer;
}

/** Repositories whose blobs one process reads: each object it is asked for is looked up in up to this many object directories. */
const READ_TOGETHER = 32;

/** Blobs read by one `git cat-file --batch`: from `gitDir` and the object directories of the repositories read with it. */
interface Part {
  gitDir: string;
  alternates: string[];
  files: ShardJob['files'];
  /** The answer's length. */
  bytes: number;
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

/** Processes reading a compound job's blobs at once. */
const PARALLEL_READS = 4;

async function readFrom(
  job: ShardJob,
  gitDir: string,
  files: ShardJob['files'],
  reuse: Buffer | undefined,
  alternates: readonly string[] = [],
): Promise<Buffer | undefined> {
  let read: { buffer: Buffer; views: Uint8Array[] };
  try {
    read = await readObjects(
      gitDir,
      files.map((f) => f.oid!),
      files.map((f) => f.size),
      reuse,
      alternates,
    );
  } catch (err) {
    const others = alternates.length > 0 ? ` (with the objects of ${alternates.length} other repositories: ${alternates.join(', ')})` : '';
    throw new Error(`cannot read the blobs of shard ${job.shardIndex} from ${gitDir}${others}: ${(err as Error).message}`, { cause: err });
  }
  files.forEach((f, i) => (f.data = read.views[i]!));
  return read.buffer;
}
