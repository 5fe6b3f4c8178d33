// A shard's hits as the files of its reply (protocol.ts ShardReply), and its failure as
// its reply, wherever the shard was searched: in a worker thread (search-worker.ts) or in
// the thread that asked (here-run.ts). The files are left unshaped here; whoever holds the
// documents shapes them (file-json.ts).

import { isDamage } from '../index/section-checks.ts';
import { ShardError } from '../index/shard-error.ts';
import type { Shard } from '../index/shard-reader.ts';
import type { SearchMember } from './branch-classes.ts';
import { resultRepo, unshapedFile, type ResultRepo, type ShapedFile } from './file-json.ts';
import type { MemberRef, ShardRef, ShardReply } from './protocol.ts';
import type { ShardHit } from './shard-search.ts';
import type { RepositoryInfo } from './types.ts';

/** The repository of a hit of a shard, as results show it (made once per member asked for). */
export type RepoOf = (member: number) => ResultRepo;

const NONE: number[] = [];

/** The results' repositories of a shard's members searched (MemberRef by member). */
export function reposOf(refs: readonly MemberRef[], shard: Shard, baseUrl: string): RepoOf {
  const made = new Map<number, ResultRepo>();
  const single = refs.length === 1 ? refs[0]! : undefined;
  return (member) => {
    let r = made.get(member);
    if (!r) {
      const ref = single?.member === member ? single : refs.find((m) => m.member === member)!;
      made.set(member, (r = resultRepo(ref.repoId, ref.repo, shard, baseUrl, member)));
    }
    return r;
  };
}

/** The repositoryInfo entries of files' repositories, each once. */
export function infosOf(files: readonly ShapedFile[], repos: RepoOf): RepositoryInfo[] {
  const out: RepositoryInfo[] = [];
  let last = -1;
  for (const f of files) {
    if (f.hit.member === last) continue;
    last = f.hit.member;
    const info = repos(last).info;
    if (!out.includes(info)) out.push(info);
  }
  return out;
}

/** Shard `i`'s hits as unshaped file results; what only scoring (done) needed is dropped: a reply may be packed and copied. */
export function filesOf(hits: ShardHit[], shard: Shard, repos: RepoOf, i: number): ShapedFile[] {
  return hits.map((hit) => {
    const f = unshapedFile(hit, repos(hit.member), shard.name(hit.doc), i);
    f.hit.termFreqs = NONE;
    return f;
  });
}

/** The members of a shard a search searches: all of them (`only` null or absent), or the caller's share (indexes into its members). */
export function searchedMembers(ref: Pick<ShardRef, 'members'>, only: readonly number[] | null | undefined): { refs: MemberRef[]; search: SearchMember[] } {
  const refs = only ? only.map((k) => ref.members[k]!) : ref.members;
  return { refs, search: refs.map((m) => ({ member: m.member, repo: m.repo })) };
}

/**
 * The reply of a shard whose search failed with `err`: corrupt when it is a ShardError or a
 * reader's finding of damage in a section not yet verified (section-checks.ts), as a
 * checksum's would be; the caller then drops the shard's mapping.
 */
export function failedReply(shardPath: string, err: unknown, queuedNs: number): Extract<ShardReply, { status: 'failed' }> {
  const error = isDamage(err) ? new ShardError(shardPath, err.message) : err;
  return { status: 'failed', error: (error as Error).message, queuedNs, corrupt: error instanceof ShardError };
}
