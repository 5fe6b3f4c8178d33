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

/** Walks the history reachable from `tips` (commit ids) in the repository at `gitDir`. */
export async function walkHistory(gitDir: string, tips: readonly string[], limits: HistoryLimits): Promise<HistoryWalk> {
  const unique = [...new Set(tips)];
  if (unique.length === 0) return { commits: [], parents: [], versions: [], leftOut: 0 };
  const log = await runGit(
    gitDir,
    [
      '-c',
      'log.showSignature=false',
      'log',
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
      `--max-count=${limits.maxCommits}`,
      ...unique,
      '--',
    ],
    LOG_MAX_BYTES,
  );
  const parsed = parseLog(log);
  // Fewer commits than the limit: the log listed every one the tips reach, and none was left out.
  const total =
    parsed.length < limits.maxCommits ? parsed.length : Number((await runGit(gitDir, ['rev-list', '--count', ...unique, '--'], 1024)).toString('utf8').trim());
  const index = new Map<string, number>();
  parsed.forEach((c, i) => index.set(c.id, i));
  // How many children are still to derive their tree from each commit's: a tree is dropped after its last.
  const pending = new Map<string, number>();
  for (const c of parsed) if (c.parents.length > 0) pending.set(c.parents[0]!, (pending.get(c.parents[0]!) ?? 0) + 1);
  // A tree maps each path to its version (the object, not its key): a commit adds itself to
  // its tree's versions without building a key per file (commits times files of them).
  const trees = new Map<string, Map<string, HistoryVersion>>();
  const holders = new Map<string, HistoryVersion>();
  const version = (path: string, oid: string): HistoryVersion => {
    const key = `${path}\0${oid}`;
    let v = holders.get(key);
    if (v === undefined) holders.set(key, (v = { path, oid, commits: [] }));
    return v;
  };
  for (let i = 0; i < parsed.length; i++) {
    const c = parsed[i]!;
    const first = c.parents[0];
    let tree: Map<string, HistoryVersion>;
    if (first === undefined) tree = new Map();
    else {
      let base = trees.get(first);
      if (base === undefined) {
        if (index.has(first)) throw new Error(`history of ${gitDir}: commit ${first} was listed after its child ${c.id}`);
        // A parent the limit left out: its tree is read whole.
        base = new Map();
        for (const [path, oid] of await listTree(gitDir, first)) base.set(path, version(path, oid));
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
    for (const v of tree.values()) v.commits.push(i);
    if ((pending.get(c.id) ?? 0) > 0) trees.set(c.id, tree);
  }
  const versions = sortedByPathThenOid([...holders.values()]);
  return {
    commits: parsed.map((c) => c.id),
    parents: parsed.map((c) => c.parents.map((p) => index.get(p)).filter((p) => p !== undefined)),
    versions,
    leftOut: total - parsed.length,
  };
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
