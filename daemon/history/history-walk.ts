// A repository's history as the history index holds it: every commit reachable from the
// indexed refs, and every file version (path, blob) with the commits whose tree holds it.
//
// One `git log` lists each commit with its parents and its raw diff against its first
// parent (a root commit's against the empty tree), parents before children; each
// commit's tree is its first parent's with that diff applied. A tree is kept only until
// its last child has been derived from it. As in the tip index (repos/git.ts), only
// regular files are versions: symbolic links and submodules have no content of their own.
//
// Output format (git-log(1), `--raw -z` with `--format=%x01%H %P`): per commit
//   \x01 <id> [<parent id> ...] \0 [\n]
//   then per changed path   :<old mode> <new mode> <old id> <new id> <status>\0<path>\0
// (status A, M, D or T; no renames or copies: --no-renames).

import { runGit } from '../repos/git-command.ts';

/** The largest `git log` output read for one repository's history (a damaged or enormous repository is refused past it). */
const LOG_MAX_BYTES = 2 * 1024 * 1024 * 1024 - 1;
/** Likewise for the listing of one tree a walk starts from. */
const TREE_MAX_BYTES = 512 * 1024 * 1024;

const MODE_TYPE_MASK = 0o170000;
const MODE_BLOB = 0o100000;

export interface HistoryLimits {
  /** At most this many commits, the newest (in git's topological order); older ones are left out. */
  maxCommits: number;
}

/** One file version and the commits holding it (indexes into HistoryWalk.commits, ascending). */
export interface HistoryVersion {
  path: string;
  oid: string;
  commits: number[];
}

export interface HistoryWalk {
  /** Commit ids, every parent before its children. */
  commits: string[];
  /** Per commit, its parents' indexes in `commits` (a parent left out by the limit is not listed). */
  parents: number[][];
  /** Every version, sorted by path bytes, then blob id. */
  versions: HistoryVersion[];
  /** Commits reachable from the tips that the limit left out (0: none). */
  leftOut: number;
}

/** `git log` options that list commits in the format of the header, parents first. */
const LOG_OPTIONS = [
  '--format=%x01%H %P',
  '--raw',
  '-z',
  '--no-renames',
  '--no-abbrev',
  '--no-color',
  '--diff-merges=first-parent',
  '--root',
  '--topo-order',
  '--reverse',
];

function logHistory(gitDir: string, revisions: readonly string[]): Promise<Buffer> {
  return runGit(gitDir, ['-c', 'log.showSignature=false', 'log', ...LOG_OPTIONS, ...revisions, '--'], LOG_MAX_BYTES);
}

/** Walks the history reachable from `tips` (commit ids) in the repository at `gitDir`. */
export async function walkHistory(gitDir: string, tips: readonly string[], limits: HistoryLimits): Promise<HistoryWalk> {
  const unique = [...new Set(tips)];
  if (unique.length === 0) return { commits: [], parents: [], versions: [], leftOut: 0 };
  const parsed = parseLog(await logHistory(gitDir, [`--max-count=${limits.maxCommits}`, ...unique]));
  // Fewer commits than the limit: the log listed every one the tips reach, and none was left out.
  const total =
    parsed.length < limits.maxCommits ? parsed.length : Number((await runGit(gitDir, ['rev-list', '--count', ...unique, '--'], 1024)).toString('utf8').trim());
  const holders = new Map<string, HistoryVersion>();
  const version = (path: string, oid: string): HistoryVersion => {
    const key = `${path}\0${oid}`;
    let v = holders.get(key);
    if (v === undefined) holders.set(key, (v = { path, oid, commits: [] }));
    return v;
  };
  // A parent the limit left out: its tree is read whole.
  const outside = async (id: string): Promise<Map<string, HistoryVersion>> => {
    const tree = new Map<string, HistoryVersion>();
    for (const [path, oid] of await listTree(gitDir, id)) tree.set(path, version(path, oid));
    return tree;
  };
  const index = new Map<string, number>();
  parsed.forEach((c, i) => index.set(c.id, i));
  await addCommits(gitDir, parsed, 0, version, outside);
  return {
    commits: parsed.map((c) => c.id),
    parents: parentIndexes(parsed, index),
    versions: sortedByPathThenOid([...holders.values()]),
    leftOut: total - parsed.length,
  };
}

