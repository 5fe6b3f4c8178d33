// `type:diff`: the commits of indexed histories whose diff against their parent adds or
// removes a line matching the query's pattern, the commits `git log -G<pattern>` lists
// over the indexed refs (diff-log.ts says why they are the same), found in the diff records
// (diff-store.ts: a base and a tail, each searched as a part of its own) of every repository with a history index, joined by commit id to its
// commit records (commit-records.ts) where they are loaded (DiffCatalog): a result's commit
// (parents, people, message, dates) is read from those.
//
// A diff query is one content term (a literal or a regex, `case:` as anywhere), and
// `repo:` and `file:` filters, negated or not, all ANDed: `file:` is matched against the
// changed path and, for a rename, its old path too. `select:added` / `select:removed`
// keep one side. Other filters and boolean combinations of terms are refused. A history
// that holds only the newest commits (settings.historyMaxCommits) makes the answer not
// exhaustive: git would list older commits too.
//
// One result per commit and path with a matching line, newest first (committer date, then
// author date, then children before parents): its chunks are the hunks holding a matching line, each line
// signed `+` or `-` as in a unified diff (diff-result.ts). A match is a matching line:
// `matches` bounds the lines given; the search is not exhaustive when lines were left out,
// nor when a commit of the diff records has no commit record (the two files are written by
// one update, commit records first; one missing or damaged is made again by the next).

import { statSync } from 'node:fs';
import RE2 from 're2';
import { ServiceError } from '../errors.ts';
import type { ManifestRepo } from '../index/manifest.ts';
import type { Plan, PlanNode, Term } from '../query/terms.ts';
import { repoPattern } from '../search/match-tree.ts';
import type { SearchOptions } from '../search/search-options.ts';
import { emptyStats, type SearchStats } from '../search/types.ts';
import type { CommitCatalog } from './commit-catalog.ts';
import { commitRecordsPath, type CommitRecord, type CommitRecords } from './commit-records.ts';
import { lineMatcher, type LineMatcher } from './diff-match.ts';
import { diffsPath, diffsTailPath, readRecords, type DiffRecords } from './diff-store.ts';

/** A diff query's parts (diffQuery). */
export interface DiffQuery {
  term: Term;
  repos: Array<{ test: (name: string) => boolean; negated: boolean }>;
  files: Array<{ re: RE2; negated: boolean }>;
  select?: 'added' | 'removed';
}

function refuse(why: string): never {
  throw new ServiceError('FAILED_TO_PARSE_QUERY', `type:diff ${why}`);
}

/** The parts of a type:diff plan, or a FAILED_TO_PARSE_QUERY error saying what a diff query cannot hold. */
export function diffQuery(plan: Plan): DiffQuery {
  const parts = plan.root.op === 'and' ? plan.root.children : [plan.root];
  let term: Term | undefined;
  const repos: DiffQuery['repos'] = [];
  const files: DiffQuery['files'] = [];
  for (const p of parts) {
    const negated = p.op === 'not';
    const n: PlanNode = p.op === 'not' ? p.child : p;
    if (n.op === 'content' && !negated) {
      if (term !== undefined) refuse('searches for one pattern: quote a phrase ("a b"), or write one regular expression');
      term = n.term;
    } else if (n.op === 'repo') repos.push({ test: (name) => repoPattern(n.pattern).test(name), negated });
    else if (n.op === 'file') files.push({ re: new RE2(n.term.pattern, n.term.caseSensitive ? '' : 'i'), negated });
    else if (n.op === 'content') refuse('cannot exclude a pattern (-term)');
    else if (n.op === 'or') refuse('takes no "or": write one regular expression with | instead');
    else refuse(`takes only a pattern and repo: and file: filters, not ${n.op}:`);
  }
  if (term === undefined) refuse('needs a pattern to search the added and removed lines for');
  return { term, repos, files, ...(plan.select === undefined ? {} : { select: plan.select }) };
}

/** A part of a repository's diff records (its base or its tail), as results show it. */
export interface DiffRepo {
  repoId: number;
  repo: ManifestRepo;
  records: DiffRecords;
  /** Which part of the repository's records: 0 the base, 1 the tail (its commits come after the base's). */
  part: number;
  /** Per commit of the records, its commit record; undefined when the commit records lack it. */
  commits: ReadonlyArray<CommitRecord | undefined>;
  /** Per commit of the records, its committer time (epoch ms; NaN without a record). */
  committed: Float64Array;
  /** Per commit of the records, its author time (epoch ms; NaN without a record). */
  authored: Float64Array;
  /** The indexes of its commits with lines and a record, newest first (see the header). */
  newest: Int32Array;
  /** Commits with lines but no commit record: their hits are not given. */
  unjoined: number;
}

