// Which documents of a shard are on which branch (or tag).
//
// A document is one version of one file: a (path, blob) pair. It is stored once however
// many branches hold it, and its branches are recorded here, as one posting list per
// branch: the ascending document numbers on that branch, in the posting-list encoding of
// the trigram postings (LEB128 varint deltas, core/index.ts). A list per branch rather than
// a bit set per document: there is no cap on the number of branches (zoekt's per-document
// u64 mask stops at 64), and a repository's many branches mostly share their documents, so
// the lists compress well.
//
// Encoding (msgpack, records off, so any msgpack reader can decode it):
//   { names: string[], counts: number[], offsets: number[], postings: Uint8Array }
//   names[i] is a branch or tag short name; list i holds counts[i] varints starting at
//   offsets[i] in postings (offsets has names.length + 1 entries).
//
// The same encoding is the `branches` section of a shard (shard-reader.ts) and the body of
// a membership file: when an incremental index run changes which branches hold an existing
// shard's documents, it writes the shard's new lists to `<gen>-m<n>.branches` (framed by
// writeMembershipFile below) and the manifest points the shard at that file instead of
// rewriting the shard.

import { Packr } from 'msgpackr';
import { decodePostings, hash32, holdsSorted } from '../../core/index.ts';
import { readBoundedFile } from '../bounded-read.ts';
import { writeFileAtomic } from './data-dir.ts';
import { compressSection, decompressSection } from './compressed-section.ts';

const packr = new Packr({ useRecords: false });

export interface BranchLists {
  names: string[];
  /** lists[i]: ascending document numbers on branch names[i]. */
  lists: Uint32Array[];
}

/**
 * Writes the ascending `docs` as a posting list (LEB128 varint deltas) into `out` at `at`
 * (room for 5 bytes a document); returns where it ends.
 */
function writePostingList(docs: ArrayLike<number>, out: Uint8Array, at: number): number {
  let prev = 0;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    if (i > 0 && d <= prev) throw new RangeError(`posting list not ascending at ${i}: ${d} after ${prev}`);
    let v = (i === 0 ? d : d - prev) >>> 0;
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[at++] = v;
    prev = d;
  }
  return at;
}

export function encodeBranchLists(b: BranchLists): Uint8Array {
  // Into one typed buffer (at most 5 bytes a document): a history's thousands of lists, one
  // per commit, are rewritten on each update, and a number[] of them is several times slower.
  let total = 0;
  for (const list of b.lists) total += list.length;
  const bytes = new Uint8Array(total * 5);
  let at = 0;
  const offsets: number[] = [];
  for (const list of b.lists) {
    offsets.push(at);
    at = writePostingList(list, bytes, at);
  }
  offsets.push(at);
  return packr.pack({ names: b.names, counts: b.lists.map((l) => l.length), offsets, postings: bytes.subarray(0, at) });
}

/** Decoded lazily: a search usually needs one branch's list (the default branch). */
export class BranchSet {
  readonly names: readonly string[];
  private readonly counts: number[];
  private readonly offsets: number[];
  private readonly postings: Uint8Array;
  private readonly decoded: Array<Uint32Array | undefined>;
  private readonly byName = new Map<string, number>();
  private onAnyBranch: Uint32Array | undefined;

  constructor(encoded: Uint8Array, what: string) {
    let raw: { names?: unknown; counts?: unknown; offsets?: unknown; postings?: unknown };
    try {
      raw = packr.unpack(encoded) as typeof raw;
    } catch (err) {
      throw new Error(`${what}: branch lists cannot be decoded (${(err as Error).message})`);
    }
    if (!Array.isArray(raw.names) || !Array.isArray(raw.counts) || !Array.isArray(raw.offsets) || !(raw.postings instanceof Uint8Array)) {
      throw new Error(`${what}: branch lists are malformed`);
    }
    if (raw.counts.length !== raw.names.length || raw.offsets.length !== raw.names.length + 1) throw new Error(`${what}: branch lists are malformed`);
    this.names = raw.names as string[];
    this.counts = raw.counts as number[];
    this.offsets = raw.offsets as number[];
    this.postings = raw.postings;
    this.decoded = new Array(this.names.length);
    this.names.forEach((n, i) => this.byName.set(n, i));
  }

