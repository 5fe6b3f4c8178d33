// Differential test of `type:diff` (history/diff-search.ts) against git on a generated
// repository (helpers/history-repo.ts: merges, renames, deletions, binary files, a
// symbolic link; here also a path with a space and a non-ASCII name, a rename with a change,
// CRLF lines and a last line without its end): for random strings drawn from the diffs,
// the commits of `type:diff X` are exactly `git log -G<X escaped> [-i]` over the indexed
// refs, and with select:added/removed exactly the commits whose `git log -p` adds (removes)
// such a line. Then the history moves (main reset, new commits) and the same holds after an
// incremental update that asked git only for the new commits. Zero differences is the only
// pass. TRAWL_DIFF_SEED / TRAWL_DIFF_QUERIES vary it.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { historyBeside, type HistorySearch } from '../../daemon/history/history-search.ts';
import { commitRecordsPath } from '../../daemon/history/commit-records.ts';
import { diffsPath, diffsTailPath, readRecords, recordedCommits } from '../../daemon/history/diff-store.ts';
import { loadManifest } from '../../daemon/index/manifest.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { FileResult, SearchRequest } from '../../daemon/search/types.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { commitsWithLine, ereEscape, gitLogG, gitLogLines, wordsOf, type OracleCommit } from '../helpers/diff-oracle.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo, type HistoryRepo } from '../helpers/history-repo.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 60);

const dir = tempDir('diff-search');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let made: HistoryRepo;
let live: Searcher;
let service: HistorySearch;
let repoId: number;

async function index(): Promise<void> {
  const summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  repoId = summary.repoId;
  const h = await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  assert.notEqual(h, 'unchanged');
}

/** The ids of the commits the tip index's refs name: the tips git walks from. */
function tips(): string[] {
  const m = loadManifest(data, repoId);
  assert.ok(m !== undefined && !('unreadable' in m));
  return [...new Set((m.refs ?? []).map((r) => r.commit))];
}

function extraCommits(): void {
  const r = made.repo;
  const shared = Array.from({ length: 12 }, (_, i) => `shared line ${i} of the renamed file`).join('\n');
  r.commit({ 'dir with space/é.txt': `${shared}\nunique_marker_one\n`, 'crlf.txt': 'alpha_crlf\r\nbeta_crlf\r\n', 'tail.txt': 'no_newline_tail' }, 'odd paths');
  git(src, 'mv', 'dir with space/é.txt', 'renamed é.txt');
  r.commit({ 'renamed é.txt': `${shared}\nunique_marker_two\n`, 'tail.txt': 'no_newline_tail changed' }, 'rename with a change');
  r.commit({ 'special.txt': 'call(a.b) [x] {y} $z ^w |v| ?+*\n' }, 'regex characters');
}

function request(query: string, caseSensitive: boolean, regex = false): Required<SearchRequest> {
  return { query, matches: 1_000_000, contextLines: 0, whole: false, isRegexEnabled: regex, isCaseSensitivityEnabled: caseSensitive };
}

function quoted(s: string): string {
  return `"${s.replace(/[\\"]/g, '\\$&')}"`;
}

async function diffCommits(query: string, caseSensitive: boolean, regex = false): Promise<{ ids: string[]; files: FileResult[] }> {
  const res = await service.search(request(query, caseSensitive, regex));
  assert.equal(res.isSearchExhaustive, true);
  return { ids: [...new Set(res.files.map((f) => f.commit!.id))].sort(), files: res.files };
}

before(async () => {
  made = makeHistoryRepo(src, SEED, 40);
  extraCommits();
  await index();
  live = new Searcher({ dataDir: data, workers: 0 });
  service = historyBeside(live, { dataDir: data });
});

after(async () => {
  await service?.close();
  await live?.close();
  dir.cleanup();
});

