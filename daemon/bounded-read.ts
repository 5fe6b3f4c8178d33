// Reading a file that trawl wrote itself (the data dir's manifests, index-version, lock
// files, marks, secrets; the configuration file) without trusting what stands at its path
// now. Anything else there (a link to /dev/zero, a FIFO, a directory, a file grown without
// end) would make a plain read run until memory is gone or block forever, and with it the
// daemon and every command that reads the data dir.
//
// So a file is opened without blocking (a FIFO with no writer opens at once), checked on
// the opened descriptor to be a regular file (following a symbolic link, as a configuration
// file mounted by a container runtime is), checked against the bound of its kind, and read
// to at most bound + 1 bytes: a file that grows while it is read cannot make the read go on.
// Errors of the open itself (ENOENT, EACCES) are thrown as they are, for callers that tell
// "absent" from "damaged".

import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';

/** A file refused: not a regular file, or larger than its kind's bound. */
export class RefusedFile extends Error {
  readonly path: string;
  /** What is wrong, without the path: "is not a regular file (a FIFO)". */
  readonly reason: string;

  constructor(path: string, reason: string) {
    super(`${path} ${reason}`);
    this.name = 'RefusedFile';
    this.path = path;
    this.reason = reason;
  }
}

/** An opened regular file: its descriptor (the caller closes it) and its size at the open. */
export interface RegularFile {
  fd: number;
  size: number;
}

// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; regular files
// ignore it. O_NOCTTY: a terminal device named here must not become the controlling one.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens `path` for reading when it is a regular file (through a symbolic link too);
 * throws RefusedFile when it is anything else.
 */
export function openRegularFile(path: string): RegularFile {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (err) {
    // A socket cannot be opened at all (ENXIO): still "not a regular file", not a read error.
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') throw new RefusedFile(path, notRegular(path, statSync(path, { throwIfNoEntry: false })));
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new RefusedFile(path, notRegular(path, st));
    return { fd, size: st.size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * The bytes of the regular file `path`, at most `maxBytes` of them; throws RefusedFile when
 * it is not a regular file or holds more (at the open, or grown while it was read).
 */
export function readBoundedFile(path: string, maxBytes: number): Buffer {
  const { fd, size } = openRegularFile(path);
  try {
    if (size > maxBytes) throw new RefusedFile(path, `is ${bytes(size)}, over the ${bytes(maxBytes)} a file of its kind may hold`);
    // One byte more than the size seen: the read that fills it says the file grew.
    let buf = Buffer.allocUnsafe(size + 1);
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        if (length > maxBytes) throw new RefusedFile(path, `grew past the ${bytes(maxBytes)} a file of its kind may hold while it was read`);
        const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(grown, 0, 0, length);
        buf = grown;
      }
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) return buf.subarray(0, length);
      length += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** readBoundedFile as text (UTF-8 unless told). */
export function readBoundedText(path: string, maxBytes: number, encoding: BufferEncoding = 'utf8'): string {
  return readBoundedFile(path, maxBytes).toString(encoding);
}

function bytes(n: number): string {
  return `${n.toLocaleString('en-US')} bytes`;
}

/** "is not a regular file (a symbolic link to a character device)". */
function notRegular(path: string, st: Stats | undefined): string {
  if (st === undefined) return 'is not a regular file';
  const kind = st.isDirectory()
    ? 'a directory'
    : st.isFIFO()
      ? 'a FIFO'
      : st.isCharacterDevice()
        ? 'a character device'
        : st.isBlockDevice()
          ? 'a block device'
          : st.isSocket()
            ? 'a socket'
            : 'another kind of file';
  const link = lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  return `is not a regular file (${link ? `a symbolic link to ${kind}` : kind})`;
}