/** One result: a commit's changed path (a file of the records) and its hunks with matching lines. */
export interface DiffHit {
  repo: DiffRepo;
  commit: number;
  /** The file's index in records.files / 4. */
  file: number;
  /** The hunks holding a matching line (indexes into records.hunks / 5). */
  hunks: number[];
  /** Its matching lines. */
  lines: number;
  /** Per distinct line of its records: 1 when it matches (LineMatcher.scan). */
  matched: Uint8Array;
}

export interface DiffFound {
  /** All hits, newest first. */
  hits: DiffHit[];
  /** Matching lines in all. */
  lines: number;
  matcher: LineMatcher;
  stats: SearchStats;
  /** Not every commit was searched (the caller went away, or a history holds only the newest): not exhaustive. */
  stopped: boolean;
}

/**
 * The diff records of the repositories with a history index (the history service lists
 * them), joined to their commit records (`commits`, shared with type:commit): each read
 * again when its file changed.
 */
export class DiffCatalog {
  private readonly loaded = new Map<number, { files: string; commits: CommitRecords | undefined; parts: DiffRepo[] }>();

  constructor(
    private readonly dataDir: string,
    private readonly commits: CommitCatalog,
  ) {}

  /** The records of `repos`, a part each of their bases and tails (those without any are left out). */
  repos(repos: ReadonlyArray<{ repoId: number; repo: ManifestRepo }>): DiffRepo[] {
    const out: DiffRepo[] = [];
    for (const { repoId, repo } of repos) out.push(...this.load(repoId, repo));
    return out;
  }

  private load(repoId: number, repo: ManifestRepo): DiffRepo[] {
    const st = statSync(diffsPath(this.dataDir, repoId), { throwIfNoEntry: false });
    if (st === undefined) {
      this.loaded.delete(repoId);
      return [];
    }
    const tail = statSync(diffsTailPath(this.dataDir, repoId), { throwIfNoEntry: false });
    // The files as they are now: either changed, both are read again.
    const files = [st, tail].map((s) => (s === undefined ? '-' : `${s.size}:${s.mtimeMs}:${s.ino}`)).join(' ');
    const commits = this.commits.records(commitRecordsPath(this.dataDir, repoId));
    const byId = (): ReadonlyMap<string, CommitRecord> | undefined => (commits === undefined ? undefined : this.commits.byId(commits));
    const before = this.loaded.get(repoId);
    if (before !== undefined && before.files === files) {
      if (before.commits === commits) return before.parts.map((p) => ({ ...p, repo }));
      const parts = before.parts.map((p) => joinDiffRepo(repoId, repo, p.records, byId(), p.part));
      this.loaded.set(repoId, { files, commits, parts });
      return parts;
    }
    const records = readRecords(this.dataDir, repoId);
    if (records === undefined) {
      this.loaded.delete(repoId);
      return [];
    }
    const parts = records.map((r, part) => joinDiffRepo(repoId, repo, r, byId(), part));
    this.loaded.set(repoId, { files, commits, parts });
    return parts;
  }
}

/** A part of a repository's diff records joined to its commit records (by id; `byId` undefined: it has none readable). */
export function joinDiffRepo(
  repoId: number,
  repo: ManifestRepo,
  records: DiffRecords,
  byId: ReadonlyMap<string, CommitRecord> | undefined,
  part = 0,
): DiffRepo {
  const commits = records.commits.map((id) => byId?.get(id));
  const committed = Float64Array.from(commits, (c) => (c === undefined ? Number.NaN : Date.parse(c.committer.date)));
  const authored = Float64Array.from(commits, (c) => (c === undefined ? Number.NaN : Date.parse(c.author.date)));
  const withLines: number[] = [];
  let unjoined = 0;
  for (let f = 0; f < records.files.length; f += 4) {
    const c = records.files[f]!;
    if (withLines[withLines.length - 1] === c) continue; // files are in their commits' order
    withLines.push(c);
    if (commits[c] === undefined) unjoined++;
  }
  // On equal times the later in the records first: they hold commits parents first (diff-store.ts).
  const newest = withLines.filter((c) => commits[c] !== undefined).sort((a, b) => committed[b]! - committed[a]! || authored[b]! - authored[a]! || b - a);
  return { repoId, repo, records, part, commits, committed, authored, newest: Int32Array.from(newest), unjoined };
}

