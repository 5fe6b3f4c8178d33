// The README's quick tour runs as written, on the small tree docs/tour/, and prints what
// the README shows: so the sample output cannot go stale.
//
// Each `$ COMMAND` line of the tour's code blocks is run through bash from the
// repository's root, and what it prints is compared with the lines under it:
//   - `export TRAWL_DATA_DIR=$(mktemp -d)` gives the tour a data dir of its own (here: one
//     this test makes and removes);
//   - `trawl ...` runs `bin/trawl ...`, the command scripts/setup.sh links onto the PATH
//     (package.json `bin`, checked below);
//   - `npm start` starts `trawl serve` (package.json `start`) on a free port, compared with
//     what it prints on stderr; `localhost:3000` in later commands is that port;
//   - anything else (curl) runs as written.
// Before comparing, times are masked on both sides (`12.3 ms`, `0.4 s`, `0.1 MB/s`, the
// nanosecond timings of the search stats, ISO dates), and `: keep-alive` comments of a
// stream are dropped. In the README, `...` within a line (with the spaces around it) stands
// for any text, and a line that is only `...` for any number of lines.
//
// After a change that alters the output, regenerate the README's tour:
//   TRAWL_TOUR_WRITE=1 node --import tsx --test test/docs/readme-tour.test.ts
// which rewrites each output that no longer matches with what the command printed (then
// shorten long lines with `...` by hand if you like, and check the diff).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/corpus.ts';
import { serve, stop, type ServeProcess } from '../helpers/serve.ts';

const ROOT = join(import.meta.dirname, '../..');
const README = join(ROOT, 'README.md');
const WRITE = process.env.TRAWL_TOUR_WRITE === '1';

interface Step {
  command: string;
  /** Lines of the README under the command (without the block's 4-space indent). */
  expected: string[];
  /** Where those lines are in the README (0-based, end exclusive), for rewriting. */
  start: number;
  end: number;
}

/** The `$ ` commands of the "Quick tour" section and the output lines under each. */
export function tourSteps(readme: string): Step[] {
  const lines = readme.split('\n');
  const from = lines.indexOf('## Quick tour');
  assert.ok(from >= 0, 'the README has a "## Quick tour" section');
  let to = lines.findIndex((l, i) => i > from && l.startsWith('## '));
  if (to < 0) to = lines.length;
  const steps: Step[] = [];
  let current: Step | undefined;
  const close = (at: number) => {
    if (!current) return;
    current.end = at;
    while (current.end > current.start && lines[current.end - 1]!.trim() === '') current.end--; // trailing blank lines
    current.expected = lines.slice(current.start, current.end).map((l) => l.slice(4));
    steps.push(current);
    current = undefined;
  };
  for (let i = from + 1; i < to; i++) {
    const line = lines[i]!;
    if (line.startsWith('    $ ')) {
      close(i);
      current = { command: line.slice(6), expected: [], start: i + 1, end: i + 1 };
    } else if (line.trim() !== '' && !line.startsWith('    ')) {
      close(i); // the code block ended: prose follows
    }
  }
  close(to);
  return steps;
}

function normalize(text: string): string[] {
  const lines = text
    .replace(/"(duration|wait|matchTreeConstruction|matchTreeSearch)":\d+/g, '"$1":<ns>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<date>')
    .replace(/\b\d+(\.\d+)? MB\/s\b/g, '<rate>')
    .replace(/\b\d+(\.\d+)? m?s\b/g, '<time>')
    .split('\n');
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  return lines;
}

function lineMatches(expected: string, actual: string): boolean {
  const pattern = expected
    .split(/ ?\.\.\. ?/)
    .map((p) => p.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(actual);
}

/** `...` alone on a line: any number of lines. */
export function outputMatches(expected: string[], actual: string[]): boolean {
  const go = (i: number, j: number): boolean => {
    if (i === expected.length) return j === actual.length;
    if (expected[i]!.trim() === '...') {
      for (let k = j; k <= actual.length; k++) if (go(i + 1, k)) return true;
      return false;
    }
    return j < actual.length && lineMatches(expected[i]!, actual[j]!) && go(i + 1, j + 1);
  };
  return go(0, 0);
}

function run(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the tour maps trawl and npm start to what package.json says they are', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
  assert.equal(pkg.bin.trawl, 'bin/trawl');
  assert.equal(pkg.scripts.start, 'bin/trawl serve');
});