  /** A set where every one of `docCount` documents is on each of `names` (shards written before branches were recorded). */
  static everyDoc(names: string[], docCount: number): BranchSet {
    const all = new Uint32Array(docCount);
    for (let d = 0; d < docCount; d++) all[d] = d;
    return new BranchSet(encodeBranchLists({ names, lists: names.map(() => all) }), 'built-in');
  }

  indexOf(name: string): number {
    return this.byName.get(name) ?? -1;
  }

  count(branch: number): number {
    return this.counts[branch] ?? 0;
  }

  /** Ascending documents on the branch; decoded once. */
  docs(branch: number): Uint32Array {
    let d = this.decoded[branch];
    if (!d) {
      d = decodePostings(this.postings.subarray(this.offsets[branch]!, this.offsets[branch + 1]!), this.counts[branch]!);
      this.decoded[branch] = d;
    }
    return d;
  }

  /**
   * Ascending documents on at least one of `branches` (indexes, each once), of
   * `docCount` documents. Marks a bitmap rather than merging lists pairwise: with a
   * thousand branches that is one pass instead of a thousand merges. The union of every
   * branch (what `branch:*` searches) is kept.
   */
  docsOnAny(branches: readonly number[], docCount: number): Uint32Array {
    if (branches.length === 1) return this.docs(branches[0]!);
    const all = branches.length === this.names.length;
    if (all && this.onAnyBranch) return this.onAnyBranch;
    const marked = new Uint8Array(docCount);
    let n = 0;
    for (const b of branches) {
      for (const d of this.docs(b)) {
        if (marked[d] === 0) {
          marked[d] = 1;
          n++;
        }
      }
    }
    const out = new Uint32Array(n);
    for (let d = 0, i = 0; i < n; d++) if (marked[d] === 1) out[i++] = d;
    if (all) this.onAnyBranch = out;
    return out;
  }

  /** True when `doc` is on the branch (binary search). */
  has(branch: number, doc: number): boolean {
    return holdsSorted(this.docs(branch), doc);
  }
}

// Membership file: "TRAWLBRS", version u32, xxHash32 of the body u32, body: in version 1
// the encoding above, in version 2 that encoding compressed (compressed-section.ts: the history
// index's, whose thousands of lists, one per commit, repeat each other).
const MEMBERSHIP_MAGIC = 'TRAWLBRS';
const MEMBERSHIP_HEADER = 16;

/** `compressed`: version 2, as a shard whose sections are compressed (ShardJob.compressed) has its lists. */
export function writeMembershipFile(path: string, b: BranchLists, compressed = false): void {
  const lists = encodeBranchLists(b);
  const body = compressed ? compressSection(lists) : lists;
  const head = Buffer.alloc(MEMBERSHIP_HEADER);
  head.write(MEMBERSHIP_MAGIC, 0, 'latin1');
  head.writeUInt32LE(compressed ? 2 : 1, 8);
  head.writeUInt32LE(hash32(body), 12);
  writeFileAtomic(path, Buffer.concat([head, body]));
}

/**
 * The largest membership file read. It holds a posting list per branch over one shard's
 * documents, about a byte per document on the branch: this is some five thousand
 * branches over a shard of 100,000 documents. Its exact size is checked against the
 * manifest before the shard is served (index-health.ts); this bounds a file swapped since.
 */
const MEMBERSHIP_MAX_BYTES = 512 * 1024 * 1024;

export function readMembershipFile(path: string): BranchSet {
  const bytes = readBoundedFile(path, MEMBERSHIP_MAX_BYTES);
  if (bytes.length < MEMBERSHIP_HEADER || bytes.toString('latin1', 0, 8) !== MEMBERSHIP_MAGIC) throw new Error(`${path}: not a trawl membership file`);
  const version = bytes.readUInt32LE(8);
  if (version !== 1 && version !== 2) throw new Error(`${path}: unsupported membership file version ${version}`);
  const body = bytes.subarray(MEMBERSHIP_HEADER);
  if (hash32(body) !== bytes.readUInt32LE(12)) throw new Error(`${path}: membership file is corrupt (checksum mismatch)`);
  if (version === 1) return new BranchSet(body, path);
  let lists: Buffer;
  try {
    lists = decompressSection(body);
  } catch (err) {
    throw new Error(`${path}: membership file ${(err as Error).message}`);
  }
  return new BranchSet(lists, path);
}
