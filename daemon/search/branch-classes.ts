// The branches a shard's search covers, grouped by the tree the plan becomes on them
// (match-tree.ts specialize): the repository and ref filters are decided per repository
// and branch before any document is looked at, and the branches on which they come out
// the same are searched as one class, with one tree (shard-search.ts).

import type { RepoFacts, Shard, ShardFacts } from '../index/shard-reader.ts';
import type { Plan, PlanNode } from '../query/terms.ts';
import { literalRef, repoAtom, repoAtoms, specialize, type RepoAtom, type Tree } from './match-tree.ts';

/** A repository of a shard to search (shard-reader.ts members), with its current record. */
export interface SearchMember {
  member: number;
  /** Its flags as listed now (the manifest's): they override those the shard stored. */
  repo?: RepoFacts | undefined;
}

/** Branches of the shard's repositories whose versions the same tree decides (see branchClasses). */
export interface BranchClass {
  /** Its branches (indexes into the shard's branch lists) by member, members ascending. */
  byMember: Map<number, number[]>;
  tree: Tree;
  /** Its documents (classDocs), when known before the search. */
  docs?: Uint32Array | null;
}

/** Every repository of the shard, as it stored them (one list per shard). */
export function everyMember(shard: Shard): SearchMember[] {
  let all = allMembers.get(shard);
  if (!all) allMembers.set(shard, (all = shard.members.map((_, member) => ({ member }))));
  return all;
}

const allMembers = new WeakMap<Shard, SearchMember[]>();

/**
 * Per shard, the class of its members' default branches for the last members list a
 * search gave (a worker gives the same list while the index does not change): a query
 * without a repository or branch filter puts every member there, and a compound shard's
 * hundreds of members are then grouped once, not once per query.
 */
const plainClasses = new WeakMap<Shard, { members: readonly SearchMember[]; byMember: Map<number, number[]>; docs: Uint32Array | null; first: number }>();

/** The repository and ref filters of each plan (kept while the plan is). */
const atomsOfPlan = new WeakMap<Plan, RepoAtom[]>();

/**
 * Groups the branches of the repositories searched by the tree the plan becomes on them.
 * Without a `branch:` filter only each repository's default branch is searched. The
 * repository and ref filters (repoAtoms) are decided per repository and branch; those
 * that come out the same share a tree (usually one or two classes however many
 * repositories and branches there are: a compound shard's hundreds of repositories cost
 * one specialisation, not one each), and classes whose tree is false are dropped.
 */
export function branchClasses(plan: Plan, shard: Shard, members: readonly SearchMember[]): BranchClass[] {
  let atoms = atomsOfPlan.get(plan);
  if (!atoms) atomsOfPlan.set(plan, (atoms = repoAtoms(plan.root)));
  const names = shard.branches.names;
  if (atoms.length === 0 && plan.branches.length === 0) {
    let plain = plainClasses.get(shard);
    if (plain?.members !== members) {
      const byMember = new Map<number, number[]>();
      for (const { member } of members) {
        const m = shard.members[member]!;
        if (m.end !== m.first) byMember.set(member, [m.branchFirst]);
      }
      plain = {
        members,
        byMember,
        docs: byMember.size === 0 ? null : classDocs(shard, byMember),
        first: byMember.size === 0 ? -1 : byMember.keys().next().value!,
      };
      plainClasses.set(shard, plain);
    }
    if (plain.first < 0) return [];
    const first = plain.first;
    const repo = members.find((m) => m.member === first)?.repo;
    const tree = specialize(plan.root, shard.facts(first, repo), names[shard.members[first]!.branchFirst]!);
    return tree.op === 'const' && !tree.value ? [] : [{ byMember: plain.byMember, tree, docs: plain.docs }];
  }
  const named = namedClassesOf(plan, atoms, shard, members);
  if (named !== undefined) return named;
  const out: BranchClass[] = [];
  for (const g of filterGroups(shard, members, atoms, plan.branches.length > 0)) {
    const tree = specialize(plan.root, g.facts, g.name);
    if (tree.op === 'const' && !tree.value) continue;
    if (g.docs === undefined) g.docs = classDocs(shard, g.byMember);
    out.push({ byMember: g.byMember, tree, docs: g.docs });
  }
  return out;
}

/** Branches on which every repository and ref filter of a plan comes out the same, and one of them to specialise the plan on. */
interface FilterGroup {
  byMember: Map<number, number[]>;
  /** A repository and branch of the group: the plan's tree on it is the tree on all of them. */
  facts: ShardFacts;
  name: string;
  /** Their documents (classDocs), once a search needed them. */
  docs?: Uint32Array | null;
}

/**
 * Per shard, the filter groups of the last few sets of filters searched (their text, and
 * whether every branch is searched), for the members list they were made for. Deciding
 * the filters for each ref costs a history index (a ref per commit, thousands) a
 * millisecond or more a query, and distinct queries mostly repeat their filters
 * (`branch:*` for every version, a `repo:` or a branch glob).
 */
