// The shards a search reads, decided before any is opened: the snapshot's entries (what
// the searcher holds of the manifests), narrowed to the repositories the caller may see and
// the query's repository filters leave (decided from the names and flags the manifests
// list), to the documents a caller named, or to the candidates found before the search.
// Every shard left out that the caller may see counts as ruled out by the filters
// (stats.shardsSkippedFilter).

import { basename } from 'node:path';
import type { ManifestRepo } from '../index/manifest.ts';
import type { PlanNode } from '../query/terms.ts';
import { repoScoped, repoVerdict, requiredRepoName, type RepoFlags } from './match-tree.ts';
import type { SearchOptions } from './search-options.ts';

/** A shard file of the snapshot, with the repositories it serves. */
export interface ShardEntry {
  path: string;
  membership?: string;
  symbols?: string;
  /** shardKey(path, membership, symbols): how the workers and the shaping cache name the open shard. */
  key: string;
  /**
   * The repositories it serves, by ascending member: a shard of one repository's, or the
   * members of a compound shard whose manifests name it (the others are tombstoned there).
   */
  members: EntryMember[];
  /** Which of its sections and documents have passed their checksums, shared by every thread that reads the file (index/section-checks.ts). */
  verified: SharedArrayBuffer;
  /** The same for its symbols file. */
  symbolsVerified?: SharedArrayBuffer;
  /** Its place in the snapshot's catalog (what a search names it by). */
  index: number;
}

/** A repository a shard serves (ShardEntry.members). */
export interface EntryMember {
  /** Its member number in the shard file (shard-reader.ts members). */
  member: number;
  repoId: number;
  /** Who may see the repository (IndexView.visibility): what a search's repoFilter is asked. */
  visibility: 'public' | 'private';
  /** The manifest's generation: what a shard error marks broken. */
  generation: number;
  /**
   * In a cluster, a copy into a compound shard (the manifest's copyOf): the generation whose
   * documents it holds, under whose unit it answers until the copy is published.
   */
  copyOf?: number;
  /** From the manifest; undefined for manifests written before it was recorded. */
  repo?: ManifestRepo;
  /** Its name and flags as a query's repository filters read them (visibleShards), made once per snapshot. */
  flags?: RepoFlags;
}

export interface Snapshot {
  entries: ShardEntry[];
  /** The pool's catalog of its entries (SearchPool.catalog), made at its first search. */
  catalog?: number;
  /** Repositories left out because their index is broken, and how many shards each had. */
  broken: Array<{ repoId: number; visibility: 'public' | 'private'; shards: number }>;
  /** Searches running on this snapshot. */
  users: number;
  /** Its entries by "<repoId>/<shard file>" (a cluster's units) and copies by "<repoId>@<generation copied>", made when first asked for. */
  byUnit?: Map<string, { entry: ShardEntry; member: number }>;
  /** Its members by repository name, lower case (those whose name is not plain ASCII under ''), made when first asked for. */
  byName?: Map<string, Array<{ entry: ShardEntry; member: number }>>;
}

/** The shards a search reads (visibleShards). */
export interface VisibleShards {
  entries: ShardEntry[];
  /** Per shard, the members it reads when that is only some of them (indexes into its members; null: all). */
  only: Array<number[] | null> | undefined;
  /** Per shard, the only documents it examines (SearchOptions.docs); undefined: its candidates. */
  docs?: number[][] | undefined;
  /** The shards the caller may see that the query's filters left out. */
  ruledOut: number;
}

/** `visible` with each shard's candidates as its documents (searchSnapshot), less the shards given none (null: ruled out by the filters). */
export function withCandidates(visible: VisibleShards, found: ReadonlyArray<number[] | null>): VisibleShards {
  return narrowed(visible, (_, i) => found[i]!);
}

/** `visible` narrowed to the shards `docs` names, each with its documents (SearchOptions.docs); as it is without. */
export function withDocs(visible: VisibleShards, docs: SearchOptions['docs']): VisibleShards {
  if (docs === undefined) return visible;
  return narrowed(visible, (e, i) => {
    const members = visible.only?.[i] ?? e.members.map((_, k) => k);
    const file = basename(e.path);
    // (A compound shard's documents are the shard's: the lists of its members are one set.)
    const named = new Set(members.flatMap((k) => docs.get(`${e.members[k]!.repoId}/${file}`) ?? []));
    return named.size === 0 ? null : [...named].sort((a, b) => a - b);
  });
}