/**
 * The walk of `tips` made from `old`, the complete walk of `oldTips` (none left out), when
 * the new tips reach every commit the old ones did (lostAny): only the commits they add are
 * listed (`git log TIPS --not OLD-TIPS`), each derived from its first parent's tree as in a whole
 * walk, and appended after the old ones (their parents are old or came before them). The
 * same commits, parents and versions as a whole walk of `tips`, in an order that keeps the
 * old commits' indexes; `old` is left as it is (a version it shares is copied before a new
 * commit is added to it). Undefined when it cannot be made so (a commit the old tips reached
 * is no longer reachable, the limit would leave commits out, or `old` left some out): the
 * caller walks the whole history.
 */
export async function extendWalk(
  gitDir: string,
  old: HistoryWalk,
  oldTips: readonly string[],
  tips: readonly string[],
  limits: HistoryLimits,
): Promise<HistoryWalk | undefined> {
  const unique = [...new Set(tips)];
  const before = [...new Set(oldTips)];
  if (old.leftOut > 0 || unique.length === 0 || before.length === 0 || old.commits.length === 0) return undefined;
  const parsed = parseLog(await logHistory(gitDir, [...unique, '--not', ...before]));
  if (old.commits.length + parsed.length > limits.maxCommits) return undefined;
  const index = new Map<string, number>();
  old.commits.forEach((id, i) => index.set(id, i));
  if (lostAny(old, index, before, unique, parsed)) return undefined;
  parsed.forEach((c, i) => index.set(c.id, old.commits.length + i));
  // Each old version a new commit holds is copied on its first use (the old walk stays whole);
  // versions no old one is are made.
  const copies = new Map<HistoryVersion, HistoryVersion>();
  const made = new Map<string, HistoryVersion>();
  const copyOf = (was: HistoryVersion): HistoryVersion => {
    let v = copies.get(was);
    if (v === undefined) copies.set(was, (v = { path: was.path, oid: was.oid, commits: was.commits.slice() }));
    return v;
  };
  const version = (path: string, oid: string): HistoryVersion => {
    const was = findVersion(old.versions, path, oid);
    if (was !== undefined) return copyOf(was);
    const key = `${path}\0${oid}`;
    let v = made.get(key);
    if (v === undefined) made.set(key, (v = { path, oid, commits: [] }));
    return v;
  };
  // An old parent's tree: the old versions holding it (their commits are ascending).
  const oldTree = (id: string): Promise<Map<string, HistoryVersion>> => {
    const at = index.get(id);
    if (at === undefined || at >= old.commits.length)
      return Promise.reject(new Error(`history of ${gitDir}: commit ${id} is neither old nor listed before its child`));
    const tree = new Map<string, HistoryVersion>();
    for (const v of old.versions) if (holds(v.commits, at)) tree.set(v.path, copyOf(v));
    return Promise.resolve(tree);
  };
  await addCommits(gitDir, parsed, old.commits.length, version, oldTree);
  // The old order with the copies in their places, and the new versions merged in.
  const kept = old.versions.map((v) => copies.get(v) ?? v);
  return {
    commits: [...old.commits, ...parsed.map((c) => c.id)],
    parents: [...old.parents, ...parentIndexes(parsed, index)],
    versions: mergeSorted(kept, sortedByPathThenOid([...made.values()])),
    leftOut: 0,
  };
}

/**
 * Whether a commit the old tips reached is not reachable from the new tips (`parsed`: the
 * commits the new tips reach that the old ones did not): when every old tip is reachable,
 * so is every commit they reached. Found in the old walk's parents (complete: it left none
 * out), from the old commits among the new tips and the new commits' parents.
 */