const groupsOf = new WeakMap<Shard, { members: readonly SearchMember[]; byKey: Map<string, FilterGroup[]> }>();
const GROUP_SETS_PER_SHARD = 16;

function filterGroups(shard: Shard, members: readonly SearchMember[], atoms: readonly RepoAtom[], everyBranch: boolean): FilterGroup[] {
  let kept = groupsOf.get(shard);
  if (kept?.members !== members) groupsOf.set(shard, (kept = { members, byKey: new Map() }));
  const key = `${everyBranch ? 1 : 0}${JSON.stringify(atoms)}`;
  const found = kept.byKey.get(key);
  if (found !== undefined) {
    kept.byKey.delete(key);
    kept.byKey.set(key, found);
    return found;
  }
  const groups = decideFilters(shard, members, atoms, everyBranch);
  kept.byKey.set(key, groups);
  if (kept.byKey.size > GROUP_SETS_PER_SHARD) kept.byKey.delete(kept.byKey.keys().next().value!);
  return groups;
}

/** The filter groups of the members' branches (every branch, or each member's default branch). */
function decideFilters(shard: Shard, members: readonly SearchMember[], atoms: readonly RepoAtom[], everyBranch: boolean): FilterGroup[] {
  const names = shard.branches.names;
  const groups = new Map<string, FilterGroup>();
  for (const { member, repo } of members) {
    const m = shard.members[member]!;
    if (m.end === m.first) continue;
    // (Facts only when a filter or the tree needs them: one object less per repository.)
    let facts: ShardFacts | undefined;
    const last = everyBranch ? m.branchEnd : m.branchFirst + 1;
    for (let b = m.branchFirst; b < last; b++) {
      let key = '';
      if (atoms.length > 0) {
        facts ??= shard.facts(member, repo);
        for (const a of atoms) key += repoAtom(a, facts, names[b]!) ? '1' : '0';
      }
      let g = groups.get(key);
      if (!g) {
        facts ??= shard.facts(member, repo);
        groups.set(key, (g = { byMember: new Map(), facts, name: names[b]! }));
      }
      const list = g.byMember.get(member);
      if (list) list.push(b);
      else g.byMember.set(member, [b]);
    }
  }
  return [...groups.values()];
}

/**
 * Per shard, the named classes of its last search, for the plan and members they were made
 * for. A search at a commit decides them twice: when its candidates are found in the
 * thread that asks (searcher.ts candidatesHere) and when those are searched there; the
 * second time takes them, with the documents the first found on their branches.
 */
const lastNamed = new WeakMap<Shard, { plan: Plan; members: readonly SearchMember[]; classes: BranchClass[] | undefined }>();

function namedClassesOf(plan: Plan, atoms: readonly RepoAtom[], shard: Shard, members: readonly SearchMember[]): BranchClass[] | undefined {
  const last = lastNamed.get(shard);
  if (last !== undefined && last.plan === plan && sameMembers(last.members, members)) return last.classes;
  const classes = namedBranches(plan, atoms, shard, members);
  lastNamed.set(shard, { plan, members, classes });
  return classes;
}

function sameMembers(a: readonly SearchMember[], b: readonly SearchMember[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.member !== b[i]!.member || a[i]!.repo !== b[i]!.repo) return false;
  return true;
}

/**
 * branchClasses when every filter of the plan names a ref exactly (`rev:v1.2`, a commit id
 * of a history index: history/): the named refs are found by name instead of deciding the
 * filters for each of the shard's refs (a history index has a ref per commit, thousands),
 * provided the tree is false on every other ref. Undefined when that does not hold (the
 * caller decides each ref).
 */
function namedBranches(plan: Plan, atoms: readonly RepoAtom[], shard: Shard, members: readonly SearchMember[]): BranchClass[] | undefined {
  if (atoms.length === 0 || !atoms.every((a) => a.op === 'branch' && literalRef(a.glob) !== undefined)) return undefined;
  const first = members.find(({ member }) => shard.members[member]!.end !== shard.members[member]!.first);
  if (first === undefined) return [];
  // On a ref no filter names, every filter is false: '' is no ref's name. (Decided from the
  // plan alone when it can be, once per plan; specialising costs each shard of a history.)
  if (!falseOffNamedRefs(plan.root)) {
    const others = specialize(plan.root, shard.facts(first.member, first.repo), '');
    if (!(others.op === 'const' && !others.value)) return undefined;
  }
  const byName = branchIndexes(shard);
  // A class is specialised on one of its refs once its documents are known: a ref without
  // documents in the shard (a commit of the history a delta shard holds nothing at) makes no
  // class, and a shard none of whose named refs has one costs no specialising or postings.
  const classes = new Map<string, { byMember: Map<number, number[]>; facts: ShardFacts; glob: string }>();
  for (const { member, repo } of members) {
    const m = shard.members[member]!;
    if (m.end === m.first) continue;
    let facts: ShardFacts | undefined;
    for (const glob of new Set(atoms.map((a) => (a as Extract<RepoAtom, { op: 'branch' }>).glob))) {
      for (const b of byName.get(glob) ?? []) {
        if (b < m.branchFirst || b >= m.branchEnd || shard.branches.count(b) === 0) continue;
        facts ??= shard.facts(member, repo);
        let key = '';
        for (const a of atoms) key += repoAtom(a, facts, glob) ? '1' : '0';
        let cls = classes.get(key);
        if (!cls) classes.set(key, (cls = { byMember: new Map(), facts, glob }));
        const list = cls.byMember.get(member);
        if (list === undefined) cls.byMember.set(member, [b]);
        else if (!list.includes(b)) list.push(b);
      }
    }
  }
  const out: BranchClass[] = [];
  for (const { byMember, facts, glob } of classes.values()) {
    for (const list of byMember.values()) list.sort((a, b) => a - b);
    const tree = specialize(plan.root, facts, glob);
    if (!(tree.op === 'const' && !tree.value)) out.push({ byMember, tree });
  }
  return out;
}

