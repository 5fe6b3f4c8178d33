// The versions a shard reader rebuilt from deltas last (shard-reader.ts contentOf): the
// next read of one of them, or of the version after it (a delta against it), starts there
// instead of at the chain's whole document. A search at one commit reads one version per
// path; the symbols pass and a search of every commit read a path's versions one after
// another, each then one delta away from the last. Bounded by bytes and entries; the least
// recently read goes first.

/** Bytes of versions kept per shard reader. */
const CACHE_BYTES = 8 << 20;
/** Versions kept per shard reader. */
const CACHE_ENTRIES = 256;

export class VersionCache {
  private readonly versions = new Map<number, Buffer>();
  private bytes = 0;

  get(doc: number): Buffer | undefined {
    const hit = this.versions.get(doc);
    if (hit !== undefined) {
      // Most recently read last.
      this.versions.delete(doc);
      this.versions.set(doc, hit);
    }
    return hit;
  }

  set(doc: number, bytes: Buffer): void {
    if (bytes.length > CACHE_BYTES) return;
    const old = this.versions.get(doc);
    if (old !== undefined) {
      this.versions.delete(doc);
      this.bytes -= old.length;
    }
    this.versions.set(doc, bytes);
    this.bytes += bytes.length;
    for (const [d, b] of this.versions) {
      if (this.bytes <= CACHE_BYTES && this.versions.size <= CACHE_ENTRIES) break;
      this.versions.delete(d);
      this.bytes -= b.length;
    }
  }
}
