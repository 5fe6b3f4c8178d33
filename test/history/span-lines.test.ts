// The lines a history:yes answer shows (history/span-lines.ts), with searchers that answer
// as told and record what they were asked: a version at a tip's commit is shown from the
// tips, its links made for the commit; the others, and those the tips do not show as they
// should (another version's links, a tip index re-indexed since, a file the tip index left
// out), from the history at their commits; an answer no search shows is counted missing.
// The same answers over real indexes: test/history/word-counts.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { showLines, type ShowAt, type ShownAnswer } from '../../daemon/history/span-lines.ts';
import type { Plan } from '../../daemon/query/plan.ts';
import { externalFileUrl, fileWebUrl } from '../../daemon/repos/web-urls.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import type { SearchOptions, WireResponse } from '../../daemon/search/search-options.ts';
import { emptyStats, type FileResult, type SearchRequest } from '../../daemon/search/types.ts';

const BASE = 'http://trawl.test';
const T = 't'.repeat(40);
const P = 'p'.repeat(40);
const request: Required<SearchRequest> = {
  query: 'needle',
  matches: 100,
  contextLines: 0,
  whole: false,
  isRegexEnabled: false,
  isCaseSensitivityEnabled: true,
};
const { history: _h, ...plan } = planSearch(request).plan as Plan;

/** A result as a searcher's wire form carries it (only what showLines reads: its JSON). */
function wire(file: FileResult): WireResponse['files'][number] {
  return { json: Buffer.from(JSON.stringify(file)), repositoryId: file.repositoryId } as unknown as WireResponse['files'][number];
}

function result(path: string, branch: string, repo = 'acme/main', o: { base?: string; external?: string } = {}): FileResult {
  return {
    fileName: { text: path, matchRanges: [] },
    webUrl: fileWebUrl(o.base ?? BASE, repo, branch, path),
    repository: repo,
    repositoryId: 1,
    language: 'TypeScript',
    chunks: [{ content: 'needle', contentStart: { byteOffset: 0, lineNumber: 1, column: 1 }, matchRanges: [] }] as never,
    ...(o.external !== undefined ? { externalWebUrl: o.external } : {}),
    branches: [branch],
  };
}

const answer = (path: string, commit: string): ShownAnswer => ({
  repoId: 1,
  path,
  commit: { id: commit, date: '2026-01-01T00:00:00Z' },
  matches: 1,
  spans: [{ appeared: { id: commit, date: '2026-01-01T00:00:00Z' }, gone: null }],
  changes: [{ id: commit, date: '2026-01-01T00:00:00Z' }],
});

/** The branch globs a plan limits the search to (its last AND child: span-lines.ts). */
function globs(options: SearchOptions | undefined): string[] {
  type Node = { op: string; glob?: string; children?: Node[] };
  const root = options!.planned!.plan.root as Node;
  const last = root.children![1]!;
  return last.op === 'branch' ? [last.glob!] : last.children!.map((c) => c.glob!);
}

interface Case {
  name: string;
  /** What the tips answer (their files on the default branch, "main"). */
  tips: FileResult[];
  /** What the history holds, by commit. */
  history: Record<string, FileResult[]>;
  unchanged?: boolean;
  external?: boolean;
  /** The commits the history is asked for, search by search; whether the tips are asked. */
  askedHistory: string[][];
  askedTips: boolean;
  shown: Array<{ path: string; commit: string }>;
  missing: number;
}

