// Differential test of `history:yes` (history/line-introduced.ts): on a generated repository
// (helpers/history-repo.ts: merges into main, renames, deletions), every match of a file on
// the default branch carries `introduced`, and it is the commit git itself says: walking
// main's first-parent line back from the tip, the oldest commit from which the file at that
// path holds the match's line at every commit up to the tip (`git show <commit>:<path>`).
// Zero differences is the only pass.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { HistorySearch } from '../../daemon/history/history-search.ts';
import { MAX_DATED_FILES } from '../../daemon/history/introduced-results.ts';
import { historyDataDir } from '../../daemon/index/data-dir.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo } from '../helpers/history-repo.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);

const dir = tempDir('line-introduced');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let live: Searcher;
let service: HistorySearch;

before(async () => {
  makeHistoryRepo(src, SEED, 40);
  const summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  live = new Searcher({ dataDir: data, workers: 0 });
  service = new HistorySearch(live, () => new Searcher({ dataDir: historyDataDir(data), workers: 1 }), data);
});

after(async () => {
  await service?.close();
  await live?.close();
  dir.cleanup();
});

/** The oracle: since when `line` is in `path` without a break, along main's first-parent line. */
function oracle(): (path: string, line: string) => string | undefined {
  const chain = git(src, 'rev-list', '--first-parent', 'main').trim().split('\n');
  const files = new Map<string, string[] | null>();
  const linesAt = (c: string, path: string): string[] | null => {
    const key = `${c}:${path}`;
    if (!files.has(key)) {
      try {
        const text = execFileSync('git', ['-C', src, 'show', key], { stdio: ['ignore', 'pipe', 'ignore'] }).toString('utf8');
        const lines = text.split('\n');
        if (text.endsWith('\n')) lines.pop();
        files.set(key, lines);
      } catch {
        files.set(key, null);
      }
    }
    return files.get(key)!;
  };
  return (path, line) => {
    let since: string | undefined;
    for (const c of chain) {
      if (!linesAt(c, path)?.includes(line)) break;
      since = c;
    }
    return since;
  };
}

test('history:yes dates every match of the default branch with the commit git says introduced its line', async () => {
  const since = oracle();
  const r = prng(SEED);
  let dated = 0;
  const report: string[] = [];
  for (let i = 0; i < 25; i++) {
    const word = r.pick(WORDS);
    const res = await service.search({
      query: `${word} history:yes`,
      matches: 100_000,
      contextLines: r.int(3),
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: false,
    });
    res.files.forEach((f, k) => {
      for (const c of f.chunks) {
        const lines = c.content.split('\n');
        for (const m of c.matchRanges) {
          const line = lines[m.start.lineNumber - c.contentStart.lineNumber]!;
          if (k >= MAX_DATED_FILES) {
            assert.equal(m.introduced, undefined);
            continue;
          }
          const want = since(f.fileName.text, line);
          dated++;
          if (m.introduced?.id !== want) report.push(`${f.fileName.text} ${JSON.stringify(line)}: ${m.introduced?.id} but git says ${want}`);
        }
      }
    });
  }
  assert.ok(dated > 50, `only ${dated} matches dated`);
  assert.deepEqual(report, []);
});

test('without history:yes no match is dated', async () => {
  const res = await service.search({ query: 'mutex', matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false });
  assert.ok(res.files.length > 0);
  assert.ok(res.files.every((f) => f.chunks.every((c) => c.matchRanges.every((m) => m.introduced === undefined))));
});
