// Bulk blob reads through git's own object reader, `git cat-file --batch`: the path an
// index build takes through a whole tree.
//
// Why not nodegit: Blob.lookup inflates on libuv's threads and hands back a copy per blob,
// on the main thread; for a large tree that was a large part of the build's CPU, much of it
// V8 collecting after tens of thousands of buffers. `git cat-file --batch` over the same
// oids in path order takes a fraction of that in its own process (git's delta base cache,
// one stream), and each build worker reads its shard's blobs itself into one buffer it
// keeps. A blob's size is known without inflating it (`--batch-check` reads object
// headers, quickly even for a whole tree), so shards are cut before any blob is read and
// blobs over the size limit are never read at all.
//
// Formats, as git documents them (git-cat-file(1), "BATCH OUTPUT"):
//   --batch-check='%(objectsize)'   one line per input oid: "<size>" or "<oid> missing"
//   --batch                         "<oid> <type> <size>\n<size bytes>\n" or "<oid> missing\n"
// Answers come in input order. Objects are named by oid only, so nothing a repository's
// configuration can say about paths (filters, attributes) touches the bytes: they are the
// blob's, as nodegit's would be.

import { spawnSync } from 'node:child_process';
import { spawnSmall, type SpawnedChild } from '../runtime/spawner.ts';
import { GIT_BASE_ARGS, gitEnv } from './git-command.ts';
import { objectsDir } from './git-dir.ts';
import { holdsObjects } from './object-presence.ts';

let available: boolean | undefined;

/** Whether a `git` that has `cat-file --batch-check` is on PATH; checked once. */
export function catFileAvailable(): boolean {
  if (available === undefined) {
    const r = spawnSync('git', ['cat-file', '-h'], { stdio: ['ignore', 'pipe', 'pipe'], env: gitEnv(), timeout: 10_000 });
    // `-h` exits 129 with the usage on stdout (or stderr, by version).
    const usage = `${r.stdout?.toString() ?? ''}${r.stderr?.toString() ?? ''}`;
    available = !r.error && usage.includes('--batch-check');
  }
  return available;
}

/**
 * `alternates`: other repositories' object directories git also reads (git's
 * GIT_ALTERNATE_OBJECT_DIRECTORIES), so that one process answers for several small
 * repositories: objects are named by their content, so a blob is the same bytes in
 * whichever of them git finds it.
 */
function start(gitDir: string, args: string[], alternates: readonly string[] = []): SpawnedChild {
  const env = gitEnv();
  if (alternates.length > 0) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = alternates.join(':');
  // Through the spawner: a build starts git for every few small repositories, from a
  // process whose size would make each start cost tens of milliseconds (runtime/spawner.ts).
  return spawnSmall('git', [...GIT_BASE_ARGS, '-C', gitDir, 'cat-file', ...args], env);
}

/** Whether git can be given the directory in its list of alternates: a ':' would split it, a leading '"' start a quoted entry. */
export function alternateSafe(dir: string): boolean {
  return !dir.includes(':') && !dir.startsWith('"') && !dir.includes('\n');
}

/** Collects a child's stderr (the first 4 KB) for an error message, and its exit. */
function watch(child: SpawnedChild): { stderr: () => string; exited: Promise<number | string> } {
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    if (err.length < 4096) err += d.toString('utf8');
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('error', (e) => resolve(e.message));
    child.on('close', (code, signal) => resolve(code ?? signal ?? 'killed'));
  });
  return { stderr: () => err.trim().split('\n')[0] ?? '', exited };
}

/** Writes the oids, one per line, and closes stdin; a child that dies early makes the write fail: that error is reported by the reader. */
function feed(child: SpawnedChild, oids: readonly string[]): void {
  child.stdin.on('error', () => {});
  child.stdin.end(oids.length > 0 ? `${oids.join('\n')}\n` : '');
}

class CatFileError extends Error {}

/**
 * Sizes of the objects, in order, read from their headers; -1 for an object the repository
 * does not have. Asked for several small repositories at once (a sync lists many), one
 * process answers a few of them together (sizesTogether); a repository whose answer rests
 * on objects it does not hold itself is asked again alone, so that the answer is its own.
 */
export function objectSizes(gitDir: string, oids: readonly string[]): Promise<number[]> {
  if (oids.length === 0) return Promise.resolve([]);
  const objects = oids.length <= SMALL_REQUEST ? objectsDir(gitDir) : undefined;
  if (objects === undefined || !alternateSafe(objects)) return sizesOf(gitDir, oids);
  return new Promise((resolve, reject) => {
    sizeQueue.push({ gitDir, objects, oids, resolve, reject });
    pumpSizes();
  });
}

/** A request answered together with others: at most this many oids. */
const SMALL_REQUEST = 4096;
/** Repositories one process answers for (each object is looked up in up to this many object directories). */
const SIZES_TOGETHER = 16;
interface SizeRequest {
  gitDir: string;
  objects: string;
  oids: readonly string[];
  resolve(sizes: number[]): void;
  reject(err: unknown): void;
}

const sizeQueue: SizeRequest[] = [];
/**
 * Whether a process is answering: one at a time, so that the requests that come while it
 * runs wait for the next, together (starting a process costs this thread more than
 * waiting for one does).
 */
let sizing = false;

/** Starts a process for the requests waiting (up to SIZES_TOGETHER of them), unless one runs. */
function pumpSizes(): void {
  if (sizing || sizeQueue.length === 0) return;
  sizing = true;
  void sizesTogether(sizeQueue.splice(0, SIZES_TOGETHER)).finally(() => {
    sizing = false;
    pumpSizes();
  });
}

