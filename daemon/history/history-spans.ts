// `history:yes`: where in the default branch's history a query's matches lived. For each
// file (path) of a repository whose history is indexed, the commits of the default branch's
// first-parent line at which the number of matches in that file changed (`changes`), and
// the spans in which it held any (`spans`: the commit from which on it did, and the first
// commit at which it no longer did, or none when it still does). The changes are exactly
// the commits `git log --first-parent --no-renames -S<literal>` lists for a literal: a
// commit compared with its first parent, a renamed file counting as one path removed and
// another added, and symbolic links being no files here, as at the tips
// (test/history/history-spans.test.ts holds it to that).
//
// How: the query is searched in every version the history index holds at once (`branch:*`
// there, each hit named by its blob id rather than the thousands of commits holding it:
// Plan.versions), each version's matches counted, and the default branch's first-parent
// line replayed from its oldest commit with the files each commit changed against its first
// parent (one `git log --raw`, kept per tip): a path's count changes only where its blob
// does. Each path's answer is the newest version that matched, with `branches` naming the
// newest commit of the line that held it and `history` the spans and changes.

import { runGit } from '../repos/git-command.ts';
import type { PlanNode, Plan } from '../query/plan.ts';
import { derivedPlan } from '../search/plan-cache.ts';
import type { SearchOptions, SearchService, WireResponse } from '../search/search-options.ts';
import type { CommitRef, FileResult, MatchHistory, SearchRequest } from '../search/types.ts';

/** A repository whose history is indexed, as the spans need it. */
export interface SpanRepo {
  repoId: number;
  source: string;
  /** The default branch's commit. */
  tip: string;
  /** The commits its history index holds. */
  commits: ReadonlySet<string>;
}

/**
 * Matches counted over all versions: past this many the answer is cut (not exhaustive);
 * a version's count is what decides its spans, so the versions are searched whole.
 */
const SPAN_MATCHES = 1_000_000;

/** A commit of the first-parent line and the files it changed: each path's new blob, or null when it is no file any more. */
interface LineCommit extends CommitRef {
  changed: Array<{ path: string; blob: string | null }>;
}

/** First-parent lines read recently, by tip, up to this many changed files in all. */
const lines = new Map<string, { line: LineCommit[]; weight: number }>();
const LINES_WEIGHT = 4_000_000;
let linesWeight = 0;

/** Modes of the entries that are files here (symbolic links and submodules are not, as at the tips). */
const FILE_MODES = new Set(['100644', '100755']);

/**
 * The default branch's first-parent line from `tip`, oldest first, each commit with what it
 * changed against its first parent (a root commit against nothing; renames as a removal
 * and an addition, as `git log --no-renames -S` sees them). `git log -z --raw` writes a
 * commit's header, then per changed entry its `:modes blobs status` and its path, all
 * NUL-separated.
 */
async function firstParentLine(repo: SpanRepo): Promise<LineCommit[]> {
  const key = `${repo.source}\0${repo.tip}`;
  const kept = lines.get(key);
  if (kept !== undefined) {
    lines.delete(key);
    lines.set(key, kept);
    return kept.line;
  }
  const out = await runGit(
    repo.source,
    ['log', '--first-parent', '--diff-merges=first-parent', '--root', '--raw', '--no-renames', '--no-abbrev', '-z', '--format=%H %cI', repo.tip, '--'],
    1024 * 1024 * 1024,
  );
  const tokens = out.toString('utf8').split('\0');
  const line: LineCommit[] = [];
  let weight = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!.replace(/^\n+/, '');
    if (token === '') continue;
    if (token.startsWith(':')) {
      // ":<old mode> <new mode> <old blob> <new blob> <status>", then the path.
      const [, mode, , blob] = token.slice(1).split(' ');
      const path = tokens[++i];
      const commit = line[line.length - 1];
      if (path === undefined || commit === undefined || mode === undefined || blob === undefined)
        throw new Error(`unexpected git log output near ${JSON.stringify(token)}`);
      commit.changed.push({ path, blob: FILE_MODES.has(mode) ? blob : null });
      weight++;
    } else {
      const [id, date] = token.split(' ');
      if (id === undefined || date === undefined) throw new Error(`unexpected git log output near ${JSON.stringify(token)}`);
      line.push({ id, date, changed: [] });
      weight++;
    }
  }
  line.reverse();
  lines.set(key, { line, weight });
  linesWeight += weight;
  while (linesWeight > LINES_WEIGHT && lines.size > 1) {
    const [oldest, entry] = lines.entries().next().value!;
    lines.delete(oldest);
    linesWeight -= entry.weight;
  }
  return line;
}

