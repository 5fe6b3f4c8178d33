// A state of the index held open, and a repository's files as that state has them: what a
// reader comparing two states of the index reads (the watches' check reads what a push
// changed this way, from the shards the sync wrote and those it replaced, instead of asking
// git for the diff again).
//
// A repository's files are read per ref from the branch lists of its shards (a compound
// shard's member range, a delta shard's membership file): each document on the ref gives
// its path, its git blob id and, when asked, its bytes. Documents on no ref (replaced by a
// delta) are not files of the repository. A document without a blob id (a directory's, a
// shard written before blob ids) makes the repository unreadable here: two of its
// versions could not be told apart without reading both.

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

/** One state of the index, held: its shard files stay mapped, and on disk, until released. */
export interface IndexHold {
  /** The repository's manifest in this state. */
  manifest(repoId: number): LoadedManifest | undefined;
  /** The repository's files, when this state holds it at `generation` and every document has a blob id; else undefined. */
  files(repoId: number, generation: number): RefFiles | undefined;
  /** Lets the state go (once; later calls do nothing). */
  release(): void;
}

/**
 * The files of the repository of manifest `m` in a snapshot's entries, read through `open`;
 * undefined as IndexHold.files says, or when the entries do not hold each of its shards at
 * its generation (a node of a cluster may hold only some).
 */
export function refFiles(entries: readonly ShardEntry[], m: LoadedManifest, open: (e: ShardEntry) => Shard): RefFiles | undefined {
  const refs = new Map<string, Map<string, HeldFile>>();
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
          let files = refs.get(name);
          if (!files) refs.set(name, (files = new Map()));
          for (const doc of shard.branches.docs(b)) {
            const oid = shard.oid(doc);
            if (oid === undefined) return undefined;
            files.set(shard.name(doc), { oid, read: () => shard.contentOf(doc) });
          }
        }
      }
    }
  } catch (err) {
    // A damaged shard is the searches' to report; here the files are unknown.
    if (err instanceof ShardError) return undefined;
    throw err;
  }
  return shards === m.shards.length ? refs : undefined;
}
