// `trawl bench webhooks` end to end on 30 tiny repositories, with a short flood: the result
// files written, every figure measured (searches beside the pushes among them), every bad
// notice refused, no index moved, every flood notice accepted and every changed repository
// searchable after. Durations are printed, not asserted (targets are checked on the
// committed bench results).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/corpus.ts';
import { runTrawl } from '../helpers/trawl-cli.ts';

test('trawl bench webhooks: pushes, refusals and a flood on tiny repositories', async (t) => {
  const dir = tempDir('bench-webhooks');
  t.after(() => dir.cleanup());
  const out = join(dir.path, 'result');
  const args = ['bench', 'webhooks', '--repos', '30', '--changed', '4', '--pushes', '3', '--flood', '300', '--flood-seconds', '3', '--queries', '20'];
  const run = await runTrawl([...args, '--cache', join(dir.path, 'cache'), '--out', out], dir.path);
  assert.equal(run.code, 0, run.stderr);
  for (const line of run.stderr.trim().split('\n')) t.diagnostic(line);
  const r = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as {
    corpus: { repositories: number; changed: number };
    pushToSearchable: { pushes: number; samplesMs: number[]; beside?: { searches: number; p99: number } };
    refused: Record<string, { sent: number; refused: number }> & { indexMoved: boolean };
    flood: { notices: number; accepted: number; statuses: Record<string, number>; searches: number; rssAnonMaxBytes: number };
  };
  assert.deepEqual([r.corpus.repositories, r.corpus.changed], [30, 4]);
  assert.equal(r.pushToSearchable.samplesMs.length, 3);
  // The first search beside the pushes is sent as they start.
  assert.ok((r.pushToSearchable.beside?.searches ?? 0) >= 1 && r.pushToSearchable.beside!.p99 > 0);
  for (const kind of ['forged', 'unsigned', 'oversized', 'malformed', 'replayed']) {
    assert.deepEqual(r.refused[kind], { sent: 100, refused: 100 }, kind);
  }
  assert.equal(r.refused.indexMoved, false);
  assert.equal(r.flood.notices, 300);
  assert.deepEqual(r.flood.statuses, { 202: 300 });
  assert.ok(r.flood.searches > 0 && r.flood.rssAnonMaxBytes > 0);
  assert.match(readFileSync(`${out}.md`, 'utf8'), /^# Push webhooks: 30 tiny repositories/);
  assert.match(readFileSync(`${out}.md`, 'utf8'), /^\| searches beside the pushes, one every 50 ms/m);
});
