// The progress bars of trawl index and trawl sync: drawn on a terminal (a pseudo-terminal
// from script(1) here), never when stderr is not one.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProgressLine, symbolsProgressLine, throttled } from '../../daemon/cli/format.ts';
import { TestRepo } from '../helpers/git.ts';
import { TRAWL, runTrawl } from '../helpers/trawl-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-progress-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the bars', () => {
  assert.equal(buildProgressLine('src', { files: 5, totalFiles: 10, bytes: 2000 }), `\rsrc [${'#'.repeat(15)}${'.'.repeat(15)}]  50% 5/10 files, 2.00 KB`);
  assert.equal(symbolsProgressLine('[1/2] r', { shards: 3, totalShards: 3 }), `\r[1/2] r [${'#'.repeat(30)}] 100% content searchable; symbols 3/3 shards`);
  const drawn: number[] = [];
  const draw = throttled(
    (n: number) => drawn.push(n),
    (n) => n === 100,
    60_000,
  );
  for (let n = 1; n <= 100; n++) draw(n);
  assert.deepEqual(drawn, [1, 100], 'the first and the last, nothing between within the interval');
});

/** Runs trawl under script(1): stdin, stdout and stderr are a terminal; returns what it printed. */
function inTerminal(args: string[]): string {
  const cmd = [process.execPath, TRAWL, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return execFileSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', env: { ...process.env, TERM: 'dumb' } });
}

const haveScript = spawnSync('script', ['--version']).status === 0;
const files = 600; // a build reports every 256 files

test('trawl index and trawl sync draw their bars on a terminal only', { skip: !haveScript && 'no script(1)' }, async () => {
  const tree = join(dir, 'tree');
  mkdirSync(tree);
  for (let i = 0; i < files; i++) writeFileSync(join(tree, `f${String(i).padStart(4, '0')}.c`), `int f${i}(void) { return ${i}; }\n`);
  const shown = inTerminal(['index', tree, '--no-symbols', '--data-dir', join(dir, 'data-tty')]);
  assert.match(shown, /tree \[#+\.*\] +\d+% [\d,]+\/[\d,]+ files, /);
  assert.match(shown, /indexed tree \(directory\): 600 files/);
  const piped = await runTrawl(['index', tree, '--no-symbols', '--data-dir', join(dir, 'data-pipe')], dir);
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stderr, '');
  assert.doesNotMatch(piped.stdout, /\[#/);

  const repos = join(dir, 'repos');
  const repo = TestRepo.init(join(repos, 'widgets'));
  repo.commit(Object.fromEntries(Array.from({ length: files }, (_, i) => [`src/w${i}.c`, `int w${i}(void) { return ${i}; }\n`])), 'widgets');
  const config = join(dir, 'trawl.json');
  writeFileSync(config, JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: `${repos}/*` } } }));
  const synced = inTerminal(['sync', '--config', config, '--data-dir', join(dir, 'data-sync')]);
  // A small repository is built into a compound shard with the others that changed: one bar for them.
  assert.match(synced, /compound shards of 1 repository \[#+\.*\] +\d+% [\d,]+\/600 files, /);
  assert.match(synced, /\[1\/1\] widgets: indexed in full: 600 files/);
});