function lostAny(
  old: HistoryWalk,
  index: ReadonlyMap<string, number>,
  before: readonly string[],
  tips: readonly string[],
  parsed: readonly LoggedCommit[],
): boolean {
  const reached = new Uint8Array(old.commits.length);
  const stack: number[] = [];
  const reach = (id: string): void => {
    const at = index.get(id);
    if (at !== undefined && reached[at] === 0) {
      reached[at] = 1;
      stack.push(at);
    }
  };
  for (const t of tips) reach(t);
  for (const c of parsed) for (const p of c.parents) reach(p);
  while (stack.length > 0) {
    for (const p of old.parents[stack.pop()!]!) {
      if (reached[p] === 0) {
        reached[p] = 1;
        stack.push(p);
      }
    }
  }
  return before.some((t) => {
    const at = index.get(t);
    return at === undefined || reached[at] === 0;
  });
}

/** The version (path, oid) of `versions` (sorted by path bytes, then blob id), if any. */
function findVersion(versions: readonly HistoryVersion[], path: string, oid: string): HistoryVersion | undefined {
  const key = Buffer.from(path);
  let lo = 0;
  let hi = versions.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareVersion(versions[mid]!, key, oid) < 0) lo = mid + 1;
    else hi = mid;
  }
  const v = versions[lo];
  return v !== undefined && v.path === path && v.oid === oid ? v : undefined;
}

/** `v` against (path bytes, oid) in the versions' order. */
function compareVersion(v: HistoryVersion, path: Buffer, oid: string): number {
  return Buffer.compare(Buffer.from(v.path), path) || (v.oid < oid ? -1 : v.oid > oid ? 1 : 0);
}

/** Two lists sorted by path bytes, then blob id, with no version in both, as one. */
function mergeSorted(a: readonly HistoryVersion[], b: readonly HistoryVersion[]): HistoryVersion[] {
  if (b.length === 0) return a.slice();
  const out: HistoryVersion[] = [];
  let j = 0;
  for (const v of a) {
    while (j < b.length && compareVersion(b[j]!, Buffer.from(v.path), v.oid) < 0) out.push(b[j++]!);
    out.push(v);
  }
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/** Whether `commits` (ascending) holds `at`. */
function holds(commits: readonly number[], at: number): boolean {
  let lo = 0;
  let hi = commits.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (commits[mid]! < at) lo = mid + 1;
    else hi = mid;
  }
  return commits[lo] === at;
}

function parentIndexes(parsed: readonly LoggedCommit[], index: ReadonlyMap<string, number>): number[][] {
  return parsed.map((c) => c.parents.map((p) => index.get(p)).filter((p) => p !== undefined));
}

/**
 * Derives the tree of each commit of `parsed` (parents first, the first of them at index
 * `offset` of the walk) from its first
 * parent's with its changes, and adds the commit to each version its tree holds. A tree is
 * kept only until its last child has been derived from it; a first parent not in `parsed`
 * has its tree from `outside`.
 */
async function addCommits(
  gitDir: string,
  parsed: readonly LoggedCommit[],
  offset: number,
  version: (path: string, oid: string) => HistoryVersion,
  outside: (id: string) => Promise<Map<string, HistoryVersion>>,
): Promise<void> {
  const listed = new Set(parsed.map((c) => c.id));
  // How many children are still to derive their tree from each commit's: a tree is dropped after its last.
  const pending = new Map<string, number>();
  for (const c of parsed) if (c.parents.length > 0) pending.set(c.parents[0]!, (pending.get(c.parents[0]!) ?? 0) + 1);
  // A tree maps each path to its version (the object, not its key): a commit adds itself to
  // its tree's versions without building a key per file (commits times files of them).
  const trees = new Map<string, Map<string, HistoryVersion>>();
  for (let i = 0; i < parsed.length; i++) {
    const c = parsed[i]!;
    const first = c.parents[0];
    let tree: Map<string, HistoryVersion>;
    if (first === undefined) tree = new Map();
    else {
      let base = trees.get(first);
      if (base === undefined) {
        if (listed.has(first)) throw new Error(`history of ${gitDir}: commit ${first} was listed after its child ${c.id}`);
        base = await outside(first);
        trees.set(first, base);
      }
      const left = pending.get(first)! - 1;
      pending.set(first, left);
      if (left === 0) {
        tree = base;
        trees.delete(first);
      } else tree = new Map(base);
    }
    for (const ch of c.changes) {
      if (ch.oid === undefined) tree.delete(ch.path);
      else tree.set(ch.path, version(ch.path, ch.oid));
    }
    const at = offset + i;
    for (const v of tree.values()) v.commits.push(at);
    if ((pending.get(c.id) ?? 0) > 0) trees.set(c.id, tree);
  }
}