/** `visible` with each shard's documents `docsOf` gives it; a shard given null is left out, counted as ruled out. */
function narrowed(visible: VisibleShards, docsOf: (e: ShardEntry, i: number) => number[] | null): VisibleShards {
  const out: VisibleShards = { entries: [], only: visible.only && [], docs: [], ruledOut: visible.ruledOut };
  visible.entries.forEach((e, i) => {
    const docs = docsOf(e, i);
    if (docs === null) {
      out.ruledOut++;
      return;
    }
    out.entries.push(e);
    out.only?.push(visible.only![i]!);
    out.docs!.push(docs);
  });
  return out;
}

/**
 * The shards a search reads: those holding a repository the caller may see (`filter`,
 * asked of each repository) that the query's repository filters do not rule out (decided
 * from the names and flags the manifests list, match-tree.ts repoVerdict), and per shard
 * the members it reads when that is only some of them.
 */
export function visibleShards(snapshot: Snapshot, filter: SearchOptions['repoFilter'], root: PlanNode): VisibleShards {
  const all = snapshot.entries;
  const scoped = repoScoped(root);
  if (!filter && !scoped) return { entries: all, only: undefined, ruledOut: 0 };
  // (A repository's shards share one flags object: a history's several shards are decided once.)
  let lastFlags: RepoFlags | undefined;
  let lastReads = true;
  const reads = (m: EntryMember): boolean => {
    if (!scoped || m.flags === undefined) return true;
    if (m.flags !== lastFlags) {
      lastFlags = m.flags;
      lastReads = repoVerdict(root, m.flags) !== false;
    }
    return lastReads;
  };
  const name = requiredRepoName(root);
  if (name !== undefined) return namedShards(snapshot, name, filter, reads);
  const entries: ShardEntry[] = [];
  let only: Array<number[] | null> | undefined;
  let ruledOut = 0;
  for (const e of all) {
    const seen: number[] = [];
    let visible = false;
    e.members.forEach((m, k) => {
      if (filter && !filter(m)) return;
      visible = true;
      if (reads(m)) seen.push(k);
    });
    if (seen.length === 0) {
      if (visible) ruledOut++;
      continue;
    }
    if (seen.length < e.members.length) only ??= entries.map(() => null);
    entries.push(e);
    only?.push(seen.length === e.members.length ? null : seen);
  }
  return { entries, only, ruledOut };
}

/**
 * visibleShards for a plan that names its repository (`repo:^name$`): the members of that
 * name, and those whose name the verdict cannot read, looked up rather than every member
 * asked. The same answer as asking every one, in the same order.
 */
function namedShards(snapshot: Snapshot, name: string, filter: SearchOptions['repoFilter'], reads: (m: EntryMember) => boolean): VisibleShards {
  if (!snapshot.byName) {
    snapshot.byName = new Map();
    for (const entry of snapshot.entries) {
      entry.members.forEach((m, member) => {
        const key = m.flags?.lowerName ?? '';
        let list = snapshot.byName!.get(key);
        if (!list) snapshot.byName!.set(key, (list = []));
        list.push({ entry, member });
      });
    }
  }
  const found = [...(snapshot.byName.get(name) ?? []), ...(name === '' ? [] : (snapshot.byName.get('') ?? []))];
  const seen = new Map<ShardEntry, number[]>();
  for (const { entry, member } of found) {
    const m = entry.members[member]!;
    if ((filter && !filter(m)) || !reads(m)) continue;
    let list = seen.get(entry);
    if (!list) seen.set(entry, (list = []));
    list.push(member);
  }
  const entries = [...seen.keys()].sort((a, b) => a.index - b.index);
  const only = entries.map((e) => {
    const members = seen.get(e)!.sort((a, b) => a - b);
    return members.length === e.members.length ? null : members;
  });
  // The shards the caller may see that the filter left out (the count every search reports).
  let visible = 0;
  for (const e of snapshot.entries) if (!filter || e.members.some((m) => filter(m))) visible++;
  return { entries, only: only.some((o) => o !== null) ? only : undefined, ruledOut: visible - entries.length };
}
