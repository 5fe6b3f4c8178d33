// The match tree: a plan specialised to one shard before any posting is read.
//
// Filters on what a shard knows about itself (repository name, branch, archived, fork,
// visibility, the languages it holds) become constants, and constants fold away. A tree
// that folds to `false` skips the shard (shardsSkippedFilter). What remains is ordered by
// cost within each AND, cheapest first (language < file name < symbols < literal content
// < regex content; a negated term just before its positive kind: it needs one match, not
// all of them), so that a document is rejected by the cheapest test that can reject it.
// The candidates come from the positive terms whatever this order (candidates.ts).

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
 * filters decided for that branch, matches it (branch-classes.ts groups branches that
 * get the same tree).
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
  else if (literalRef(glob) !== undefined) test = (name) => name === glob;
  else {
    const g = compileRefGlob(glob);
    test = (name) => g.test(name);
  }
  refFilters.set(glob, test);
  if (refFilters.size > REPO_PATTERNS_KEPT) refFilters.delete(refFilters.keys().next().value!);
  return test;
}

/**
 * The one ref name a `branch:` glob can match, when it names one: only `*` is an operator
 * in a ref glob (repos/glob.ts), so a glob without it, other than HEAD (the default
 * branch), matches exactly the ref spelled so. Such a glob (a search at a commit names the
 * commit's id) is compared, not compiled.
 */
export function literalRef(glob: string): string | undefined {
  return glob !== 'HEAD' && !glob.includes('*') ? glob : undefined;
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
    case 'author':
    case 'committer':
    case 'after':
    case 'before':
      // The parser allows them with type:commit only, which the history's commit search answers.
      throw new Error(`a ${n.op}: filter reached a search of files`);
  }
}

/** A filter on the repository or the ref: decided per repository and branch, before any document. */
export type RepoAtom = Extract<PlanNode, { op: 'repo' | 'branch' | 'archived' | 'fork' | 'visibility' }>;

/**
 * The repository and ref filters of a plan, each once, in the order first met: what
 * decides which of a shard's repositories and branches share a tree (branch-classes.ts).
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
export function repoAtom(n: RepoAtom, f: RepoFlags & Partial<Pick<ShardFacts, 'branches'>>, branch: string): boolean {
  switch (n.op) {
    case 'repo':
      // Repository names are matched case-insensitively: code hosts treat them so.
      return repoPattern(n.pattern).test(f.repoName);
    case 'branch':
      // A repository's first branch is its default one (ShardFacts.branches).
      return refFilter(n.glob)(branch, branch === f.branches?.[0]);
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
const repoPatterns = new Map<string, NameTest>();

interface NameTest {
  test(name: string): boolean;
}

export function repoPattern(pattern: string): NameTest {
  let re = repoPatterns.get(pattern);
  if (re) repoPatterns.delete(pattern);
  else {
    const literal = literalPattern(pattern);
    const compiled = new RE2(pattern, 'i');
    // A plain name is compared as a string: a regex test costs about a microsecond, and a
    // search asks it of every repository.
    re = literal ? { test: (name) => literal(name) ?? compiled.test(name) } : compiled;
  }
  repoPatterns.set(pattern, re);
  if (repoPatterns.size > REPO_PATTERNS_KEPT) repoPatterns.delete(repoPatterns.keys().next().value!);
  return re;
}

/** Literal `repo:` patterns made into string tests (none for the others), the most recently used kept. */
const literalPatterns = new Map<string, LiteralTest | null>();

/**
 * A literal pattern's answer for a name; undefined when only the regex can say (a name
 * outside ASCII). `lower`: the name as asciiLower gives it, when the caller keeps it.
 */
type LiteralTest = ((name: string, lower?: string | null) => boolean | undefined) & {
  /** For `^name$`: the one name it takes (lower case), so that a search can look its repository up rather than ask every one. */
  exact?: string;
};

/** The name in lower case when it is all ASCII (what a literal `repo:` pattern is compared with); null otherwise. */
export function asciiLower(name: string): string | null {
  return ASCII.test(name) ? name.toLowerCase() : null;
}

const ASCII = /^[\x00-\x7f]*$/;
const META = '.[]{}()*+?|^$';

/**
 * The string test of a `repo:` pattern that is plain text, optionally anchored at either
 * end (`^name$`, `^prefix`, `part`), its punctuation possibly escaped; null for any other
 * pattern. It is case-insensitive as the regex is, for ASCII names: RE2 folds a few
 * non-ASCII letters onto ASCII ones (the Kelvin sign onto k), so those names are left to it.
 */
export function literalPattern(pattern: string): LiteralTest | null {
  if (literalPatterns.has(pattern)) return literalPatterns.get(pattern)!;
  const test = parseLiteral(pattern);
  literalPatterns.set(pattern, test);
  if (literalPatterns.size > REPO_PATTERNS_KEPT) literalPatterns.delete(literalPatterns.keys().next().value!);
  return test;
}

function parseLiteral(pattern: string): LiteralTest | null {
  let from = 0;
  let to = pattern.length;
  const start = pattern.startsWith('^');
  if (start) from = 1;
  // A `$` ends the pattern only when not escaped (`\$` is the dollar itself).
  let end = false;
  if (to > from && pattern[to - 1] === '$') {
    let slashes = 0;
    for (let i = to - 2; i >= from && pattern[i] === '\\'; i--) slashes++;
    if (slashes % 2 === 0) {
      end = true;
      to--;
    }
  }
  let text = '';
  for (let i = from; i < to; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      // `\d`, `\b`, `\x41`: classes and escapes by letter or digit are regex, not text.
      if (next === undefined || /[0-9A-Za-z]/.test(next)) return null;
      text += next;
      i++;
    } else if (META.includes(c)) return null;
    else text += c;
  }
  if (!ASCII.test(text)) return null;
  const want = text.toLowerCase();
  const test: LiteralTest = (name, lower) => {
    const n = lower === undefined ? asciiLower(name) : lower;
    if (n === null) return undefined;
    if (start && end) return n === want;
    if (start) return n.startsWith(want);
    if (end) return n.endsWith(want);
    return n.includes(want);
  };
  if (start && end) test.exact = want;
  return test;
}