/** Random strings of the diffs: words, parts of words, words in another case, and strings with regex syntax. */
function draws(lines: Map<string, OracleCommit>, seed: number, n: number): string[] {
  const r = prng(seed);
  const words = wordsOf(lines);
  const out = ['a.b', '(a.b)', '[x]', '$z ^w', '|v|', '?+*', 'unique_marker_one', 'no_newline_tail', 'alpha_crlf', 'link-to', 'src/a.c'];
  for (let i = 0; i < n; i++) {
    const w = r.pick(words);
    const kind = r.int(4);
    if (kind === 0) out.push(w);
    else if (kind === 1) out.push(w.slice(r.int(Math.max(1, w.length - 3)), w.length));
    else if (kind === 2) out.push(w.toUpperCase());
    else out.push(`${w}${r.chance(0.5) ? '(' : ' '}`.trim());
  }
  return out;
}

async function checkAgainstGit(label: string, seed: number): Promise<void> {
  const refs = tips();
  const lines = gitLogLines(src, refs);
  let differences = 0;
  const report: string[] = [];
  for (const x of draws(lines, seed, QUERIES)) {
    for (const caseSensitive of [false, true]) {
      const want = gitLogG(src, ereEscape(x), caseSensitive, refs);
      const got = await diffCommits(`type:diff ${quoted(x)}`, caseSensitive);
      if (JSON.stringify(got.ids) !== JSON.stringify(want)) {
        differences++;
        report.push(`${label} ${JSON.stringify(x)} case=${caseSensitive}: got ${got.ids.length}, git -G ${want.length}`);
      }
      // git log -p agrees with git log -G (the oracles agree), and select: keeps one side.
      assert.deepEqual(commitsWithLine(lines, x, caseSensitive), want, `git log -p and git log -G disagree on ${JSON.stringify(x)}`);
      for (const select of ['added', 'removed'] as const) {
        const side = await diffCommits(`type:diff select:${select} ${quoted(x)}`, caseSensitive);
        const wantSide = commitsWithLine(lines, x, caseSensitive, select);
        if (JSON.stringify(side.ids) !== JSON.stringify(wantSide)) {
          differences++;
          report.push(`${label} select:${select} ${JSON.stringify(x)} case=${caseSensitive}: got ${side.ids.length}, git log -p ${wantSide.length}`);
        }
        for (const f of side.files) checkResult(f, x, caseSensitive, select);
      }
      for (const f of got.files) checkResult(f, x, caseSensitive);
    }
  }
  assert.equal(differences, 0, report.slice(0, 20).join('\n'));
}

/** A result's shape: signed hunk lines, ranges on the matching lines of the selected side, holding the pattern. */
function checkResult(f: FileResult, x: string, caseSensitive: boolean, select?: 'added' | 'removed'): void {
  assert.deepEqual(f.branches, []);
  assert.ok(f.diff !== undefined && f.commit !== undefined);
  assert.equal(f.diff.parent, f.commit.parents[0] ?? null);
  assert.equal(f.fileName.text, f.diff.path);
  assert.ok(f.chunks.length > 0);
  const fold = (s: string) => (caseSensitive ? s : s.replace(/[A-Z]/g, (c) => c.toLowerCase()));
  for (const c of f.chunks) {
    assert.ok(c.hunk !== undefined);
    const lines = c.content.split('\n');
    assert.ok(lines.every((l) => l.startsWith('+') || l.startsWith('-')));
    assert.equal(lines.filter((l) => l.startsWith('+')).length, c.hunk.newLines);
    assert.equal(lines.filter((l) => l.startsWith('-')).length, c.hunk.oldLines);
    assert.ok(c.matchRanges.length > 0);
    const bytes = Buffer.from(c.content, 'utf8');
    for (const m of c.matchRanges) {
      const line = lines[m.start.lineNumber - 1]!;
      if (select !== undefined) assert.equal(line[0], select === 'added' ? '+' : '-');
      assert.equal(fold(bytes.toString('utf8', m.start.byteOffset, m.end.byteOffset)), fold(x));
      assert.equal(
        Array.from(line)
          .slice(m.start.column - 1, m.end.column - 1)
          .join(''),
        bytes.toString('utf8', m.start.byteOffset, m.end.byteOffset),
      );
    }
  }
}