/**
 * Sorted by path bytes, then blob id: the order of the tip index's versions (repos/git.ts).
 * Each path's bytes are made once, not in every comparison.
 */
function sortedByPathThenOid(versions: HistoryVersion[]): HistoryVersion[] {
  const keyed = versions.map((v) => ({ v, bytes: Buffer.from(v.path) }));
  keyed.sort((a, b) => Buffer.compare(a.bytes, b.bytes) || (a.v.oid < b.v.oid ? -1 : a.v.oid > b.v.oid ? 1 : 0));
  return keyed.map((k) => k.v);
}

interface LoggedCommit {
  id: string;
  parents: string[];
  /** oid undefined: the path is no longer a regular file. */
  changes: Array<{ path: string; oid: string | undefined }>;
}

/** Parses `git log --raw -z` output of the format in the header. */
export function parseLog(out: Buffer): LoggedCommit[] {
  const commits: LoggedCommit[] = [];
  let at = 0;
  let current: LoggedCommit | undefined;
  while (at < out.length) {
    const byte = out[at];
    if (byte === 0x0a) {
      at++;
      continue;
    }
    if (byte === 0x01) {
      const end = out.indexOf(0, at);
      if (end < 0) throw new Error('git log: a commit header without its end');
      const [id, ...parents] = out
        .toString('latin1', at + 1, end)
        .trim()
        .split(' ');
      current = { id: id!, parents: parents.filter((p) => p !== ''), changes: [] };
      commits.push(current);
      at = end + 1;
      continue;
    }
    if (byte !== 0x3a || current === undefined) throw new Error(`git log: unexpected output at byte ${at}`);
    const metaEnd = out.indexOf(0, at);
    const pathEnd = metaEnd < 0 ? -1 : out.indexOf(0, metaEnd + 1);
    if (pathEnd < 0) throw new Error('git log: a raw diff entry without its path');
    const fields = out.toString('latin1', at + 1, metaEnd).split(' ');
    const newMode = Number.parseInt(fields[1]!, 8);
    const status = fields[4]!;
    const path = out.toString('utf8', metaEnd + 1, pathEnd);
    const regular = (newMode & MODE_TYPE_MASK) === MODE_BLOB;
    current.changes.push({ path, oid: status === 'D' || !regular ? undefined : fields[3]! });
    at = pathEnd + 1;
  }
  return commits;
}

/** The regular files of commit `id`'s tree: path to blob id (`git ls-tree -r -z`). */
async function listTree(gitDir: string, id: string): Promise<Map<string, string>> {
  const out = await runGit(gitDir, ['ls-tree', '-r', '-z', '--full-tree', id], TREE_MAX_BYTES);
  const tree = new Map<string, string>();
  let at = 0;
  while (at < out.length) {
    const end = out.indexOf(0, at);
    if (end < 0) break;
    const entry = out.toString('utf8', at, end);
    const tab = entry.indexOf('\t');
    const [mode, type, oid] = entry.slice(0, tab).split(' ');
    if (type === 'blob' && (Number.parseInt(mode!, 8) & MODE_TYPE_MASK) === MODE_BLOB) tree.set(entry.slice(tab + 1), oid!);
    at = end + 1;
  }
  return tree;
}
