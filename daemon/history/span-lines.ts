// The lines a `history:yes` answer shows (history-spans.ts): each file's newest matching
// version, at the newest commit of the default branch's line that held it, with the query's
// matches in it as a search at that commit finds them.
//
// A version shown at the tip's commit (a file that still holds matches) is the file the tip
// index holds on the default branch: it is searched there, stored whole, where the history
// stores most versions as deltas to rebuild, and on the tips' thread while the history's
// searches the other versions. Its links are made for the commit, as the history's are. A
// file the tips do not answer so (the tip index left it out, or it was re-indexed between
// the two reads) is searched in the history after all, so the answer is the same either way.

import type { PlanNode, Plan } from '../query/plan.ts';
import { externalFileUrl, fileWebUrl } from '../repos/web-urls.ts';
import { derivedPlan } from '../search/plan-cache.ts';
import type { SearchOptions, SearchService, WireResponse } from '../search/search-options.ts';
import type { CommitRef, FileResult, MatchHistory, SearchRequest, SearchStats } from '../search/types.ts';

/** A file's answer before its lines: its spans and changes, and the version shown with the commit holding it. */
export interface ShownAnswer {
  repoId: number;
  path: string;
  commit: CommitRef;
  /** The version's matches (as counted for the spans). */
  matches: number;
  spans: MatchHistory['spans'];
  changes: CommitRef[];
}

/** A repository as the lines need it: its tip index's default-branch commit, and what its code host links are made from. */
export interface ShownRepo {
  tip: string;
  codeHostType: string;
  externalWebUrl?: string | undefined;
}

export interface ShowAt {
  history: Pick<SearchService, 'searchWire'>;
  /** The tips' searcher; without it every version is searched in the history. */
  tips?: Pick<SearchService, 'searchWire'> | undefined;
  /**
   * Whether the tip indexes are still those the repositories' tips were read from: a tip
   * re-indexed since would show another version under the commit (its files are then
   * searched in the history).
   */
  tipsUnchanged?: () => boolean;
  baseUrl: string;
  repos: ReadonlyMap<number, ShownRepo>;
  parse: (f: WireResponse['files'][number]) => FileResult;
}

/** A file shown: its wire form with its history, its sort keys and matches. */
export interface ShownFile {
  wire: WireResponse['files'][number];
  key: string;
  last: string;
  matches: number;
}

export interface Shown {
  files: ShownFile[];
  /** Answers no search showed (the index changed between the reads): the answer is then not exhaustive. */
  missing: number;
  /** The searches made, for their stats and repositories. */
  searches: WireResponse[];
}

/** Searches the lines of the answers' versions: at the tips for those at a tip's commit, in the history for the others. */
export async function showLines(
  req: Required<SearchRequest>,
  options: SearchOptions,
  plan: Omit<Plan, 'history'>,
  answers: readonly ShownAnswer[],
  at: ShowAt,
): Promise<Shown> {
  const atTip = at.tips === undefined ? [] : answers.filter((a) => at.repos.get(a.repoId)?.tip === a.commit.id);
  const tipSet = new Set(atTip);
  const past = answers.filter((a) => !tipSet.has(a));
  const out: ShownFile[] = [];
  const searches: WireResponse[] = [];
  const [tipSearch, pastSearch] = await Promise.all([
    atTip.length > 0 ? searchTips(req, options, plan, atTip, at.tips!) : undefined,
    past.length > 0 ? searchCommits(req, options, plan, past, at.history) : undefined,
  ]);
  let left: ShownAnswer[] = [];
  if (tipSearch !== undefined) {
    searches.push(tipSearch);
    left = at.tipsUnchanged === undefined || at.tipsUnchanged() ? fromTips(tipSearch, atTip, at, out) : atTip;
  }
  let missing = 0;
  if (pastSearch !== undefined) {
    searches.push(pastSearch);
    missing += fromCommits(pastSearch, past, at.parse, out);
  }
  if (left.length > 0) {
    const again = await searchCommits(req, options, plan, left, at.history);
    searches.push(again);
    missing += fromCommits(again, left, at.parse, out);
  }
  return { files: out, missing, searches };
}

/** The query on the default branches of the answers' repositories. */
function searchTips(
  req: Required<SearchRequest>,
  options: SearchOptions,
  plan: Omit<Plan, 'history'>,
  answers: readonly ShownAnswer[],
  tips: Pick<SearchService, 'searchWire'>,
): Promise<WireResponse> {
  const ids = new Set(answers.map((a) => a.repoId));
  const caller = options.repoFilter;
  const root: PlanNode = { op: 'and', children: [plan.root, { op: 'branch', glob: 'HEAD' }] };
  return tips.searchWire(
    { ...req, matches: LINE_MATCHES },
    {
      ...options,
      planned: derivedPlan({ ...plan, root, branches: ['HEAD'] }),
      repoFilter: (r) => ids.has(r.repoId) && (caller === undefined || caller(r)),
    },
  );
}