/**
 * The name (lower case) every repository the plan can match must have, when a `repo:^name$`
 * of plain text is one of the filters all of its matches pass; undefined otherwise. A
 * repository whose name is not plain ASCII is never named so (its verdict is left open).
 */
export function requiredRepoName(root: PlanNode): string | undefined {
  if (!requiredNames.has(root)) {
    const from = (n: PlanNode): string | undefined => (n.op === 'repo' ? literalPattern(n.pattern)?.exact : undefined);
    requiredNames.set(root, root.op === 'and' ? root.children.map(from).find((x) => x !== undefined) : from(root));
  }
  return requiredNames.get(root);
}

const requiredNames = new WeakMap<PlanNode, string | undefined>();

/**
 * A repository's name and flags: what decides its `repo:`, `archived:`, `fork:` and
 * `visibility:` filters; `lowerName`, asciiLower of the name, when kept with them; `refs`,
 * the names of the refs its index holds, when known (refNames).
 */
export type RepoFlags = Pick<ShardFacts, 'repoName' | 'archived' | 'fork' | 'visibility'> & { lowerName?: string | null; refs?: RefNames };

/** The names of a repository's indexed refs, the default branch's first (as ShardFacts.branches), and the same as a set. */
export interface RefNames {
  list: readonly string[];
  set: ReadonlySet<string>;
}

export function refNames(list: readonly string[]): RefNames {
  return { list, set: new Set(list) };
}

/** Per plan root, whether it filters by repository name or flags (kept while the plan is). */
const scopedRoots = new WeakMap<PlanNode, boolean>();

/** Whether the plan has a filter repoVerdict can decide: one on the repository's name, archived, fork, visibility or refs. */
export function repoScoped(root: PlanNode): boolean {
  let scoped = scopedRoots.get(root);
  if (scoped === undefined) scopedRoots.set(root, (scoped = repoAtoms(root).length > 0));
  return scoped;
}

/**
 * Whether a `branch:` glob names one of the refs (refFilter's rule, the first ref the
 * default one): false rules the repository out, since a document is on no branch its
 * index does not hold. A glob without `*` other than HEAD names only the ref spelled so.
 */
function namesRef(glob: string, refs: RefNames): boolean {
  if (literalRef(glob) !== undefined) return refs.set.has(glob);
  const test = refFilter(glob);
  return refs.list.some((name, i) => test(name, i === 0));
}

/**
 * What the plan comes to for a repository from its name and flags alone, before its
 * branches or documents are looked at: false when none of its documents can match, true
 * when the filters alone let all of them through, undefined when it depends on more. A
 * `repo:` pattern that is not plain text is left undecided: it is compiled and tested
 * where the shards are searched, never on the thread that serves requests.
 */
export function repoVerdict(n: PlanNode, f: RepoFlags): boolean | undefined {
  return verdictOf(n)(f);
}

type Verdict = (f: RepoFlags) => boolean | undefined;

/** A plan's verdict as a function, made once per plan node: a search asks it of every repository of the index. */
const verdicts = new WeakMap<PlanNode, Verdict>();

function verdictOf(n: PlanNode): Verdict {
  let v = verdicts.get(n);
  if (!v) verdicts.set(n, (v = compileVerdict(n)));
  return v;
}

function compileVerdict(n: PlanNode): Verdict {
  switch (n.op) {
    case 'and': {
      const children = n.children.map(verdictOf);
      return (f) => {
        let all = true;
        for (const c of children) {
          const v = c(f);
          if (v === false) return false;
          if (v === undefined) all = false;
        }
        return all ? true : undefined;
      };
    }
    case 'or': {
      const children = n.children.map(verdictOf);
      return (f) => {
        let none = true;
        for (const c of children) {
          const v = c(f);
          if (v === true) return true;
          if (v === undefined) none = false;
        }
        return none ? false : undefined;
      };
    }
    case 'not': {
      const child = verdictOf(n.child);
      return (f) => {
        const v = child(f);
        return v === undefined ? undefined : !v;
      };
    }
    case 'const': {
      const value = n.value;
      return () => value;
    }
    case 'repo': {
      const test = literalPattern(n.pattern);
      return test ? (f) => test(f.repoName, f.lowerName) : () => undefined;
    }
    case 'archived':
    case 'fork':
    case 'visibility':
      return (f) => repoAtom(n, f, '');
    case 'branch': {
      // Naming a ref decides nothing yet: which of its documents are on it is the shard's to say.
      const glob = n.glob;
      return (f) => (f.refs === undefined || namesRef(glob, f.refs) ? undefined : false);
    }
    default:
      return () => undefined;
  }
}

function simplify(t: Tree): Tree {
  switch (t.op) {
    case 'not': {
      const c = simplify(t.child);
      if (c.op === 'const') return c.value ? FALSE : TRUE;
      // A double negation left by folding (`-(-a or lang:X)` in a shard without X) stays one:
      // made positive, `a` would report its ranges in this shard and not in a shard holding
      // X, so a file's answer would hang on what else its shard holds (the parser has
      // already removed the double negations the query itself spells).
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
