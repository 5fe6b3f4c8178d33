// `trawl serve` as an operator runs it: a real process. With an empty data dir and no
// configuration it indexes the repository it is started in and answers searches; SIGTERM
// stops it cleanly (exit 0); bad flags are one line on stderr with exit 2; anonymous
// access off means 401. Also: the native uWebSockets.js binary is required, not its
// JavaScript fallback.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chooseTransport } from '../../daemon/http/choose-transport.ts';
import { loadUws, loadUwsBinary } from '../../daemon/http/transport-uws.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { exited, serve } from '../helpers/serve.ts';

const TRAWL = join(import.meta.dirname, '../..', 'bin', 'trawl.js');

test('npm start: an empty data dir indexes the repository it starts in; SIGTERM stops it cleanly', async () => {
  const dir = tempDir('serve');
  try {
    const repo = TestRepo.init(join(dir.path, 'project'));
    repo.commit({ 'lib/answer.py': 'def serve_test_answer():\n    return 42\n' });
    const { child, url, stdout } = await serve(['--data-dir', join(dir.path, 'data')], repo.path);
    const res = await fetch(`${url}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'serve_test_answer', matches: 10 }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { files: Array<{ repository: string; fileName: { text: string } }> };
    assert.deepEqual(
      body.files.map((f) => `${f.repository}:${f.fileName.text}`),
      ['project:lib/answer.py'],
    );
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
    const lines = stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; level: number });
    assert.ok(
      lines.some((l) => l.msg.includes('anonymous access ON')),
      'the zero-configuration default is logged',
    );
    assert.ok(
      lines.some((l) => l.msg === 'request'),
      'requests are logged',
    );
    assert.equal(lines.at(-1)!.msg, 'stopped');
  } finally {
    dir.cleanup();
  }
});

test('a configuration with anonymous access off answers 401 without credentials', async () => {
  const dir = tempDir('serve-auth');
  try {
    const repo = TestRepo.init(join(dir.path, 'project'));
    repo.commit({ 'a.txt': 'hello\n' });
    writeFileSync(join(dir.path, 'trawl.json'), JSON.stringify({ settings: { anonymousAccess: false, symbols: false } }));
    const { child, url } = await serve(['--data-dir', join(dir.path, 'data'), '--config', join(dir.path, 'trawl.json'), '--log-level', 'silent'], repo.path);
    try {
      const res = await fetch(`${url}/api/repos`);
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { errorCode: string }).errorCode, 'NOT_AUTHENTICATED');
      assert.equal((await fetch(`${url}/api/health`)).status, 200, 'system endpoints need no credentials');
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  } finally {
    dir.cleanup();
  }
});

test('bad flags: one line on stderr, exit 2', () => {
  for (const [args, message] of [
    [['--port', 'abc'], /--port must be an integer between 0 and 65535, got "abc"/],
    [['--log-level', 'loud'], /--log-level must be one of/],
    [['extra'], /serve takes no arguments/],
  ] as const) {
    const r = spawnSync(process.execPath, [TRAWL, 'serve', ...args], { encoding: 'utf8' });
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});

test('uWebSockets.js: its native binary for this Node, or a refusal with the reason; never the JavaScript fallback', () => {
  assert.throws(() => loadUwsBinary('uws_plan9_mips_1.node'), /no working native build uws_plan9_mips_1\.node .*its slow JavaScript fallback is never used/);
  let uws: ReturnType<typeof loadUws> | undefined;
  try {
    uws = loadUws();
  } catch (err) {
    assert.match((err as Error).message, new RegExp(`uws_${process.platform}_${process.arch}_${process.versions.modules}\\.node`));
  }
  if (uws) assert.equal(typeof uws.App, 'function');
  // Where it does not load, the server chooses node:http; asking for uWS there is an error.
  assert.equal(chooseTransport().name, uws ? 'uws' : 'node');
  assert.equal(chooseTransport('node').name, 'node');
  if (!uws) assert.throws(() => chooseTransport('uws'), /no working native build/);
  assert.throws(() => chooseTransport('h2o'), /TRAWL_HTTP_TRANSPORT is "h2o": use node, uws or auto/);
});
