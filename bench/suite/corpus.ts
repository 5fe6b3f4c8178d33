// Corpus identity: which tree was measured. Independent of the engine's own walker, so
// that a change in what trawl indexes does not change the corpus hash.

import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

export interface CorpusIdentity {
  name: string;
  path: string;
  /** Regular files (symlinks and `.git` directories excluded). */
  files: number;
  totalBytes: number;
  /** sha256 over, for each file in byte order of its relative path: path, NUL, size, NUL, bytes. */
  sha256: string;
  seconds: number;
}

/** Relative paths of the regular files under `root`, sorted by their UTF-8 bytes. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== '.git') walk(path);
      } else if (e.isFile()) {
        out.push(path);
      }
    }
  };
  walk('');
  return out
    .map((p) => ({ p, key: Buffer.from(p, 'utf8') }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map((x) => x.p);
}

/** `keep`: which of the files (relative paths) count; default every one. */
export function corpusIdentity(dir: string, keep: (rel: string) => boolean = () => true): CorpusIdentity {
  const started = performance.now();
  const root = resolve(dir);
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(1 << 20);
  let totalBytes = 0;
  const files = listFiles(root).filter(keep);
  for (const rel of files) {
    const abs = join(root, rel);
    const size = lstatSync(abs).size;
    hash.update(`${rel}\0${size}\0`);
    const fd = openSync(abs, 'r');
    try {
      for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(buf.subarray(0, n));
    } finally {
      closeSync(fd);
    }
    totalBytes += size;
  }
  return { name: basename(root), path: root, files: files.length, totalBytes, sha256: hash.digest('hex'), seconds: (performance.now() - started) / 1000 };
}