/**
 * Matches a file result holds (a file matched by name or language alone counts one). A
 * range may be several matches side by side (`aaa` for `a`): for a query that is one
 * literal, `literalBytes` long, a range counts its length over that, as git counts the
 * occurrences of a string.
 */
function matchCount(f: FileResult, literalBytes: number | undefined): number {
  let n = 0;
  for (const c of f.chunks)
    for (const r of c.matchRanges) n += literalBytes === undefined ? 1 : Math.max(1, Math.floor((r.end.byteOffset - r.start.byteOffset) / literalBytes));
  return n === 0 ? 1 : n;
}

/** The byte length of the query's literal when the query is one literal (else undefined). */
function lone(plan: Plan): number | undefined {
  const n = plan.root;
  return n.op === 'content' && n.term.kind === 'literal' && n.term.pattern !== '' ? Buffer.byteLength(n.term.pattern) : undefined;
}

/** A version that matched: its result, its count. */
interface Version {
  wire: WireResponse['files'][number];
  file: FileResult;
  count: number;
}

/** What a path's replay keeps: its spans and changes, and its newest matching version with the newest line commit that held it. */
interface PathSpans {
  spans: MatchHistory['spans'];
  changes: CommitRef[];
  count: number;
  open: CommitRef | undefined;
  /** The matching version the path holds now (at the commit replayed last), if any. */
  holding: Version | undefined;
  newest: { commit: CommitRef; version: Version } | undefined;
}

/**
 * Replays a repository's first-parent line for the paths that matched in some version
 * (`found`: by path, then blob). A commit the history does not hold (older than
 * settings.historyMaxCommits keeps) is not known to have held anything: it is skipped and
 * the answer is not exhaustive; the first held commit after it compares every path.
 */
function replay(
  line: readonly LineCommit[],
  held: ReadonlySet<string>,
  found: ReadonlyMap<string, ReadonlyMap<string, Version>>,
): { paths: Map<string, PathSpans>; exhaustive: boolean } {
  const paths = new Map<string, PathSpans>();
  for (const path of found.keys()) paths.set(path, { spans: [], changes: [], count: 0, open: undefined, holding: undefined, newest: undefined });
  // Every path's blob as the line goes (matched or not: a commit after a gap needs them all).
  const blobs = new Map<string, string>();
  let exhaustive = true;
  let previous: CommitRef | undefined;
  let gap = true;
  const visit = (commit: CommitRef, path: string, p: PathSpans): void => {
    const blob = blobs.get(path);
    const v = blob === undefined ? undefined : found.get(path)!.get(blob);
    const n = v?.count ?? 0;
    if (p.holding !== undefined && p.holding !== v && previous !== undefined) p.newest = { commit: previous, version: p.holding };
    p.holding = v;
    if (n === p.count) return;
    p.changes.push(commit);
    if (p.count === 0) p.open = commit;
    if (n === 0) p.spans.push({ appeared: p.open!, gone: commit });
    p.count = n;
  };
  for (const commit of line) {
    for (const c of commit.changed) {
      if (c.blob === null) blobs.delete(c.path);
      else blobs.set(c.path, c.blob);
    }
    if (!held.has(commit.id)) {
      exhaustive = false;
      gap = true;
      continue;
    }
    if (gap) for (const [path, p] of paths) visit(commit, path, p);
    else
      for (const c of commit.changed) {
        const p = paths.get(c.path);
        if (p !== undefined) visit(commit, c.path, p);
      }
    gap = false;
    previous = commit;
  }
  for (const p of paths.values()) {
    if (p.count > 0) p.spans.push({ appeared: p.open!, gone: null });
    if (p.holding !== undefined && previous !== undefined) p.newest = { commit: previous, version: p.holding };
  }
  return { paths, exhaustive };
}

