// The versions this thread rebuilt from deltas or inflated last (stored-versions.ts), of
// every shard it reads: the next read of one of them, or of the version after it (a delta
// against it), starts there instead of at its chain's start. Repeated searches at one
// commit read the same versions again; the symbols pass and a search of every commit
// read a path's versions one after another, each then one delta away from the last. One
// cache per thread, not per shard, so that its bound holds however many history shards
// the thread has open; the least recently read goes first. What it holds are copies, never
// views of a mapping, so a shard closed since leaves nothing dangling (its entries age out).

/** Bytes of versions kept per thread. */
const CACHE_BYTES = 32 << 20;
/** Versions kept per thread. */
const CACHE_ENTRIES = 8192;

const versions = new Map<string, Buffer>();
let held = 0;
let readers = 0;

/** The versions of one shard reader in the thread's cache. */
export class VersionCache {
  /** Tells this reader's entries from another's: a reader is never given another's bytes. */
  private readonly prefix = `${readers++}:`;

  get(doc: number): Buffer | undefined {
    const key = this.prefix + doc;
    const hit = versions.get(key);
    if (hit !== undefined) {
      // Most recently read last.
      versions.delete(key);
      versions.set(key, hit);
    }
    return hit;
  }

  set(doc: number, bytes: Buffer): void {
    if (bytes.length > CACHE_BYTES / 4) return;
    const key = this.prefix + doc;
    const old = versions.get(key);
    if (old !== undefined) {
      versions.delete(key);
      held -= old.length;
    }
    versions.set(key, bytes);
    held += bytes.length;
    for (const [k, b] of versions) {
      if (held <= CACHE_BYTES && versions.size <= CACHE_ENTRIES) break;
      versions.delete(k);
      held -= b.length;
    }
  }
}

/**
 * Empties this thread's cache: every version read next is rebuilt from its chain. What
 * `trawl bench history` measures a search at a commit by when no search before it rebuilt
 * any of the versions it reads.
 */
export function dropVersions(): void {
  versions.clear();
  held = 0;
}