/** Every hit of `q` in `repos` (those the caller may see), newest first. */
export function findDiffs(repos: readonly DiffRepo[], q: DiffQuery, options: SearchOptions): DiffFound {
  const started = process.hrtime.bigint();
  const stats = emptyStats();
  const matcher = lineMatcher(q.term);
  const found: DiffHit[] = [];
  let lines = 0;
  const wantSign = q.select === undefined ? -1 : q.select === 'added' ? 1 : 0;
  let stopped = false;
  for (const repo of repos) {
    if (options.signal?.aborted) {
      stopped = true;
      break;
    }
    if (options.repoFilter && !options.repoFilter({ repoId: repo.repoId, visibility: repo.repo.visibility })) continue;
    if (!q.repos.every((f) => f.test(repo.repo.name) !== f.negated)) continue;
    const r = repo.records;
    if (r.leftOut > 0) stopped = true; // older commits are not in the records
    if (repo.unjoined > 0) stopped = true; // commits without a record give no results
    stats.shardsScanned++;
    stats.contentBytesLoaded += r.text.length;
    const hit = matcher.scan(r);
    const occ = occurrences(r);
    // The files and hunks holding a matching line: found from the lines, not by a pass over all hunks.
    const perFile = new Map<number, Map<number, number>>();
    for (let line = 0; line < hit.length; line++) {
      if (hit[line] !== 1) continue;
      for (let k = occ.starts[line]!; k < occ.starts[line + 1]!; k++) {
        const e = occ.entries[k]!;
        if (wantSign >= 0 && (r.entries[e]! & 1) !== wantSign) continue;
        const h = occ.hunkOf[e]!;
        const f = occ.fileOfHunk[h]!;
        let hunks = perFile.get(f);
        if (hunks === undefined) perFile.set(f, (hunks = new Map()));
        hunks.set(h, (hunks.get(h) ?? 0) + 1);
      }
    }
    stats.filesConsidered += perFile.size;
    const perCommit = new Map<number, DiffHit[]>();
    for (const f of [...perFile.keys()].sort((a, b) => a - b)) {
      const path = r.paths[r.files[f * 4 + 1]!]!;
      const oldAt = r.files[f * 4 + 2]!;
      const old = oldAt >= 0 ? r.paths[oldAt] : undefined;
      if (!q.files.every((x) => (x.re.test(path) || (old !== undefined && x.re.test(old))) !== x.negated)) continue;
      const counts = perFile.get(f)!;
      const hunks = [...counts.keys()].sort((a, b) => a - b);
      let matched = 0;
      for (const n of counts.values()) matched += n;
      const commit = r.files[f * 4]!;
      let list = perCommit.get(commit);
      if (list === undefined) perCommit.set(commit, (list = []));
      list.push({ repo, commit, file: f, hunks, lines: matched, matched: hit });
      lines += matched;
    }
    for (const c of repo.newest) {
      const list = perCommit.get(c);
      if (list !== undefined) found.push(...list);
    }
  }
  if (repos.length > 1) found.sort(newestFirst);
  stats.matchTreeSearch = Number(process.hrtime.bigint() - started);
  return { hits: found, lines, matcher, stats, stopped };
}

/** Where each distinct line occurs (entry indexes, ascending), and each entry's hunk and each hunk's file. */
interface Occurrences {
  starts: Uint32Array;
  entries: Uint32Array;
  hunkOf: Uint32Array;
  fileOfHunk: Uint32Array;
}

const occurrenceTables = new WeakMap<DiffRecords, Occurrences>();

/** The records' occurrence tables, made once per records (a few MB for a history of thousands of commits). */
function occurrences(r: DiffRecords): Occurrences {
  let o = occurrenceTables.get(r);
  if (o !== undefined) return o;
  const lines = r.lineStarts.length - 1;
  const starts = new Uint32Array(lines + 1);
  for (let e = 0; e < r.entries.length; e++) starts[(r.entries[e]! >>> 1) + 1]!++;
  for (let i = 0; i < lines; i++) starts[i + 1]! += starts[i]!;
  const fill = starts.slice(0, lines);
  const entries = new Uint32Array(r.entries.length);
  for (let e = 0; e < r.entries.length; e++) entries[fill[r.entries[e]! >>> 1]!++] = e;
  const hunkCount = r.hunks.length / 5;
  const hunkOf = new Uint32Array(r.entries.length);
  for (let h = 0, e = 0; h < hunkCount; h++) for (const end = r.hunks[h * 5 + 4]!; e < end; e++) hunkOf[e] = h;
  const fileOfHunk = new Uint32Array(hunkCount);
  for (let f = 0, h = 0; f < r.files.length / 4; f++) for (const end = r.files[f * 4 + 3]!; h < end; h++) fileOfHunk[h] = f;
  o = { starts, entries, hunkOf, fileOfHunk };
  occurrenceTables.set(r, o);
  return o;
}

/**
 * Newest first across repositories and parts: by committer time, then author time; then,
 * in one repository, the later in its records first (a tail's commits come after its
 * base's), as in one part. A stable sort keeps the repositories' order on other ties.
 */
function newestFirst(a: DiffHit, b: DiffHit): number {
  const by = b.repo.committed[b.commit]! - a.repo.committed[a.commit]! || b.repo.authored[b.commit]! - a.repo.authored[a.commit]!;
  if (by !== 0 || a.repo.repoId !== b.repo.repoId) return by;
  return b.repo.part - a.repo.part || b.commit - a.commit;
}
