// How a shard built with version deltas (ShardJob.versionDeltas: the history index's)
// stores each document (the format is at the top of shard-reader.ts). A document is
// stored as a delta (content-delta.ts) against the document before it when that one is a
// version of the same path, unless the chain of deltas back to a document not stored as a
// delta would grow past DELTA_CHAIN_MAX - 1 (every DELTA_CHAIN_MAX-th version of a path
// starts a chain, so a reader applies at most DELTA_CHAIN_MAX - 1 deltas) or the delta is
// not shorter than the version. What is stored, the version or its delta, is then
// deflated when it is at least DEFLATE_MIN_BYTES long and deflating makes it shorter:
// source text deflates to about a quarter, the literals of a delta to about half.

import { constants, deflateRawSync } from 'node:zlib';
import { encodeDelta } from './content-delta.ts';
import { DELTA_CHAIN_MAX, DOC_FLAG_DEFLATE, DOC_FLAG_DELTA } from './shard-format.ts';

/** What the content section holds of a document, and its DOC_FLAG_DELTA and DOC_FLAG_DEFLATE bits (0: its bytes as they are). */
export interface StoredVersion {
  bytes: Uint8Array;
  flags: number;
}

/**
 * What is shorter is stored as it is: inflating costs a call per read (tens of
 * microseconds) however short, and a version is read through its chain's every delta. On
 * hono, 1 in 9 deltas is this long; deflating every delta instead would take the content
 * from 3.6 MB to 3.0 MB, at five times the calls.
 */
const DEFLATE_MIN_BYTES = 1024;

export class VersionDeltas {
  /** The last document's path and bytes (a copy when the builder's buffer is reused). */
  private path: string | undefined;
  private bytes: Uint8Array | undefined;
  /** Deltas since the last document not stored as a delta. */
  private depth = 0;

  /**
   * How to store the next document, `content` of `path`; `stable`: its bytes stay as they
   * are until the build ends (a git job's blobs, ShardFile.data), else they are copied.
   */
  next(path: string, content: Uint8Array, stable: boolean): StoredVersion {
    const base = this.path === path && this.depth < DELTA_CHAIN_MAX - 1 ? this.bytes : undefined;
    const delta = base && encodeDelta(base, content);
    this.path = path;
    this.bytes = stable ? content : Buffer.from(content);
    if (delta !== undefined && delta.length < content.length) {
      this.depth++;
      return deflated(delta, DOC_FLAG_DELTA);
    }
    this.depth = 0;
    return deflated(content, 0);
  }
}

function deflated(bytes: Uint8Array, flags: number): StoredVersion {
  if (bytes.length < DEFLATE_MIN_BYTES) return { bytes, flags };
  const z = deflateRawSync(bytes, { level: constants.Z_DEFAULT_COMPRESSION });
  return z.length < bytes.length ? { bytes: z, flags: flags | DOC_FLAG_DEFLATE } : { bytes, flags };
}
