// `trawl index`'s summary line and the bench's reading of it (bench/build.ts): the symbols
// part with its notes, each of which may be absent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summaryLine } from '../../daemon/cli/index-command.ts';
import { symbolsFromSummaryLine } from '../../bench/suite/build.ts';
import type { IndexSummary } from '../../daemon/index/index-summary.ts';

const base: IndexSummary = {
  repoId: 1,
  repoName: 'linux',
  source: '/src/linux',
  kind: 'git',
  mode: 'full',
  refs: [],
  files: 78_536,
  builtFiles: 78_536,
  skipped: 0,
  skippedByReason: {},
  contentBytes: 1_010_000_000,
  totalBytes: 1_300_000_000,
  shards: 10,
  totalShards: 10,
  seconds: 18.8,
  contentSeconds: 7.3,
  symbols: 4_345_956,
  symbolFailures: 0,
};

test('the summary line says how many files took their symbols from the previous index, and how many ctags failed on', () => {
  const cases: Array<[Partial<IndexSummary>, string, number]> = [
    [{}, '4,345,956 symbols, 10 shards', 0],
    [{ symbolsReused: 0 }, '4,345,956 symbols, 10 shards', 0],
    [{ symbolFailures: 3 }, '4,345,956 symbols (ctags failed on 3 files), 10 shards', 3],
    [{ symbolsReused: 70_012 }, '4,345,956 symbols (taken from the previous index for 70,012 files), 10 shards', 0],
    [
      { symbolsReused: 70_012, symbolFailures: 1_234 },
      '4,345,956 symbols (taken from the previous index for 70,012 files, ctags failed on 1,234 files), 10 shards',
      1234,
    ],
  ];
  for (const [change, part, failures] of cases) {
    const line = summaryLine({ ...base, ...change });
    assert.ok(line.includes(part), `${line}\nlacks ${part}`);
    assert.ok(line.includes('18.8 s (content searchable after 7.3 s)'), line);
    assert.deepEqual(symbolsFromSummaryLine(line), { symbolCount: 4_345_956, symbolFailures: failures }, line);
  }
  assert.deepEqual(symbolsFromSummaryLine('linux: up to date (3 files), 0.1 s'), { symbolCount: null, symbolFailures: null });
});