const repoUrl = 'https://github.com/acme/main';
const cases: Case[] = [
  {
    name: 'the version at the tip from the tips, the other from the history',
    tips: [result('a.ts', 'main'), result('other.ts', 'main')],
    history: { [P]: [result('b.ts', P)], [T]: [result('a.ts', T)] },
    askedHistory: [[P]],
    askedTips: true,
    shown: [
      { path: 'a.ts', commit: T },
      { path: 'b.ts', commit: P },
    ],
    missing: 0,
  },
  {
    name: 'links to the code host made again for the commit (the repository URL holds the branch name)',
    tips: [result('a.ts', 'main', 'acme/main', { external: externalFileUrl('github', repoUrl, 'main', 'a.ts')! })],
    history: {},
    external: true,
    askedHistory: [],
    askedTips: true,
    shown: [{ path: 'a.ts', commit: T }],
    missing: 0,
  },
  {
    name: 'a tip index re-indexed since the tips were read: every version from the history',
    tips: [result('a.ts', 'main')],
    history: { [P]: [result('b.ts', P)], [T]: [result('a.ts', T)] },
    unchanged: false,
    askedHistory: [[P], [T]],
    askedTips: true,
    shown: [
      { path: 'b.ts', commit: P },
      { path: 'a.ts', commit: T },
    ],
    missing: 0,
  },
  {
    name: 'a file the tips show with links made otherwise, or not at all: from the history',
    tips: [result('a.ts', 'main', 'acme/main', { base: 'http://elsewhere.test' })],
    history: { [T]: [result('a.ts', T), result('c.ts', T)] },
    askedHistory: [[T]],
    askedTips: true,
    shown: [
      { path: 'a.ts', commit: T },
      { path: 'c.ts', commit: T },
    ],
    missing: 0,
  },
  {
    name: 'an answer no search shows is missing',
    tips: [],
    history: { [P]: [] },
    askedHistory: [[P], [T]],
    askedTips: true,
    shown: [],
    missing: 2,
  },
];

for (const c of cases) {
  test(`showLines: ${c.name}`, async () => {
    const askedHistory: string[][] = [];
    let askedTips = false;
    const at: ShowAt = {
      baseUrl: BASE,
      repos: new Map([[1, { tip: T, codeHostType: c.external ? 'github' : 'genericGitHost', externalWebUrl: c.external ? repoUrl : undefined }]]),
      parse: (f) => JSON.parse(Buffer.from(f.json).toString()) as FileResult,
      tipsUnchanged: () => c.unchanged ?? true,
      tips: {
        searchWire: async (_req, options) => {
          askedTips = true;
          assert.deepEqual(globs(options), ['HEAD']);
          // Only the repositories of the answers, and only those the caller may see.
          assert.equal(options!.repoFilter!({ repoId: 1, visibility: 'public' }), true);
          assert.equal(options!.repoFilter!({ repoId: 2, visibility: 'public' }), false);
          return { stats: emptyStats(), files: c.tips.map(wire), repositoryInfo: [], isSearchExhaustive: true };
        },
      },
      history: {
        searchWire: async (_req, options) => {
          const commits = globs(options);
          askedHistory.push(commits);
          return { stats: emptyStats(), files: commits.flatMap((id) => (c.history[id] ?? []).map(wire)), repositoryInfo: [], isSearchExhaustive: true };
        },
      },
    };
    const answers = c.name.startsWith('links')
      ? [answer('a.ts', T)]
      : c.name.startsWith('a file the tips')
        ? [answer('a.ts', T), answer('c.ts', T)]
        : [answer('a.ts', T), answer('b.ts', P)];
    const shown = await showLines(request, { repoFilter: (r) => r.repoId !== 3 }, plan, answers, at);
    assert.deepEqual(askedHistory, c.askedHistory);
    assert.equal(askedTips, c.askedTips);
    assert.equal(shown.missing, c.missing);
    const files = shown.files.map((f) => JSON.parse(f.wire.json.toString()) as FileResult);
    assert.deepEqual(
      files.map((f) => ({ path: f.fileName.text, commit: f.branches[0]! })),
      c.shown,
    );
    for (const f of files) {
      const commit = f.branches[0]!;
      assert.deepEqual(f.branches, [commit]);
      assert.equal(f.webUrl, fileWebUrl(BASE, 'acme/main', commit, f.fileName.text));
      assert.ok(f.history !== undefined && f.history.changes[0]!.id === commit);
      if (c.external) assert.equal(f.externalWebUrl, `${repoUrl}/blob/${commit}/${f.fileName.text}`);
      else assert.equal(f.externalWebUrl, undefined);
    }
  });
}
