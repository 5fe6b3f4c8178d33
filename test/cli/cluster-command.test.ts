// `trawl cluster status` as an operator runs it, when it cannot answer: bad usage exits 2,
// a configuration it cannot use or a Redis it cannot reach exits 1, each with one line on
// stderr (test/cluster/status.test.ts runs it against a real cluster). And formatAge, the
// heartbeat's age in its table.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatAge } from '../../daemon/cli/format.ts';
import { tempDir } from '../helpers/corpus.ts';
import { freePort } from '../helpers/free-port.ts';
import { runTrawl } from '../helpers/trawl-cli.ts';

test('trawl cluster status: bad usage exits 2, an unusable configuration or Redis 1, with one line on stderr', async (t) => {
  const dir = tempDir('cluster-cli');
  t.after(() => dir.cleanup());
  // The children inherit the environment: no configuration but the ones given here.
  const before = process.env.TRAWL_CONFIG;
  process.env.TRAWL_CONFIG = '';
  t.after(() => (before === undefined ? delete process.env.TRAWL_CONFIG : (process.env.TRAWL_CONFIG = before)));
  const port = await freePort();
  writeFileSync(join(dir.path, 'alone.json'), JSON.stringify({ settings: {} }));
  const cluster = { store: 'postgresql://trawl@127.0.0.1:1/trawl', redis: `redis://127.0.0.1:${port}` };
  writeFileSync(join(dir.path, 'down.json'), JSON.stringify({ cluster }));
  // [arguments, exit status, stderr (a RegExp: the one line)]
  const rows: Array<[string[], number, RegExp]> = [
    [['cluster'], 2, /^trawl: cluster takes status\n$/],
    [['cluster', 'stats'], 2, /^trawl: cluster takes status, not "stats"\n$/],
    [['cluster', 'status', 'extra', '--config', 'down.json'], 2, /^trawl: cluster status takes no arguments, got "extra"\n$/],
    [['cluster', 'status', '--bogus'], 2, /^trawl: Unknown option '--bogus'.*\n$/],
    [['cluster', 'status'], 2, /^trawl: cluster status needs the cluster's configuration: --config FILE \(or \$TRAWL_CONFIG, or \.\/trawl\.json\)\n$/],
    [['cluster', 'status', '--config', 'alone.json'], 2, /^trawl: alone\.json has no cluster section: this installation runs alone\n$/],
    [['cluster', 'status', '--config', 'missing.json'], 1, /^trawl: missing\.json: cannot read the configuration file: no such file\n$/],
    [
      ['cluster', 'status', '--config', 'down.json', '--json'],
      1,
      new RegExp(`^trawl: cannot reach the cluster's Redis redis://127\\.0\\.0\\.1:${port}: [^\\n]+\\n$`),
    ],
  ];
  const runs = await Promise.all(rows.map(([args]) => runTrawl(args, dir.path)));
  rows.forEach(([args, code, stderr], i) => {
    const run = runs[i]!;
    assert.equal(run.code, code, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, stderr, args.join(' '));
    assert.equal(run.stdout, '', args.join(' '));
  });
  const help = await runTrawl(['cluster', 'status', '--help'], dir.path);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: trawl cluster status \[--config FILE\] \[--json\]\n[\s\S]*Exit status: 0 when every shard is ok, 1 when/);
});

test('formatAge: a glance at how long ago', () => {
  const rows: Array<[number, string]> = [
    [-5, '0.0s'],
    [0, '0.0s'],
    [349, '0.3s'],
    [9_940, '9.9s'],
    [9_999, '9.9s'],
    [10_000, '10s'],
    [119_999, '119s'],
    [120_000, '2m'],
    [7_199_999, '119m'],
    [7_200_000, '2h'],
    [172_799_999, '47h'],
    [172_800_000, '2d'],
    [40 * 86_400_000, '40d'],
  ];
  for (const [ms, text] of rows) assert.equal(formatAge(ms), text, String(ms));
});
