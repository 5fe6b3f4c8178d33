// The match tree: a plan specialised to one shard before any posting is read.
//
// Filters on what a shard knows about itself (repository name, branch, archived, fork,
// visibility, the languages it holds) become constants, and constants fold away. A tree
// that folds to `false` skips the shard (shardsSkippedFilter). What remains is ordered by
// cost within each AND, cheapest first (language < file name < symbols < literal content
// < regex content; a negated term just before its positive kind: it needs one match, not
// all of them), so that a document is rejected by the cheapest test that can reject it.
// The candidates come from the positive terms whatever this order (shard-search.ts).

import RE2 from 're2';
import type { ShardFacts } from '../index/shard-reader.ts';
import type { PlanNode, Term } from '../query/terms.ts';
import { compileRefGlob } from '../repos/glob.ts';

export type Tree =
  | { op: 'const'; value: boolean }
  | { op: 'and' | 'or'; children: Tree[] }
  | { op: 'not'; child: Tree }
  | { op: 'content' | 'file' | 'sym'; term: Term; id: number }
  /** `lang` is an index into the shard's language list. */
  | { op: 'lang'; lang: number };

const TRUE: Tree = { op: 'const', value: true };
const FALSE: Tree = { op: 'const', value: false };

/**
 * The plan as it applies to the versions of this shard's documents on `branch`: a
 * document matches on a branch when it is on that branch and the tree, with `branch:`
 * filters decided for that branch, matches it (shard-search.ts groups branches that get
 * the same tree).
 */
export function specialize(node: PlanNode, facts: ShardFacts, branch: string): Tree {
  return simplify(bind(node, facts, branch));
}

/**
 * A `branch:` filter's test of a branch or tag name. `HEAD` names each repository's
 * default branch, whatever it is called (as zoekt reads it, and as clients that search the
 * default branch send it); any other value is a glob (repos/glob.ts).
 */
export function refFilter(glob: string): (name: string, isDefault: boolean) => boolean {
  let test = refFilters.get(glob);
  if (test) refFilters.delete(glob);
  else if (glob === 'HEAD') test = (_name, isDefault) => isDefault;
  else {
    const g = compileRefGlob(glob);
    test = (name) => g.test(name);
  }
  refFilters.set(glob, test);
  if (refFilters.size > REPO_PATTERNS_KEPT) refFilters.delete(refFilters.keys().next().value!);
  return test;
}

/** `branch:` globs compiled, the most recently used kept (as `repo:` patterns, below). */
const refFilters = new Map<string, (name: string, isDefault: boolean) => boolean>();

function bind(n: PlanNode, f: ShardFacts, branch: string): Tree {
  switch (n.op) {
    case 'and':
    case 'or':
      return { op: n.op, children: n.children.map((c) => bind(c, f, branch)) };
    case 'not':
      return { op: 'not', child: bind(n.child, f, branch) };
    case 'const':
      return n.value ? TRUE : FALSE;
    case 'content':
    case 'file':
    case 'sym':
      return { op: n.op, term: n.term, id: n.id };
    case 'repo':
    case 'branch':
    case 'archived':
    case 'fork':
    case 'visibility':
      return repoAtom(n, f, branch) ? TRUE : FALSE;
    case 'lang': {
      const i = f.languages.indexOf(n.language);
      return i < 0 ? FALSE : { op: 'lang', lang: i };
    }
  }
}

/** A filter on the repository or the ref: decided per repository and branch, before any document. */
export type RepoAtom = Extract<PlanNode, { op: 'repo' | 'branch' | 'archived' | 'fork' | 'visibility' }>;

/**
 * The repository and ref filters of a plan, each once, in the order first met: what
 * decides which of a shard's repositories and branches share a tree (shard-search.ts).
 */
export function repoAtoms(root: PlanNode): RepoAtom[] {
  const out: RepoAtom[] = [];
  const seen = new Set<string>();
  const walk = (n: PlanNode): void => {
    switch (n.op) {
      case 'and':
      case 'or':
        n.children.forEach(walk);
        return;
      case 'not':
        walk(n.child);
        return;
      case 'repo':
      case 'branch':
      case 'archived':
      case 'fork':
      case 'visibility': {
        const key = JSON.stringify(n);
        if (!seen.has(key)) {
          seen.add(key);
          out.push(n);
        }
        return;
      }
      default:
        return;
    }
  };
  walk(root);
  return out;
}

/** Whether a repository or ref filter holds for a repository (its facts) on `branch`. */
export function repoAtom(n: RepoAtom, f: ShardFacts, branch: string): boolean {
  switch (n.op) {
    case 'repo':
      // Repository names are matched case-insensitively: code hosts treat them so.
      return repoPattern(n.pattern).test(f.repoName);
    case 'branch':
      // A repository's first branch is its default one (ShardFacts.branches).
      return refFilter(n.glob)(branch, branch === f.branches[0]);
    case 'archived':
      return flag(n.value, f.archived);
    case 'fork':
      return flag(n.value, f.fork);
    case 'visibility':
      return n.value === 'any' || n.value === f.visibility;
  }
}

/** archived:/fork: yes includes (default), no excludes, only keeps only. */
function flag(value: 'yes' | 'no' | 'only', has: boolean): boolean {
  if (value === 'yes') return true;
  return (value === 'only') === has;
}

/**
 * `repo:` patterns compiled, the most recently used kept: a search decides the filter for
 * every repository it holds, and a compound shard holds hundreds. (The planner checked
 * each pattern's compiled size before the search was accepted.)
 */
const REPO_PATTERNS_KEPT = 64;
const repoPatterns = new Map<string, RE2>();

function repoPattern(pattern: string): RE2 {
  let re = repoPatterns.get(pattern);
  if (re) repoPatterns.delete(pattern);
  else re = new RE2(pattern, 'i');
  repoPatterns.set(pattern, re);
  if (repoPatterns.size > REPO_PATTERNS_KEPT) repoPatterns.delete(repoPatterns.keys().next().value!);
  return re;
}

function simplify(t: Tree): Tree {
  switch (t.op) {
    case 'not': {
      const c = simplify(t.child);
      if (c.op === 'const') return c.value ? FALSE : TRUE;
      if (c.op === 'not') return c.child;
      return { op: 'not', child: c };
    }
    case 'and':
    case 'or': {
      const absorbing = t.op === 'or'; // OR with true is true; AND with false is false
      const kept: Tree[] = [];
      for (const child of t.children.map(simplify)) {
        if (child.op === 'const') {
          if (child.value === absorbing) return child;
          continue; // the neutral constant drops out
        }
        if (child.op === t.op) kept.push(...child.children);
        else kept.push(child);
      }
      if (kept.length === 0) return absorbing ? FALSE : TRUE;
      if (kept.length === 1) return kept[0]!;
      if (t.op === 'and') kept.sort((a, b) => cost(a) - cost(b));
      return { op: t.op, children: kept };
    }
    default:
      return t;
  }
}

/** Relative cost of deciding a node for one document (evaluation order within AND). */
export function cost(t: Tree): number {
  switch (t.op) {
    case 'const':
      return 0;
    case 'lang':
      return 1;
    case 'file':
      return 2;
    case 'sym':
      return 3;
    case 'content':
      return t.term.kind === 'literal' ? 4 : 5;
    case 'not':
      // Deciding a NOT takes one match of its child (often early in the file), where the
      // positive term of the same kind finds every match.
      return cost(t.child) - 0.5;
    case 'and':
    case 'or':
      return Math.max(...t.children.map(cost));
  }
}