/** The history answer to a `history:yes` query (plan.history), in the wire form. */
export async function searchSpans(
  req: Required<SearchRequest>,
  options: SearchOptions,
  plan: Plan,
  at: { repos: readonly SpanRepo[]; history: SearchService; parse: (f: WireResponse['files'][number]) => FileResult },
): Promise<WireResponse> {
  const { repos, history, parse } = at;
  const root: PlanNode = { op: 'and', children: [plan.root, { op: 'branch', glob: '*' }] };
  const { history: _history, ...rest } = plan;
  const planned = derivedPlan({ ...rest, root, branches: ['*'], versions: true });
  const { onChunk: _onChunk, ...quiet } = options;
  const found = await history.searchWire({ ...req, matches: SPAN_MATCHES }, { ...quiet, planned });
  const byId = new Map(repos.map((r) => [r.repoId, r]));
  const literalBytes = lone(plan);
  // Per repository, per path, per blob: the version found, with its count.
  const byRepo = new Map<number, Map<string, Map<string, Version>>>();
  for (const wire of found.files) {
    const file = parse(wire);
    const blob = file.branches[0]!;
    let paths = byRepo.get(file.repositoryId);
    if (paths === undefined) byRepo.set(file.repositoryId, (paths = new Map()));
    let versions = paths.get(file.fileName.text);
    if (versions === undefined) paths.set(file.fileName.text, (versions = new Map()));
    versions.set(blob, { wire, file, count: matchCount(file, literalBytes) });
  }
  let exhaustive = found.isSearchExhaustive;
  const out: Array<{ wire: WireResponse['files'][number]; key: string; last: string; matches: number }> = [];
  for (const [repoId, paths] of byRepo) {
    const repo = byId.get(repoId);
    if (repo === undefined) continue;
    const replayed = replay(await firstParentLine(repo), repo.commits, paths);
    exhaustive &&= replayed.exhaustive;
    for (const { spans, changes, newest } of replayed.paths.values()) {
      if (newest === undefined || spans.length === 0) continue;
      const { file } = newest.version;
      // The version was found under its blob id (Plan.versions): its links name the commit instead.
      const blob = file.branches[0]!;
      const shaped: FileResult = {
        ...file,
        webUrl: file.webUrl.replace(blob, newest.commit.id),
        ...(file.externalWebUrl !== undefined ? { externalWebUrl: file.externalWebUrl.replace(blob, newest.commit.id) } : {}),
        branches: [newest.commit.id],
        history: { spans, changes } satisfies MatchHistory,
      };
      out.push({
        wire: { ...newest.version.wire, json: Buffer.from(JSON.stringify(shaped)) },
        key: `${shaped.repository}\0${shaped.fileName.text}`,
        last: changes[changes.length - 1]!.date,
        matches: newest.version.count,
      });
    }
  }
  // The most recent change first.
  out.sort((a, b) => (a.last < b.last ? 1 : a.last > b.last ? -1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  let matches = 0;
  let kept = out.length;
  for (let i = 0; i < out.length; i++) {
    matches += out[i]!.matches;
    if (matches > req.matches) {
      kept = i + 1;
      exhaustive = exhaustive && kept === out.length;
      break;
    }
  }
  const files = out.slice(0, kept);
  return {
    stats: { ...found.stats, fileCount: files.length, actualMatchCount: files.reduce((n, f) => n + f.matches, 0) },
    files: files.map((f) => f.wire),
    repositoryInfo: found.repositoryInfo.filter((r) => files.some((f) => f.wire.repositoryId === r.id)),
    isSearchExhaustive: exhaustive,
  };
}
