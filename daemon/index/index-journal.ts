// The index's change journal: which repositories' manifests or marks changed, so that a
// view of the index (index-health.ts) reads only those again after a bump rather than every
// manifest of the data dir. With thousands of repositories, reading them all after every
// push cost more than the push's own build.
//
// <dataDir>/index-changes
//   line 1     "#trawl-index-changes v1 <16 hex digits>\n": the file's identity (HEADER_BYTES)
//   then       "<repoId> <version>\n" per change: the index-version the bump announcing it
//              writes, or "-" for one no bump announces (a removed directory)
//
// Writers append a line (O_APPEND, one write) after their change and before the bump that
// announces it, so a reader that has read index-version first finds every change that
// version announces among the lines after its offset. Past JOURNAL_MAX_BYTES the file is
// replaced by one with a new header. A reader reads every manifest again whenever it
// cannot tell what changed: no journal, another header (replaced, or a data dir made anew),
// a file shorter than its offset, a line it cannot parse, or a version it has not seen
// journaled (a bump by a process that does not journal, or whose append failed).
//
// Appends never fail a commit: the change is made, and a missing line only costs readers
// a full read (its bump's version is then not journaled).

import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openRegularFile } from '../bounded-read.ts';
import { writeFileAtomic } from './data-dir.ts';

export const INDEX_JOURNAL_FILE = 'index-changes';
const HEADER_PREFIX = '#trawl-index-changes v1 ';
const HEADER_BYTES = HEADER_PREFIX.length + 16 + 1;
/** Replaced past this (about 50,000 changes): readers then read every manifest once. */
export const JOURNAL_MAX_BYTES = 1024 * 1024;
/** A journal larger than this is not read (nor anything but a regular file): readers read every manifest. */
const JOURNAL_READ_MAX_BYTES = 4 * JOURNAL_MAX_BYTES;

function newHeader(): string {
  return `${HEADER_PREFIX}${randomBytes(8).toString('hex')}\n`;
}

/** Records that repository `repoId`'s manifest or mark changed; `version`: the index-version its bump will write. */
export function journalChange(dataDir: string, repoId: number, version: string | undefined, maxBytes = JOURNAL_MAX_BYTES): void {
  const path = join(dataDir, INDEX_JOURNAL_FILE);
  const line = `${repoId} ${version ?? '-'}\n`;
  try {
    let fd: number;
    try {
      // O_NONBLOCK: a FIFO put there must not hold a commit (with no reader it fails at once).
      fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      writeFileAtomic(path, newHeader() + line);
      return;
    }
    try {
      writeSync(fd, line);
      if (fstatSync(fd).size > maxBytes) writeFileAtomic(path, newHeader());
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not journaled: readers find the bump's version missing and read every manifest.
  }
}

/** What the lines appended since a reader's offset say changed. */
export interface JournalChanges {
  repoIds: Set<number>;
  /** The versions they name (not "-"). */
  versions: string[];
}

/** A reader's place in the journal. */
export class JournalCursor {
  /** The header of the file read; undefined: none known (the next read cannot tell). */
  #header: string | undefined;
  #offset = 0;

  constructor(private readonly dataDir: string) {}

  /** Takes the journal's end as the place to read from next: called before a full read of the manifests. */
  mark(): void {
    this.#header = undefined;
    const opened = this.#open();
    if (!opened) return;
    try {
      this.#header = opened.header;
      this.#offset = opened.size;
    } finally {
      closeSync(opened.fd);
    }
  }

  /** The changes journaled since the last mark or read, and moves past them; undefined when they cannot be told. */
  read(): JournalChanges | undefined {
    if (this.#header === undefined) return undefined;
    const opened = this.#open();
    if (!opened) return this.#lost();
    try {
      if (opened.header !== this.#header || opened.size < this.#offset) return this.#lost();
      const bytes = Buffer.alloc(opened.size - this.#offset);
      let got = 0;
      while (got < bytes.length) {
        const n = readSync(opened.fd, bytes, got, bytes.length - got, this.#offset + got);
        if (n === 0) break;
        got += n;
      }
      // A line being appended is read at the next look, once whole.
      const end = bytes.subarray(0, got).lastIndexOf(0x0a) + 1;
      const changes: JournalChanges = { repoIds: new Set(), versions: [] };
      for (const line of bytes.toString('latin1', 0, end).split('\n')) {
        if (line === '') continue;
        const m = /^(\d{1,15}) (\S{1,200})$/.exec(line);
        if (!m) return this.#lost();
        changes.repoIds.add(Number(m[1]));
        if (m[2] !== '-') changes.versions.push(m[2]!);
      }
      this.#offset += end;
      return changes;
    } finally {
      closeSync(opened.fd);
    }
  }

  #lost(): undefined {
    this.#header = undefined;
    return undefined;
  }

  #open(): { fd: number; header: string; size: number } | undefined {
    let fd: number;
    let size: number;
    try {
      ({ fd, size } = openRegularFile(join(this.dataDir, INDEX_JOURNAL_FILE)));
    } catch {
      return undefined;
    }
    try {
      if (size > JOURNAL_READ_MAX_BYTES) throw new Error('too large');
      const head = Buffer.alloc(HEADER_BYTES);
      const n = readSync(fd, head, 0, HEADER_BYTES, 0);
      const header = head.toString('latin1', 0, n);
      if (n !== HEADER_BYTES || !header.startsWith(HEADER_PREFIX) || !header.endsWith('\n')) {
        closeSync(fd);
        return undefined;
      }
      return { fd, header, size };
    } catch {
      closeSync(fd);
      return undefined;
    }
  }
}