test('type:diff finds the commits git log -G finds, and select: the side git log -p shows', async () => {
  await checkAgainstGit('first', SEED);
});

test('regular expressions (the same in RE2 and POSIX ERE) find what git log -G finds', async () => {
  const refs = tips();
  for (const re of ['^[[:space:]]+spin', 'mutex[a-z_]*\\(', 'lock$', '[0-9]{2}', 'unique_marker_(one|two)', '^$', '^', 'tail$', 'one[[:space:]]', 'crlf.$']) {
    for (const caseSensitive of [false, true]) {
      const want = gitLogG(src, re, caseSensitive, refs);
      const got = await diffCommits(`type:diff regex:${quoted(re)}`, caseSensitive);
      assert.deepEqual(got.ids, want, re);
    }
  }
});

test('a rename with a change is one result with its old path; file: matches either path', async () => {
  const { files } = await diffCommits('type:diff unique_marker_two', true);
  assert.equal(files.length, 1);
  assert.equal(files[0]!.diff!.path, 'renamed é.txt');
  assert.equal(files[0]!.diff!.oldPath, 'dir with space/é.txt');
  assert.equal((await diffCommits('type:diff unique_marker_two file:^dir', true)).files.length, 1);
  assert.equal((await diffCommits('type:diff unique_marker_two -file:é', true)).files.length, 0);
  assert.equal((await diffCommits('type:diff unique_marker_two repo:^gen$', true)).files.length, 1);
  assert.equal((await diffCommits('type:diff unique_marker_two -repo:gen', true)).files.length, 0);
});

test('matches bounds the lines given, newest first, and the answer says it was cut', async () => {
  const all = await service.search(request('type:diff spin_lock', false));
  assert.ok(all.stats.actualMatchCount > 3);
  const dates = all.files.map((f) => Date.parse(f.commit!.committer.date));
  assert.deepEqual(
    dates,
    [...dates].sort((a, b) => b - a),
  );
  const cut = await service.search({ ...request('type:diff spin_lock', false), matches: 3 });
  assert.equal(cut.isSearchExhaustive, false);
  assert.equal(cut.stats.actualMatchCount, 3);
  assert.equal(cut.stats.totalMatchCount, all.stats.totalMatchCount);
  assert.equal(
    cut.files.reduce((n, f) => n + f.chunks.reduce((k, c) => k + new Set(c.matchRanges.map((m) => m.start.lineNumber)).size, 0), 0),
    3,
  );
  assert.equal(cut.files[0]!.commit!.id, all.files[0]!.commit!.id);
});

test('a diff query that is not one pattern and repo:/file: filters is refused', async () => {
  for (const q of ['type:diff a b', 'type:diff a or b', 'type:diff a -b', 'type:diff a lang:go', 'type:diff repo:x', 'type:diff a rev:main']) {
    await assert.rejects(service.search(request(q, false)), (err: Error & { errorCode?: string }) => err.errorCode === 'FAILED_TO_PARSE_QUERY', q);
  }
});

