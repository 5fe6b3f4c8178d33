// Lists the regular files of a plain directory tree (a source that is not a
// git repository, or a working tree indexed as-is).
import { lstatSync, readdirSync, statSync, type Dirent, type Stats } from 'node:fs';
import { resolve as resolvePath } from 'node:path';

export interface WalkedFile {
  /** Relative to the root, '/'-separated. */
  path: string;
  absPath: string;
  size: number;
}

// The walk is depth-first with each directory's entries sorted so that files come out in
// the byte order of their whole paths (a directory sorts as its name and "/": everything
// under it shares that prefix), which lets the indexer cut shards and start building
// while the rest of the tree is still being listed (a large tree's listing would
// otherwise all come before the first shard). Synchronous fs calls, in slices between
// which the event loop runs: on a warm tree they cost about half of callbacks through
// libuv's pool; on a cold disk they read one inode at a time, while the build threads
// read the files' contents.
const SLICE = 1000;

interface Entry {
  name: string;
  key: Buffer;
  dir: boolean;
}

interface Level {
  rel: string;
  abs: string;
  entries: Entry[];
  next: number;
}

/**
 * Every regular file under `root`, in the UTF-8 byte order of `path`, listed as it is
 * consumed. Skips directories named `.git`, symlinks (to files or directories) and special
 * files; hidden files are included. A directory or file that cannot be read below the root
 * is reported through `onError` (with its absolute path) and skipped; the root itself
 * failing throws.
 */
export async function* walkSorted(root: string, onError?: (path: string, err: Error) => void): AsyncGenerator<WalkedFile> {
  const absRoot = resolvePath(root);
  let st: Stats;
  try {
    st = statSync(absRoot);
  } catch (err) {
    throw rootError(root, err);
  }
  if (!st.isDirectory()) throw new Error(`cannot read directory ${root}: not a directory`);
  let calls = 0;
  const levels: Level[] = [];
  const open = (rel: string, abs: string): void => {
    calls++;
    let dirents: Dirent[];
    try {
      dirents = readdirSync(abs, { withFileTypes: true });
    } catch (err) {
      if (rel === '') throw rootError(root, err);
      onError?.(abs, err as Error);
      return;
    }
    const entries: Entry[] = [];
    for (const e of dirents) {
      let dir = e.isDirectory();
      let file = e.isFile();
      if (isUnknownType(e)) {
        // No type from readdir (some file systems): ask.
        calls++;
        try {
          const t = lstatSync(`${abs}/${e.name}`);
          dir = t.isDirectory();
          file = t.isFile();
        } catch (err) {
          onError?.(`${abs}/${e.name}`, err as Error);
          continue;
        }
      }
      if (dir ? e.name === '.git' : !file) continue;
      entries.push({ name: e.name, key: Buffer.from(dir ? `${e.name}/` : e.name, 'utf8'), dir });
    }
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    levels.push({ rel, abs, entries, next: 0 });
  };
  open('', absRoot);
  while (levels.length > 0) {
    if (calls >= SLICE) {
      calls = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const level = levels[levels.length - 1]!;
    if (level.next === level.entries.length) {
      levels.pop();
      continue;
    }
    const e = level.entries[level.next++]!;
    const rel = level.rel === '' ? e.name : `${level.rel}/${e.name}`;
    const abs = level.abs.endsWith('/') ? `${level.abs}${e.name}` : `${level.abs}/${e.name}`;
    if (e.dir) {
      open(rel, abs);
      continue;
    }
    calls++;
    let size: number;
    try {
      const t = lstatSync(abs);
      if (!t.isFile()) continue; // replaced since it was listed
      size = t.size;
    } catch (err) {
      onError?.(abs, err as Error);
      continue;
    }
    yield { path: rel, absPath: abs, size };
  }
}

function isUnknownType(e: Dirent): boolean {
  return !(e.isFile() || e.isDirectory() || e.isSymbolicLink() || e.isFIFO() || e.isSocket() || e.isBlockDevice() || e.isCharacterDevice());
}

function rootError(root: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const reason =
    code === 'ENOENT'
      ? 'no such file or directory'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'ENOTDIR'
          ? 'not a directory'
          : err instanceof Error
            ? err.message
            : String(err);
  return new Error(`cannot read directory ${root}: ${reason}`, { cause: err });
}