/** The query at the answers' commits in the history. */
function searchCommits(
  req: Required<SearchRequest>,
  options: SearchOptions,
  plan: Omit<Plan, 'history'>,
  answers: readonly ShownAnswer[],
  history: Pick<SearchService, 'searchWire'>,
): Promise<WireResponse> {
  const commits = [...new Set(answers.map((a) => a.commit.id))];
  const root: PlanNode = { op: 'and', children: [plan.root, { op: 'or', children: commits.map((glob) => ({ op: 'branch', glob })) }] };
  return history.searchWire({ ...req, matches: LINE_MATCHES }, { ...options, planned: derivedPlan({ ...plan, root, branches: commits }) });
}

/**
 * Matches the searches of the lines may find: as many as the search of every version may
 * count (history-spans.ts), so that no shown version is cut.
 */
const LINE_MATCHES = 1_000_000;

/** The answers the tips showed, added to `out`; those they did not, returned. */
function fromTips(found: WireResponse, answers: readonly ShownAnswer[], at: ShowAt, out: ShownFile[]): ShownAnswer[] {
  const wanted = new Map(answers.map((a) => [`${a.repoId}\0${a.path}`, a]));
  for (const wire of found.files) {
    const file = at.parse(wire);
    const path = file.fileName.text;
    const key = `${file.repositoryId}\0${path}`;
    const a = wanted.get(key);
    const repo = at.repos.get(file.repositoryId);
    if (a === undefined || repo === undefined) continue;
    const branch = file.branches[0];
    // Its links, made for the branch, made again for the commit; a file whose links are not
    // made so (another base URL, another host record) is left to the history.
    if (branch === undefined || file.webUrl !== fileWebUrl(at.baseUrl, file.repository, branch, path)) continue;
    if (file.externalWebUrl !== undefined && file.externalWebUrl !== externalFileUrl(repo.codeHostType, repo.externalWebUrl, branch, path)) continue;
    wanted.delete(key);
    const commit = a.commit.id;
    const external = file.externalWebUrl === undefined ? undefined : externalFileUrl(repo.codeHostType, repo.externalWebUrl, commit, path);
    out.push(
      shownFile(
        wire,
        { ...file, webUrl: fileWebUrl(at.baseUrl, file.repository, commit, path), ...(external !== undefined ? { externalWebUrl: external } : {}) },
        a,
      ),
    );
  }
  return [...wanted.values()];
}

/** The answers a search at their commits showed, added to `out`; the number it did not show. */
function fromCommits(found: WireResponse, answers: readonly ShownAnswer[], parse: ShowAt['parse'], out: ShownFile[]): number {
  const wanted = new Map(answers.map((a) => [`${a.repoId}\0${a.path}\0${a.commit.id}`, a]));
  for (const wire of found.files) {
    const file = parse(wire);
    const path = file.fileName.text;
    for (const commit of file.branches) {
      // (A path has one version at a commit: the one the replay chose there.)
      const key = `${file.repositoryId}\0${path}\0${commit}`;
      const a = wanted.get(key);
      if (a === undefined) continue;
      wanted.delete(key);
      // Its links name the commit it is shown at (it was found on that commit among others).
      const first = file.branches[0]!;
      const external = file.externalWebUrl?.replace(first, commit);
      out.push(shownFile(wire, { ...file, webUrl: file.webUrl.replace(first, commit), ...(external !== undefined ? { externalWebUrl: external } : {}) }, a));
      break;
    }
  }
  return wanted.size;
}

function shownFile(wire: WireResponse['files'][number], file: FileResult, a: ShownAnswer): ShownFile {
  const shaped: FileResult = { ...file, branches: [a.commit.id], history: { spans: a.spans, changes: a.changes } satisfies MatchHistory };
  return {
    wire: { ...wire, json: Buffer.from(JSON.stringify(shaped)) },
    key: `${shaped.repository}\0${a.path}`,
    last: a.changes[a.changes.length - 1]!.date,
    matches: a.matches,
  };
}

/** Two searches' stats as one: each count the sum of both (the first one's flush reason). */
export function sumStats(a: SearchStats, b: SearchStats): SearchStats {
  const out = { ...a };
  for (const k of Object.keys(a) as Array<keyof SearchStats>) {
    if (k === 'flushReason') continue;
    (out as Record<string, unknown>)[k] = (a[k] as number) + (b[k] as number);
  }
  return out;
}
