// Lists the regular files of a plain directory tree (a source that is not a
// git repository, or a working tree indexed as-is).
import { lstat, readdir, stat, type Dirent, type Stats } from 'node:fs';
import { resolve as resolvePath } from 'node:path';

export interface WalkedFile {
  /** Relative to the root, '/'-separated. */
  path: string;
  absPath: string;
  size: number;
}

// libuv runs fs calls on a small thread pool; a few dozen requests in flight
// keep it saturated (and let a cold disk reorder its reads). Callbacks rather than fs/promises: on the Linux tree
// (78k files) the promise wrappers cost about a third of the walk.
const CONCURRENCY = 64;

type Job = { dir: boolean; rel: string; abs: string };

/**
 * Every regular file under `root`, sorted by the UTF-8 bytes of `path`.
 * Skips directories named `.git`, symlinks (to files or directories) and
 * special files; hidden files are included. A directory or file that cannot
 * be read below the root is reported through `onError` (with its absolute
 * path) and skipped; the root itself failing throws.
 */
export async function walkDirectory(
  root: string,
  onError?: (path: string, err: Error) => void,
): Promise<WalkedFile[]> {
  await checkRoot(root);
  const files = await new Promise<WalkedFile[]>((resolve, reject) => {
    const found: WalkedFile[] = [];
    // FIFO of pending fs calls with a moving head; holds one job per file.
    const queue: Array<Job | undefined> = [{ dir: true, rel: '', abs: resolvePath(root) }];
    let head = 0;
    let inFlight = 0;
    let failed = false;

    const report = (abs: string, err: Error): void => {
      try {
        onError?.(abs, err);
      } catch (thrown) {
        // A throwing callback aborts the walk instead of crashing in an fs callback.
        failed = true;
        reject(thrown);
      }
    };

    const pump = (): void => {
      while (!failed && inFlight < CONCURRENCY && head < queue.length) {
        const job = queue[head]!;
        queue[head++] = undefined; // let started jobs be collected
        inFlight++;
        if (job.dir) readdir(job.abs, { withFileTypes: true }, (err, entries) => done(job, err, entries));
        else lstat(job.abs, (err, st) => statted(job, err, st));
      }
      if (head === queue.length) queue.length = head = 0;
      if (!failed && inFlight === 0 && queue.length === 0) resolve(found);
    };

    const done = (job: Job, err: NodeJS.ErrnoException | null, entries: Dirent[]): void => {
      inFlight--;
      if (err) {
        if (job.rel === '') {
          failed = true;
          reject(rootError(root, err));
          return;
        }
        report(job.abs, err);
      } else {
        const prefix = job.rel === '' ? '' : `${job.rel}/`;
        const absPrefix = job.abs.endsWith('/') ? job.abs : `${job.abs}/`;
        for (const e of entries) {
          if (e.isDirectory()) {
            if (e.name !== '.git') queue.push({ dir: true, rel: prefix + e.name, abs: absPrefix + e.name });
          } else if (e.isFile() || isUnknownType(e)) {
            queue.push({ dir: false, rel: prefix + e.name, abs: absPrefix + e.name });
          }
          // Symlinks, sockets, FIFOs and devices are not source files.
        }
      }
      pump();
    };

    // lstat, not stat: a file replaced by a symlink since readdir stays out.
    const statted = (job: Job, err: NodeJS.ErrnoException | null, st: Stats): void => {
      inFlight--;
      if (err) report(job.abs, err);
      else if (st.isFile()) found.push({ path: job.rel, absPath: job.abs, size: st.size });
      else if (st.isDirectory() && !isGitDir(job.rel)) queue.push({ dir: true, rel: job.rel, abs: job.abs }); // dirent type was unknown
      pump();
    };

    pump();
  });
  return sortByPathBytes(files);
}

function isGitDir(rel: string): boolean {
  return rel === '.git' || rel.endsWith('/.git');
}

// Some file systems do not report entry types in readdir; those entries are
// lstat'ed like files and sorted out by the result.
function isUnknownType(e: Dirent): boolean {
  return !(e.isFile() || e.isDirectory() || e.isSymbolicLink() || e.isFIFO() || e.isSocket() || e.isBlockDevice() || e.isCharacterDevice());
}

/**
 * Byte order of the UTF-8 path, the order git trees and shards use, so that
 * the same tree always yields the same shard layout regardless of locale.
 * (JS string comparison orders UTF-16 units, which differs for characters
 * outside the BMP.)
 */
export function sortByPathBytes<T extends { path: string }>(items: T[]): T[] {
  const keyed = items.map((item) => ({ item, key: Buffer.from(item.path, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.map((k) => k.item);
}

function checkRoot(root: string): Promise<void> {
  return new Promise((resolve, reject) =>
    stat(root, (err, st) => {
      if (err) reject(rootError(root, err));
      else if (!st.isDirectory()) reject(new Error(`cannot read directory ${root}: not a directory`));
      else resolve();
    }),
  );
}

function rootError(root: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'ENOENT' ? 'no such file or directory'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'ENOTDIR' ? 'not a directory'
    : err instanceof Error ? err.message
    : String(err);
  return new Error(`cannot read directory ${root}: ${reason}`, { cause: err });
}
