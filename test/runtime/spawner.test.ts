// Processes started through the spawner (runtime/spawner.ts): input, output, exit, a kill,
// many at once, and a spawner that dies.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnerPid, spawnSmall, type SpawnedChild } from '../../daemon/runtime/spawner.ts';

function run(child: SpawnedChild, input?: string): Promise<{ out: string; err: string; code: number | null; signal: string | null }> {
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.on('error', () => {});
  child.stdin.end(input ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code: number | null, signal: string | null) => resolve({ out, err, code, signal }));
  });
}

test('a child reads its stdin and its output and exit come back', async () => {
  const big = `${'x'.repeat(3_000_000)}\n`;
  const r = await run(spawnSmall('cat', [], process.env), big);
  assert.equal(r.out, big);
  assert.equal(r.code, 0);
  const e = await run(spawnSmall('sh', ['-c', 'echo oops >&2; exit 3'], process.env));
  assert.deepEqual([e.err, e.code], ['oops\n', 3]);
});

test("the environment given is the child's", async () => {
  const r = await run(spawnSmall('sh', ['-c', 'echo "$TRAWL_SPAWN_TEST"'], { PATH: process.env.PATH, TRAWL_SPAWN_TEST: 'given' }));
  assert.equal(r.out, 'given\n');
});

test('a command that cannot start is an error; a kill ends a child', async () => {
  await assert.rejects(run(spawnSmall('/nonexistent/command', [], process.env)), /ENOENT/);
  const child = spawnSmall('sleep', ['30'], process.env);
  const done = run(child);
  child.kill('SIGKILL');
  const r = await done;
  assert.equal(r.signal, 'SIGKILL');
});

test('many at once, each its own answer', async () => {
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => run(spawnSmall('sh', ['-c', `cat; echo ${i}`], process.env), `in ${i}\n`)));
  answers.forEach((r, i) => assert.equal(r.out, `in ${i}\n${i}\n`));
});

test('a reader that stops early leaves the rest dropped, and the child still ends', async () => {
  const child = spawnSmall('sh', ['-c', 'yes | head -c 5000000'], process.env);
  child.stdin.end();
  const closed = new Promise((resolve) => child.on('close', resolve));
  for await (const _ of child.stdout) break;
  child.kill('SIGKILL');
  await closed;
});

test('a spawner that dies fails the children it carried; the next spawn starts another', async () => {
  // `cat` with its input left open: it ends when the spawner's death closes its stdin.
  const child = spawnSmall('cat', [], process.env);
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdout.resume();
  child.stdin.write('waiting\n');
  const pid = spawnerPid()!;
  process.kill(pid, 'SIGKILL');
  await assert.rejects(done, /spawner process ended/);
  const r = await run(spawnSmall('sh', ['-c', 'echo again'], process.env));
  assert.equal(r.out, 'again\n');
  assert.notEqual(spawnerPid(), pid);
});