test('the matcher: ... within a line, ... alone for any lines, the rest exact', () => {
  assert.ok(outputMatches(['a ...z', '...', 'end'], ['a bcz', 'x', 'y', 'end']));
  assert.ok(outputMatches(['{"a":1, ...,"z":2}'], ['{"a":1,"b":3,"z":2}']), 'the spaces around ... are part of it');
  assert.ok(outputMatches(['...', 'end'], ['end']));
  assert.ok(!outputMatches(['a ...z'], ['a bc']), 'the text after ... must be there');
  assert.ok(!outputMatches(['a', 'b'], ['a', 'b', 'c']), 'no extra lines');
  assert.ok(!outputMatches(['(x)'], ['x']), 'regex characters are literal');
  assert.deepEqual(normalize('in 12.5 ms, 0.4 s, 3.1 MB/s "duration":123 2026-11-23T12:00:00.000Z\n\n'), ['in <time>, <time>, <rate> "duration":<ns> <date>']);
});

test('the README quick tour prints what the README shows', { timeout: 300_000 }, async (t) => {
  if (spawnSync('curl', ['--version']).status !== 0) assert.fail('the tour needs curl (scripts/setup.sh installs it)');
  const readme = readFileSync(README, 'utf8');
  const steps = tourSteps(readme);
  assert.ok(steps.length >= 5, `the tour has commands (${steps.length} found)`);
  const dir = tempDir('tour');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const v of ['TRAWL_CONFIG', 'TRAWL_DATA_DIR', 'TRAWL_PORT', 'TRAWL_PUBLIC_URL', 'TRAWL_LOG_LEVEL']) delete env[v];
  let daemon: ServeProcess | undefined;
  let port = '';
  const stale: Array<{ step: Step; actual: string }> = [];
  try {
    for (const step of steps) {
      let printed: string;
      const cmd = step.command.replace(/\s+#.*$/, '');
      if (/^export TRAWL_DATA_DIR=\$\(mktemp -d\)$/.test(cmd)) {
        env.TRAWL_DATA_DIR = dir.path;
        printed = '';
      } else if (cmd === 'npm start') {
        assert.ok(env.TRAWL_DATA_DIR, 'the tour sets its data dir before npm start');
        daemon = await serve(['--data-dir', env.TRAWL_DATA_DIR]);
        port = new URL(daemon.url).port;
        printed = `trawl: listening on ${daemon.url}\n`;
      } else {
        const line = step.command.replace(/^trawl /, 'bin/trawl ').replace(/\b(localhost|127\.0\.0\.1):3000\b/g, (_, host: string) => {
          assert.ok(port, `${step.command}: npm start comes first`);
          return `${host}:${port}`;
        });
        const r = await run(line, env);
        assert.equal(r.code, 0, `${step.command} failed: ${r.stderr}`);
        printed = r.stdout + r.stderr;
      }
      if (port) printed = printed.replaceAll(`127.0.0.1:${port}`, '127.0.0.1:3000');
      printed = printed.replace(/^: keep-alive\n\n/gm, '');
      const ok = outputMatches(normalize(step.expected.join('\n')), normalize(printed));
      t.diagnostic(`${ok ? 'same' : 'DIFFERENT'}: $ ${step.command}`);
      if (!ok) stale.push({ step, actual: printed.replace(/\n+$/, '') });
    }
  } finally {
    if (daemon) await stop(daemon.child);
    dir.cleanup();
  }
  if (WRITE && stale.length > 0) {
    const lines = readme.split('\n');
    for (const { step, actual } of [...stale].reverse()) {
      const block = actual === '' ? [] : actual.split('\n').map((l) => (l === '' ? '' : `    ${l}`));
      lines.splice(step.start, step.end - step.start, ...block);
    }
    writeFileSync(README, lines.join('\n'));
    t.diagnostic(`rewrote the output of ${stale.length} command(s) in README.md: check the diff`);
    return;
  }
  assert.deepEqual(
    stale.map((s) => `$ ${s.step.command}\n--- the README shows:\n${s.step.expected.join('\n')}\n--- it printed:\n${s.actual}`),
    [],
    'the README quick tour is stale: regenerate it with TRAWL_TOUR_WRITE=1 node --import tsx --test test/docs/readme-tour.test.ts',
  );
});
