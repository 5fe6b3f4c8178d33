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
// How: the query is searched at every commit of the history index at once (`branch:*`
// there: each file version found once, with every commit holding it), each version's
// matches counted, and the first-parent line walked from its oldest commit. Each path's
// answer is the newest version that matched, with `branches` naming the newest commit of
// the line that held it and `history` the spans and changes.

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

/** First-parent lines read recently, by tip. */
const lines = new Map<string, CommitRef[]>();
const LINES_KEPT = 16;

/** The default branch's first-parent line from `tip`, oldest first. */
async function firstParentLine(repo: SpanRepo): Promise<CommitRef[]> {
  const key = `${repo.source}\0${repo.tip}`;
  let line = lines.get(key);
  if (line === undefined) {
    const out = await runGit(repo.source, ['log', '--first-parent', '--format=%H %cI', repo.tip, '--'], 256 * 1024 * 1024);
    line = out
      .toString('utf8')
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [id, date] = l.split(' ');
        return { id: id!, date: date! };
      })
      .reverse();
    lines.set(key, line);
    if (lines.size > LINES_KEPT) lines.delete(lines.keys().next().value!);
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
  const planned = derivedPlan({ ...rest, root, branches: ['*'] });
  const { onChunk: _onChunk, ...quiet } = options;
  const found = await history.searchWire({ ...req, matches: SPAN_MATCHES }, { ...quiet, planned });
  const byId = new Map(repos.map((r) => [r.repoId, r]));
  const literalBytes = lone(plan);
  // Per repository and path: each version found, with its count.
  const groups = new Map<string, Array<{ wire: WireResponse['files'][number]; file: FileResult; count: number }>>();
  for (const wire of found.files) {
    const file = parse(wire);
    const key = `${file.repositoryId}\0${file.fileName.text}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push({ wire, file, count: matchCount(file, literalBytes) });
  }
  let exhaustive = found.isSearchExhaustive;
  const out: Array<{ wire: WireResponse['files'][number]; key: string; last: string; matches: number }> = [];
  for (const versions of groups.values()) {
    const repo = byId.get(versions[0]!.file.repositoryId);
    if (repo === undefined) continue;
    const line = await firstParentLine(repo);
    const at = new Map<string, (typeof versions)[number]>();
    for (const v of versions) for (const c of v.file.branches) at.set(c, v);
    const spans: MatchHistory['spans'] = [];
    const changes: CommitRef[] = [];
    let prev = 0;
    let open: CommitRef | undefined;
    let newest: { commit: CommitRef; version: (typeof versions)[number] } | undefined;
    for (const commit of line) {
      if (!repo.commits.has(commit.id)) {
        // Older than the history holds (settings.historyMaxCommits): what it held is not known.
        exhaustive = false;
        continue;
      }
      const v = at.get(commit.id);
      const n = v?.count ?? 0;
      if (n !== prev) changes.push(commit);
      if (prev === 0 && n > 0) open = commit;
      if (prev > 0 && n === 0) spans.push({ appeared: open!, gone: commit });
      if (v !== undefined) newest = { commit, version: v };
      prev = n;
    }
    if (prev > 0) spans.push({ appeared: open!, gone: null });
    if (newest === undefined || spans.length === 0) continue;
    const shaped = { ...newest.version.file, branches: [newest.commit.id], history: { spans, changes } satisfies MatchHistory };
    out.push({
      wire: { ...newest.version.wire, json: Buffer.from(JSON.stringify(shaped)) },
      key: `${shaped.repository}\0${shaped.fileName.text}`,
      last: changes[changes.length - 1]!.date,
      matches: newest.version.count,
    });
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