const offNamedRefs = new WeakMap<PlanNode, boolean>();

/**
 * Whether a plan whose every repository or ref filter is a `branch:` naming one ref is
 * false on any other ref, whatever else holds: its value with those filters false and every
 * other leaf unknown, in three-valued logic, is false. That is the constant the plan
 * specialised on such a ref (match-tree.ts specialize, whose folding is this logic) comes
 * to; a leaf that folds to a constant only in some shards (`lang:`) is left unknown here,
 * so false here is false in every shard, and anything else is left to specialize.
 */
export function falseOffNamedRefs(root: PlanNode): boolean {
  let known = offNamedRefs.get(root);
  if (known === undefined) offNamedRefs.set(root, (known = valueOffRefs(root) === false));
  return known;
}

function valueOffRefs(n: PlanNode): boolean | undefined {
  switch (n.op) {
    case 'const':
      return n.value;
    case 'branch':
      return n.glob === '' ? undefined : false; // ('' itself would name the ref '')
    case 'not': {
      const v = valueOffRefs(n.child);
      return v === undefined ? undefined : !v;
    }
    case 'and':
    case 'or': {
      const absorbing = n.op === 'or';
      let open = false;
      for (const c of n.children) {
        const v = valueOffRefs(c);
        if (v === absorbing) return absorbing;
        if (v === undefined) open = true;
      }
      return open ? undefined : !absorbing;
    }
    default:
      return undefined;
  }
}

/** Per shard, the indexes of its branch lists by name (a name may be a branch of several members). */
const indexesByName = new WeakMap<Shard, Map<string, number[]>>();

function branchIndexes(shard: Shard): Map<string, number[]> {
  let byName = indexesByName.get(shard);
  if (byName === undefined) {
    byName = new Map();
    shard.branches.names.forEach((name, b) => {
      const list = byName!.get(name);
      if (list === undefined) byName!.set(name, [b]);
      else list.push(b);
    });
    indexesByName.set(shard, byName);
  }
  return byName;
}

/**
 * The documents on at least one of a class's branches, ascending; null when that is every
 * document of the shard. Members hold ascending ranges of documents, so their lists follow
 * one another.
 */
export function classDocs(shard: Shard, byMember: BranchClass['byMember']): Uint32Array | null {
  const lists: Uint32Array[] = [];
  let total = 0;
  for (const branches of byMember.values()) {
    const docs = branches.length === 1 ? shard.branches.docs(branches[0]!) : shard.branches.docsOnAny(branches, shard.docCount);
    lists.push(docs);
    total += docs.length;
  }
  if (total === shard.docCount) return null;
  if (lists.length === 1) return lists[0]!;
  const out = new Uint32Array(total);
  let at = 0;
  for (const l of lists) {
    out.set(l, at);
    at += l.length;
  }
  return out;
}

/**
 * Per shard, each member's branch names by their place among its branches (made once: a
 * history index's member has a branch per commit, thousands).
 */
const branchOrders = new WeakMap<Shard, Map<number, Map<string, number>>>();

/** Sorts each hit's branch names in the shard's order of its member's branches (names are unique within a member). */
export function sortBranches(shard: Shard, hits: ReadonlyArray<{ member: number; branches: string[] }>): void {
  let orders = branchOrders.get(shard);
  if (orders === undefined) branchOrders.set(shard, (orders = new Map()));
  for (const h of hits) {
    if (h.branches.length < 2) continue;
    let order = orders.get(h.member);
    if (!order) {
      const m = shard.members[h.member]!;
      orders.set(h.member, (order = new Map(shard.branches.names.slice(m.branchFirst, m.branchEnd).map((n, i) => [n, i]))));
    }
    h.branches.sort((a, b) => order.get(a)! - order.get(b)!);
  }
}