test('new commits on top go to the records tail; a drop folds it into the base, and a tail left over from another base is not read', async () => {
  const step = async (): Promise<Exclude<Awaited<ReturnType<typeof indexLocalHistory>>, 'unchanged'>> => {
    const h = await indexLocalHistory(await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 }), { dataDir: data, workers: 1 });
    assert.ok(h !== 'unchanged');
    return h;
  };
  const base = readFileSync(diffsPath(data, repoId));
  made.repo.commit({ 'tail.txt': 'tail_commit_one\n' }, 'tail one');
  assert.equal((await step()).diffs.wrote, 'tail');
  made.repo.commit({ 'tail.txt': 'tail_commit_two\n', 'other.txt': 'tail_commit_two elsewhere\n' }, 'tail two');
  const h = await step();
  assert.deepEqual([h.diffs.wrote, h.diffs.added, h.diffs.dropped], ['tail', 1, 0]);
  assert.deepEqual(readFileSync(diffsPath(data, repoId)), base, 'the base is left as it was');
  const parts = readRecords(data, repoId)!;
  assert.equal(parts.length, 2, 'a base and a tail');
  assert.deepEqual(parts[1]!.commits, git(src, 'rev-list', '--reverse', 'HEAD~2..HEAD').trim().split('\n'), 'the tail holds the two new commits');
  assert.equal(parts[1]!.link.base, parts[0]!.link.id);
  await checkAgainstGit('with a tail', SEED + 3);
  // A commit dropped: one base of every commit, the tail gone.
  const stale = readFileSync(diffsTailPath(data, repoId));
  git(src, 'reset', '-q', '--hard', 'HEAD~1');
  made.repo.commit({ 'tail.txt': 'tail_commit_three\n' }, 'tail three');
  const folded = await step();
  assert.deepEqual([folded.diffs.wrote, folded.diffs.added, folded.diffs.dropped], ['base', 1, 1]);
  assert.equal(existsSync(diffsTailPath(data, repoId)), false);
  // As a crash between the new base and the tail's removal would leave them: the old tail is not read with the new base.
  writeFileSync(diffsTailPath(data, repoId), stale);
  assert.equal(readRecords(data, repoId)!.length, 1);
  const reachable = git(src, 'rev-list', ...tips())
    .trim()
    .split('\n')
    .sort();
  assert.deepEqual([...recordedCommits(data, repoId)!].sort(), reachable);
  await checkAgainstGit('after a fold', SEED + 4);
  // And the next commit replaces it with a tail of the new base.
  made.repo.commit({ 'tail.txt': 'tail_commit_four\n' }, 'tail four');
  assert.equal((await step()).diffs.wrote, 'tail');
  assert.deepEqual(
    readRecords(data, repoId)!.map((p) => p.commits.length),
    [reachable.length, 1],
  );
  await checkAgainstGit('with a new tail', SEED + 5);
  // A base whose tables are damaged in place (its meta reads): the next fold reads its commits from git again.
  const damaged = readFileSync(diffsPath(data, repoId));
  damaged[damaged.length - 1]! ^= 0xff;
  writeFileSync(diffsPath(data, repoId), damaged);
  git(src, 'reset', '-q', '--hard', 'HEAD~1');
  made.repo.commit({ 'tail.txt': 'tail_commit_five\n' }, 'tail five');
  const again = await step();
  assert.equal(again.diffs.wrote, 'base');
  assert.equal(again.diffs.added, Number(git(src, 'rev-list', '--count', ...tips()).trim()), 'every commit read from git again');
  await checkAgainstGit('after a damaged base', SEED + 6);
});

test('an update asks git only for the new commits, drops the unreachable ones, and still agrees with git', async () => {
  const before = recordedCommits(data, repoId)!;
  const old = tips();
  // main moves back three commits and grows two new ones: three commits become unreachable.
  git(src, 'reset', '-q', '--hard', 'HEAD~3');
  made.repo.commit({ 'late.txt': 'late_addition spin_lock\n' }, 'late one');
  made.repo.commit({ 'late.txt': 'late_addition changed\n' }, 'late two');
  const summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  const h = await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  assert.ok(h !== 'unchanged');
  assert.equal(h.diffs.added, 2);
  assert.equal(h.diffs.dropped, 3);
  const now = recordedCommits(data, repoId)!;
  const reachable = git(src, 'rev-list', ...tips())
    .trim()
    .split('\n')
    .sort();
  assert.deepEqual([...now].sort(), reachable);
  assert.notDeepEqual(old, tips());
  assert.ok(before.size !== now.size || [...before].some((c) => !now.has(c)));
  await checkAgainstGit('after update', SEED + 1);
});

