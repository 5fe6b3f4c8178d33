// Ranking on a real tree: hand-judged queries over trawl's own sources (a copy of the
// checkout's `git ls-files`), each naming the file a person looking for it wants (the file
// that defines a function, class or type of that name; the file a file-name query names).
// The expected file must be among the first three; the hit rate is printed, and must stay
// at or above FLOOR.
//
// Moving or renaming code moves the answers: when a file of the table moves, or a
// definition moves to another file, update its row (the test says which row is stale).
// The same idea for Linux 6.1 is bench/queries/linux-judged.json (bench/suite/judged.ts).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { describeMisses, judge, type JudgedQuery } from '../../bench/suite/judged.ts';
import { tempDir } from '../helpers/corpus.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const JUDGED: JudgedQuery[] = [
  // The file defining the name (case-sensitive names, as a programmer types them).
  { query: 'ServiceError', regex: false, caseSensitive: true, expect: 'daemon/errors.ts' },
  { query: 'Searcher', regex: false, caseSensitive: true, expect: 'daemon/search/searcher.ts' },
  { query: 'openStore', regex: false, caseSensitive: true, expect: 'daemon/store/open.ts' },
  { query: 'indexLocal', regex: false, caseSensitive: true, expect: 'daemon/sync/local-repos.ts' },
  { query: 'startTestDaemon', regex: false, caseSensitive: true, expect: 'test/helpers/daemon.ts' },
  { query: 'TestRepo', regex: false, caseSensitive: true, expect: 'test/helpers/git.ts' },
  { query: 'displayName', regex: false, caseSensitive: true, expect: 'daemon/repos/web-urls.ts' },
  { query: 'shardsDir', regex: false, caseSensitive: true, expect: 'daemon/index/data-dir.ts' },
  { query: 'parseConfig', regex: false, caseSensitive: true, expect: 'daemon/config/load.ts' },
  { query: 'Shard', regex: false, caseSensitive: true, expect: 'daemon/index/shard-reader.ts' },
  { query: 'UsageError', regex: false, caseSensitive: true, expect: 'daemon/cli/usage.ts' },
  { query: 'Identity', regex: false, caseSensitive: true, expect: 'daemon/auth/identity.ts' },
  { query: 'Store', regex: false, caseSensitive: true, expect: 'daemon/store/store.ts' },
  { query: 'foreignCores', regex: false, caseSensitive: true, expect: 'bench/suite/machine.ts' },
  { query: 'median', regex: false, caseSensitive: true, expect: 'bench/suite/percentiles.ts' },
  { query: 'usersCommand', regex: false, caseSensitive: true, expect: 'daemon/cli/users-command.ts' },
  { query: 'Services', regex: false, caseSensitive: true, expect: 'daemon/http/services.ts' },
  { query: 'PostingsBuilder', regex: false, caseSensitive: true, expect: 'core/postings-builder.ts' },
  { query: 'hash32', regex: false, caseSensitive: true, expect: 'core/hash.ts' },
  { query: 'class Searcher', regex: false, caseSensitive: true, expect: 'daemon/search/searcher.ts' },
  { query: 'searcher', regex: false, caseSensitive: false, expect: 'daemon/search/searcher.ts' },
  { query: 'manifest', regex: false, caseSensitive: false, expect: 'daemon/index/manifest.ts' },
  { query: 'file:query-language', regex: false, caseSensitive: false, expect: 'docs/query-language.md' },
  { query: 'shard-builder', regex: false, caseSensitive: false, expect: 'daemon/index/shard-builder.ts' },
  { query: 'openapi', regex: false, caseSensitive: false, expect: 'daemon/http/openapi.ts' },
  { query: 'file:branch-set', regex: false, caseSensitive: false, expect: 'daemon/index/branch-set.ts' },
  { query: 'function\\s+planQuery', regex: true, caseSensitive: true, expect: 'daemon/query/plan.ts' },
];

/**
 * 25 of the 27 (93%). The score before BM25 and the file-name and kind signals
 * found 24 (0.89), the current one finds all 27: the floor holds the gain and leaves one
 * miss for code that moved before its row was updated, or a ctags version that parses
 * some TypeScript differently.
 */
const FLOOR = 25 / 27;

const dir = tempDir('judged');
let searcher: Searcher;

before(async () => {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, `git ls-files failed in ${ROOT}: ${listed.stderr}`);
  const files = listed.stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)));
  for (const f of files) {
    mkdirSync(dirname(join(dir.path, 'trawl', f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir.path, 'trawl', f));
  }
  const stale = JUDGED.filter((q) => !files.includes(q.expect)).map((q) => `${q.query} -> ${q.expect}`);
  assert.deepEqual(stale, [], 'rows of the judged table name files that are not in the checkout: update them');
  await indexLocal(join(dir.path, 'trawl'), { dataDir: join(dir.path, 'data'), workers: 2 });
  searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 2 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

test(`hand-judged queries on trawl's sources: the expected file in the top 3 for at least ${Math.round(FLOOR * 100)}%`, async (t) => {
  assert.ok(JUDGED.length >= 20);
  // Every match is ranked (the limit is above any of these queries' matches): this judges the score.
  const report = await judge(JUDGED, (req) => searcher.search(req), { matches: 100_000, top: 3 });
  t.diagnostic(`hit rate ${report.hits}/${JUDGED.length} = ${(report.hitRate * 100).toFixed(1)}%`);
  for (const m of describeMisses(report)) t.diagnostic(`miss: ${m}`);
  // The answer as users get it by default (matches 100): printed, not asserted; which files
  // a search that stops early keeps is the static rank's and the merge's work.
  const limited = await judge(JUDGED, (req) => searcher.search(req), { matches: 100, top: 3 });
  t.diagnostic(`with matches 100: hit rate ${limited.hits}/${JUDGED.length} = ${(limited.hitRate * 100).toFixed(1)}%`);
  assert.ok(report.hitRate >= FLOOR, `hit rate ${report.hits}/${JUDGED.length} is below the floor ${FLOOR.toFixed(2)}:\n${describeMisses(report).join('\n')}`);
});
