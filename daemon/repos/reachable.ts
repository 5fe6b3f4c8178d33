// Whether a commit named by its id is one a request may read: reachable from the refs
// the repository serves (its indexed branches, as they are now, and its tags). An object
// only the reflog, a stash or a dropped branch still holds (a commit reset away, a
// force-push's old history) stays in the object database until git collects it; naming
// it by id must not read it.
//
// The answer is libgit2's (git_graph_reachable_from_any: a merge-base walk in native code,
// on nodegit's threads, never the main thread). It is remembered per repository, index
// generation and ref tips: a commit checked once costs nothing after, until a ref moves
// or the index changes (a branch reset away from a commit makes it unreachable again).
import { createHash } from 'node:crypto';
import NodeGit from 'nodegit';
import type { GitRef } from './git.ts';
import { peelToCommits } from './refs.ts';

/** The refs a repository's index was built from, and which build that was. */
export interface IndexedRefs {
  /** refs[0] is the default branch ("HEAD" when it was detached). */
  refs: readonly GitRef[];
  generation: number;
}

// Bounds on what is remembered: repositories (least recently asked first out), answers per
// repository, peeled tags (all repositories).
const MAX_REPOS = 64;
const MAX_ANSWERS = 10_000;
const MAX_PEELED = 100_000;

interface Remembered {
  /** generation and ref tips the answers hold for. */
  key: string;
  answers: Map<string, Promise<boolean>>;
}

const byRepo = new Map<string, Remembered>();
/** Tag target id (a tag object or a commit) -> its commit: objects never change, so neither does this. */
const peeled = new Map<string, string>();

/** Whether the commit `id` (40 hex digits) is reachable from the indexed branches or the tags of `repo`. */
export async function reachableCommit(repo: NodeGit.Repository, indexed: IndexedRefs, id: string): Promise<boolean> {
  const tips = await tipsOf(repo, indexed);
  if (tips.includes(id)) return true;
  const key = `${indexed.generation}:${createHash('sha1').update(tips.join(',')).digest('hex')}`;
  const where = repo.path();
  let known = byRepo.get(where);
  if (known === undefined || known.key !== key) known = { key, answers: new Map() };
  byRepo.delete(where);
  byRepo.set(where, known);
  for (const oldest of byRepo.keys()) {
    if (byRepo.size <= MAX_REPOS) break;
    byRepo.delete(oldest);
  }
  let answer = known.answers.get(id);
  if (answer === undefined) {
    if (known.answers.size >= MAX_ANSWERS) known.answers.delete(known.answers.keys().next().value!);
    // Concurrent requests for one id share one walk.
    answer = walk(repo, id, tips);
    known.answers.set(id, answer);
    const answers = known.answers;
    answer.catch(() => answers.delete(id));
  }
  return answer;
}

async function walk(repo: NodeGit.Repository, id: string, tips: string[]): Promise<boolean> {
  if (tips.length === 0) return false;
  return (
    (await NodeGit.Graph.reachableFromAny(
      repo,
      NodeGit.Oid.fromString(id),
      tips.map((t) => NodeGit.Oid.fromString(t)),
    )) === 1
  );
}

/**
 * The commits of the indexed branches (the default one "HEAD" when the index read a
 * detached HEAD) and of every tag, as the repository holds them now, sorted, each once.
 * One native call lists the refs; tags are peeled once per tag object.
 */
async function tipsOf(repo: NodeGit.Repository, indexed: IndexedRefs): Promise<string[]> {
  const branches = new Set(indexed.refs.filter((r) => r.kind === 'branch').map((r) => `refs/heads/${r.name}`));
  const tips = new Set<string>();
  const tagTargets: Array<{ ref: NodeGit.Reference; target: string }> = [];
  for (const ref of await repo.getReferences()) {
    const name = ref.name();
    if (branches.has(name)) tips.add(ref.target().tostrS());
    else if (name.startsWith('refs/tags/')) tagTargets.push({ ref, target: ref.target().tostrS() });
  }
  if (indexed.refs[0]?.name === 'HEAD') {
    const head = await NodeGit.Reference.nameToId(repo, 'HEAD').then(
      (o) => o.tostrS(),
      () => undefined,
    );
    if (head !== undefined) tips.add(head);
  }
  const unpeeled: typeof tagTargets = [];
  for (const t of tagTargets) {
    const commit = peeled.get(t.target);
    if (commit !== undefined) tips.add(commit);
    else unpeeled.push(t);
  }
  const commits = await peelToCommits(unpeeled.map((t) => t.ref));
  // The tips come from this call's peeling: the cache is only what the next call may skip.
  if (peeled.size + unpeeled.length > MAX_PEELED) peeled.clear();
  unpeeled.forEach((t, i) => {
    const commit = commits[i];
    // Not remembered: a tag of a tree or blob (no commit to reach from), or one unreadable now.
    if (commit === undefined) return;
    tips.add(commit);
    peeled.set(t.target, commit);
  });
  return [...tips].sort();
}