test('records lost or damaged are rebuilt by the next update, though the history index is up to date', async () => {
  const again = async () => indexLocalHistory(await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 }), { dataDir: data, workers: 1 });
  assert.equal(await again(), 'unchanged');
  const covered = recordedCommits(data, repoId)!.size;
  writeFileSync(diffsPath(data, repoId), 'TRAWLDF1 damaged');
  const h = await again();
  assert.ok(h !== 'unchanged');
  assert.equal(h.diffs.added, covered);
  assert.equal(await again(), 'unchanged');
  const want = gitLogG(src, 'late_addition', false, tips());
  assert.deepEqual((await diffCommits('type:diff late_addition', false)).ids, want);
});

test('a diff result takes its commit from the commit records; without them the answer says it is not exhaustive', async () => {
  const want = gitLogG(src, 'late_addition', false, tips());
  const { files } = await diffCommits('type:diff late_addition', false);
  assert.ok(files.length > 0 && want.length > 0);
  for (const f of files) {
    const shown = git(src, 'show', '-s', '--format=%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B', f.commit!.id).split('\0');
    assert.deepEqual(
      [
        f.commit!.parents.join(' '),
        f.commit!.author.name,
        f.commit!.author.email,
        f.commit!.author.date,
        f.commit!.committer.name,
        f.commit!.committer.email,
        f.commit!.committer.date,
        f.commit!.message,
      ],
      [...shown.slice(0, 7), shown[7]!.replace(/\n+$/, '')],
    );
    assert.equal(f.diff!.parent, f.commit!.parents[0] ?? null);
  }
  const path = commitRecordsPath(data, repoId);
  rmSync(path);
  const res = await service.search(request('type:diff late_addition', false));
  assert.equal(res.files.length, 0, 'no commit record, no result');
  assert.equal(res.isSearchExhaustive, false);
  // The next sync finds the history up to date and makes the commit records again.
  assert.equal(await indexLocalHistory(await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 }), { dataDir: data, workers: 1 }), 'unchanged');
  assert.deepEqual((await diffCommits('type:diff late_addition', false)).ids, want);
});

test('a searcher of index shards refuses type:diff, type:commit and history:yes rather than answer them with files', async () => {
  for (const [query, what] of [
    ['type:diff spin_lock', 'type:diff'],
    ['type:commit spin_lock', 'type:commit'],
    ['history:yes spin_lock', 'history:yes'],
  ] as const) {
    await assert.rejects(
      live.search(request(query, false)),
      (err: Error & { errorCode?: string }) => err.errorCode === 'FAILED_TO_PARSE_QUERY' && err.message.startsWith(`${what} searches the indexed histories`),
      query,
    );
  }
});

test('a history limited to the newest commits finds what git finds among them, and says it is not exhaustive', async () => {
  // A new commit: a history is brought up to date when its refs move.
  made.repo.commit({ 'late.txt': 'late_addition again\n' }, 'late three');
  const summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  const h = await indexLocalHistory(summary, { dataDir: data, workers: 1, maxCommits: 5 });
  assert.ok(h !== 'unchanged' && h.leftOut > 0);
  const held = recordedCommits(data, repoId)!;
  assert.equal(held.size, 5);
  assert.equal(readRecords(data, repoId)![0]!.leftOut, h.leftOut);
  const res = await service.search(request('type:diff regex:^', false));
  assert.equal(res.isSearchExhaustive, false);
  const ids = [...new Set(res.files.map((f) => f.commit!.id))].sort();
  assert.deepEqual(
    ids,
    gitLogG(src, '^', false, tips()).filter((id) => held.has(id)),
  );
  assert.ok(ids.length > 0);
});