async function sizesTogether(group: SizeRequest[]): Promise<void> {
  const alone = async (r: SizeRequest) => {
    try {
      r.resolve(await sizesOf(r.gitDir, r.oids));
    } catch (err) {
      r.reject(err);
    }
  };
  if (group.length === 1) return alone(group[0]!);
  let sizes: number[];
  try {
    sizes = await sizesOf(
      group[0]!.gitDir,
      group.flatMap((r) => r.oids),
      group.slice(1).map((r) => r.objects),
    );
  } catch {
    // One repository's trouble is its own: each is asked alone, and fails alone.
    for (const r of group) await alone(r);
    return;
  }
  let at = 0;
  for (const r of group) {
    const mine = sizes.slice(at, at + r.oids.length);
    at += r.oids.length;
    // git found each object in whichever repository of the group holds it: an answer
    // counts for this one only when its own objects hold them all (else it is asked alone).
    if (mine.includes(-1) || !holdsObjects(r.objects, r.oids)) await alone(r);
    else r.resolve(mine);
  }
}

async function sizesOf(gitDir: string, oids: readonly string[], alternates: readonly string[] = []): Promise<number[]> {
  const child = start(gitDir, ['--batch-check=%(objectsize)'], alternates);
  const w = watch(child);
  feed(child, oids);
  const chunks: Buffer[] = [];
  for await (const c of child.stdout) chunks.push(c as Buffer);
  const status = await w.exited;
  const lines = Buffer.concat(chunks).toString('latin1').split('\n');
  if (status !== 0 || lines.length !== oids.length + 1) {
    throw new CatFileError(`git cat-file --batch-check failed (${status}${w.stderr() ? `: ${w.stderr()}` : ''})`);
  }
  const sizes = new Array<number>(oids.length);
  for (let i = 0; i < oids.length; i++) {
    const l = lines[i]!;
    sizes[i] = l.endsWith(' missing') ? -1 : Number(l);
    if (!Number.isSafeInteger(sizes[i]) || (sizes[i]! < 0 && sizes[i] !== -1))
      throw new CatFileError(`git cat-file --batch-check: unexpected answer ${JSON.stringify(l.slice(0, 100))}`);
  }
  return sizes;
}

/** The bytes of `git cat-file --batch`'s answer for these blobs: the buffer readObjects needs. */
export function answerBytes(oids: readonly string[], sizes: readonly number[]): number {
  let total = 0;
  for (let i = 0; i < oids.length; i++) total += `${oids[i]} blob ${sizes[i]}\n`.length + sizes[i]! + 1;
  return total;
}

/**
 * The contents of the objects, whose sizes the caller knows (objectSizes), as views into one
 * buffer: `reuse` when it is large enough, else a new one (returned, to be reused next
 * time). The answer's length is known in advance ("<oid> blob <size>\n<bytes>\n" per
 * object), so git's output is copied once, into place, and checked afterwards: a missing
 * object, an object of another size or type, or an answer cut short is an error naming the
 * object.
 */
export async function readObjects(
  gitDir: string,
  oids: readonly string[],
  sizes: readonly number[],
  reuse?: Buffer,
  alternates: readonly string[] = [],
): Promise<{ buffer: Buffer; views: Uint8Array[] }> {
  const heads = oids.map((oid, i) => `${oid} blob ${sizes[i]}\n`);
  const total = answerBytes(oids, sizes);
  const buffer = reuse && reuse.length >= total ? reuse : Buffer.allocUnsafeSlow(total);
  if (oids.length === 0) return { buffer, views: [] };
  const child = start(gitDir, ['--batch'], alternates);
  const w = watch(child);
  feed(child, oids);
  let filled = 0;
  let over: Buffer | undefined;
  try {
    for await (const c of child.stdout) {
      const chunk = c as Buffer;
      if (filled + chunk.length > total) {
        over = chunk.subarray(0, Math.min(chunk.length, 200));
        break;
      }
      chunk.copy(buffer, filled);
      filled += chunk.length;
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null && over) child.kill('SIGKILL');
  }
  const status = await w.exited;
  // Walk the answer: each header must be the one expected, each body followed by "\n".
  const views: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; i < oids.length; i++) {
    const head = heads[i]!;
    const got = buffer.toString('latin1', at, Math.min(filled, at + head.length));
    if (got !== head) {
      const line = buffer.toString('latin1', at, Math.min(filled, at + 200)).split('\n')[0]!;
      const said = at >= filled ? (over ? over.toString('latin1').split('\n')[0]! : 'no answer') : line;
      throw new CatFileError(
        / missing$/.test(said)
          ? `object ${oids[i]} is missing`
          : `object ${oids[i]}: expected ${JSON.stringify(head.trim())}, git answered ${JSON.stringify(said)}${status !== 0 ? ` (git ${status}${w.stderr() ? `: ${w.stderr()}` : ''})` : ''}`,
      );
    }
    at += head.length;
    views.push(buffer.subarray(at, at + sizes[i]!));
    at += sizes[i]!;
    if (at >= filled || buffer[at] !== 0x0a) throw new CatFileError(`object ${oids[i]}: answer cut short or out of step`);
    at++;
  }
  if (over || status !== 0)
    throw new CatFileError(`git cat-file --batch: ${over ? 'more output than asked for' : `exit ${status}${w.stderr() ? `: ${w.stderr()}` : ''}`}`);
  return { buffer, views };
}
