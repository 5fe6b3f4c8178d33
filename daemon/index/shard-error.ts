// The error of a shard (or symbols file) that cannot be used: what every reader of its
// sections throws, so that a search tells a damaged index from its own failure.

/** A shard that cannot be used: wrong version, truncated, corrupt. */
export class ShardError extends Error {
  readonly path: string;
  /** `what`: the kind of file, "shard" or "symbols file" (shard-format.ts SectionFileFormat). */
  constructor(path: string, message: string, what = 'shard') {
    super(`${what} ${path}: ${message}`);
    this.name = 'ShardError';
    this.path = path;
  }
}
