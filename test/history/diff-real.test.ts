// Differential test of `type:diff` against git on real histories: clones of hono (about
// 2,800 commits) and ripgrep (about 2,300: helpers/real-history.ts), its diff and commit records built as the history index builds them
// (history/diff-index.ts, commit-records.ts), joined and searched as the service searches them. For identifiers drawn
// from its diffs (some in another case), the commits found equal `git log -G<X escaped>
// [-i] HEAD`, and with select:added/removed those whose `git log -p` adds (removes) such a
// line. Zero differences is the only pass. Skipped without the corpora (TRAWL_CORPORA).
// TRAWL_DIFF_SEED / TRAWL_HONO_QUERIES vary it.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CommitCatalog } from '../../daemon/history/commit-catalog.ts';
import { commitRecordsPath, updateCommitRecords } from '../../daemon/history/commit-records.ts';
import { indexDiffs } from '../../daemon/history/diff-index.ts';
import { diffAnswer } from '../../daemon/history/diff-result.ts';
import { diffQuery, findDiffs, joinDiffRepo } from '../../daemon/history/diff-search.ts';
import { readRecords } from '../../daemon/history/diff-store.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { commitsWithLine, ereEscape, gitLogG, gitLogLines, wordsOf } from '../helpers/diff-oracle.ts';
import { git } from '../helpers/git.ts';
import { cloneCorpus, corpusSkip } from '../helpers/real-history.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const QUERIES = Number(process.env.TRAWL_HONO_QUERIES ?? 24);

const dir = tempDir('diff-real');
after(() => dir.cleanup());

for (const name of ['hono', 'ripgrep'] as const)
  test(`type:diff on a clone of ${name} finds exactly what git log -G and git log -p find`, {
    skip: corpusSkip(name),
  }, async () => {
    const src = cloneCorpus(name, dir.path);
    // Parents first, as the history walk gives them.
    const commits = git(src, 'rev-list', '--topo-order', '--reverse', 'HEAD').trim().split('\n');
    const head = commits[commits.length - 1]!;
    await updateCommitRecords(src, commitRecordsPath(dir.path, 1), { tips: [head], ids: commits, leftOut: 0 });
    const built = await indexDiffs({ dataDir: dir.path, repoId: 1, gitDir: src, commits });
    assert.equal(built.added, commits.length);
    const [records] = readRecords(dir.path, 1)!;
    assert.ok(records !== undefined);
    const byId = new CommitCatalog();
    const held = byId.records(commitRecordsPath(dir.path, 1))!;
    const repo = joinDiffRepo(
      1,
      { name, displayName: name, codeHostType: 'genericGitHost', archived: false, fork: false, visibility: 'public', kind: 'git', source: src },
      records,
      byId.byId(held),
    );
    assert.equal(repo.unjoined, 0, 'every commit with lines has its commit record');
    const lines = gitLogLines(src, ['HEAD']);
    const words = wordsOf(lines);
    const r = prng(SEED);
    const report: string[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const w = r.pick(words);
      const x = r.chance(0.25) ? w.toUpperCase() : w;
      const caseSensitive = r.chance(0.3);
      const search = (query: string): string[] => {
        const q = diffQuery(planQuery({ query, isCaseSensitivityEnabled: caseSensitive }));
        const a = diffAnswer(findDiffs([repo], q, {}), {
          matches: 10_000_000,
          baseUrl: 'http://x',
          startedNs: process.hrtime.bigint(),
          ...(q.select ? { select: q.select } : {}),
        });
        assert.equal(a.isSearchExhaustive, true);
        return [...new Set(a.files.map((f) => f.commit!.id))].sort();
      };
      const want = gitLogG(src, ereEscape(x), caseSensitive, ['HEAD']);
      const got = search(`type:diff ${x}`);
      if (JSON.stringify(got) !== JSON.stringify(want)) report.push(`${x} case=${caseSensitive}: got ${got.length}, git log -G ${want.length}`);
      for (const select of ['added', 'removed'] as const) {
        const side = search(`type:diff select:${select} ${x}`);
        const wantSide = commitsWithLine(lines, x, caseSensitive, select);
        if (JSON.stringify(side) !== JSON.stringify(wantSide))
          report.push(`select:${select} ${x} case=${caseSensitive}: got ${side.length}, git log -p ${wantSide.length}`);
      }
    }
    assert.deepEqual(report, []);
  });
