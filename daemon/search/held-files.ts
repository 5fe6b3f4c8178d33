// A state of the index held open, and a repository's documents as that state has them:
// what a reader comparing two states of the index reads (the watches' check reads what a
// push changed this way, from the shards the sync wrote and those it replaced, instead of
// asking git for the diff again).
//
// A repository's documents are read per ref from the branch lists of its shards (a compound
// shard's member range, a delta shard's membership file), as lists of document numbers per
// shard file: no path or blob id is decoded to hold them. Two states are compared list by
// list (changedFiles): a document in the same file and on the same ref in both is the same
// bytes, so only the documents on one side alone are decoded, into the files they are. In
// Linux as one repository a push changes a few of its 78k documents: decoding them all,
// twice, cost about 200 ms of the thread that serves requests on every push.
//
// A changed document without a blob id (a directory's, a shard written before blob ids)
// makes the change unknown: two of its versions could not be told apart without reading
// both.

import type { LoadedManifest } from '../index/manifest.ts';
import type { Shard } from '../index/shard-reader.ts';
import { ShardError } from '../index/shard-error.ts';
import type { ShardEntry } from './visible-shards.ts';

/** A file as the index holds it: its blob id, and its bytes, read when asked (throws ShardError when they are damaged). */
export interface HeldFile {
  oid: string;
  read(): Buffer;
}

/** A repository's files: per ref name, by path. */
export type RefFiles = ReadonlyMap<string, ReadonlyMap<string, HeldFile>>;

/** What a comparison reads of a shard: a document's path, blob id and bytes. */
export type DocReader = Pick<Shard, 'name' | 'oid' | 'contentOf'>;

/** The documents of a repository on one ref in one shard file, ascending. */
export interface RefPart {
  /** The shard file: documents are numbered per file. */
  file: string;
  shard: DocReader;
  docs: Uint32Array;
}

/** A repository's documents: per ref name, by shard file. */
export type RefParts = ReadonlyMap<string, readonly RefPart[]>;

/** One state of the index, held: its shard files stay mapped, and on disk, until released. */
export interface IndexHold {
  /** The repository's manifest in this state. */
  manifest(repoId: number): LoadedManifest | undefined;
  /** The repository's documents, when this state holds it at `generation`; else undefined. */
  parts(repoId: number, generation: number): RefParts | undefined;
  /** Lets the state go (once; later calls do nothing). */
  release(): void;
}

/**
 * The documents of the repository of manifest `m` in a snapshot's entries, read through
 * `open`; undefined as IndexHold.parts says, or when the entries do not hold each of its
 * shards at its generation (a node of a cluster may hold only some).
 */
export function refParts(entries: readonly ShardEntry[], m: LoadedManifest, open: (e: ShardEntry) => Shard): RefParts | undefined {
  const refs = new Map<string, RefPart[]>();
  let shards = 0;
  try {
    for (const entry of entries) {
      for (const em of entry.members) {
        if (em.repoId !== m.repoId) continue;
        if (em.generation !== m.generation) return undefined;
        shards++;
        const shard = open(entry);
        const member = shard.members[em.member];
        if (!member) return undefined;
        for (let b = member.branchFirst; b < member.branchEnd; b++) {
          const name = shard.branches.names[b]!;
          let parts = refs.get(name);
          if (!parts) refs.set(name, (parts = []));
          parts.push({ file: entry.path, shard, docs: shard.branches.docs(b) });
        }
      }
    }
  } catch (err) {
    // A damaged shard is the searches' to report; here the documents are unknown.
    if (err instanceof ShardError) return undefined;
    throw err;
  }
  return shards === m.shards.length ? refs : undefined;
}

/**
 * The files of each ref that differ between two states: those of the documents one state
 * has on the ref and the other has not (a file moved to another shard file unchanged is on
 * both sides, with the same blob id), per ref. Undefined when the states hold other refs, or
 * such a document has no blob id.
 */
export function changedFiles(before: RefParts, after: RefParts): { before: RefFiles; after: RefFiles } | undefined {
  if (before.size !== after.size || [...before.keys()].some((ref) => !after.has(ref))) return undefined;
  const was = new Map<string, Map<string, HeldFile>>();
  const now = new Map<string, Map<string, HeldFile>>();
  for (const ref of before.keys()) {
    const mine = (parts: readonly RefPart[] | undefined) => new Map((parts ?? []).map((p) => [p.file, p]));
    const b = mine(before.get(ref));
    const a = mine(after.get(ref));
    const gone = new Map<string, HeldFile>();
    const came = new Map<string, HeldFile>();
    for (const file of new Set([...b.keys(), ...a.keys()])) {
      const old = b.get(file);
      const fresh = a.get(file);
      if (!onlyIn(old, fresh?.docs, gone) || !onlyIn(fresh, old?.docs, came)) return undefined;
    }
    was.set(ref, gone);
    now.set(ref, came);
  }
  return { before: was, after: now };
}

/** Adds to `out` the files of `part`'s documents that `other` (ascending) lacks; false when one has no blob id. */
function onlyIn(part: RefPart | undefined, other: Uint32Array | undefined, out: Map<string, HeldFile>): boolean {
  if (!part) return true;
  const { shard, docs } = part;
  let j = 0;
  for (const doc of docs) {
    while (other && j < other.length && other[j]! < doc) j++;
    if (other && j < other.length && other[j] === doc) continue;
    const oid = shard.oid(doc);
    if (oid === undefined) return false;
    out.set(shard.name(doc), { oid, read: () => shard.contentOf(doc) });
  }
  return true;
}
