// The command line end to end: `trawl index` then `trawl search --json` in a child
// process, exact positions, and one clear error line with the right exit status for bad
// input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const TRAWL = fileURLToPath(new URL('../../bin/trawl.js', import.meta.url));

function trawl(args: string[], dataDir: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [TRAWL, ...args, '--data-dir', dataDir], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function setup(): { dir: ReturnType<typeof tempDir>; data: string; src: string } {
  const dir = tempDir('cli');
  const src = join(dir.path, 'proj');
  mkdirSync(join(src, 'lib'), { recursive: true });
  writeFileSync(join(src, 'lib', 'hello.c'), '#include <stdio.h>\nint main(void) {\n  printf("héllo wörld\\n"); /* wörld */\n  return 0;\n}\n');
  writeFileSync(join(src, 'README.md'), 'Say hello to the wörld.\r\nAnother line\r\n');
  return { dir, data: join(dir.path, 'data'), src };
}

test('index then search --json returns the API body with exact positions', () => {
  const { dir, data, src } = setup();
  try {
    const idx = trawl(['index', src], data);
    assert.equal(idx.status, 0, idx.stderr);
    assert.match(idx.stdout, /^indexed proj \(directory\): 2 files, .* 0 skipped, \d+ symbols, 1 shard written \(1 in the index\), .* MB\/s\n$/);

    const res = trawl(['search', 'wörld', '--json', '--case'], data);
    assert.equal(res.status, 0, res.stderr);
    const body = JSON.parse(res.stdout);
    assert.deepEqual(Object.keys(body).sort(), ['files', 'isSearchExhaustive', 'repositoryInfo', 'stats']);
    assert.equal(body.isSearchExhaustive, true);
    // Both match whole words; hello.c has two matches, so it ranks first.
    assert.deepEqual(
      body.files.map((f: { fileName: { text: string } }) => f.fileName.text),
      ['lib/hello.c', 'README.md'],
    );
    const hello = body.files[0];
    assert.equal(hello.repository, 'proj');
    assert.equal(hello.language, 'C');
    assert.deepEqual(hello.branches, ['HEAD']);
    assert.equal(hello.chunks.length, 1);
    const chunk = hello.chunks[0];
    assert.equal(chunk.content, '  printf("héllo wörld\\n"); /* wörld */');
    assert.deepEqual(chunk.contentStart, { byteOffset: 36, lineNumber: 3, column: 1 });
    // "  printf(\"héllo " is 16 code points / 17 bytes: the first match starts at column 17.
    assert.deepEqual(chunk.matchRanges, [
      { start: { byteOffset: 53, lineNumber: 3, column: 17 }, end: { byteOffset: 59, lineNumber: 3, column: 22 } },
      { start: { byteOffset: 68, lineNumber: 3, column: 31 }, end: { byteOffset: 74, lineNumber: 3, column: 36 } },
    ]);
    const readme = body.files[1];
    assert.equal(readme.chunks[0].content, 'Say hello to the wörld.\r');
    assert.equal(body.stats.actualMatchCount, 3);
    assert.equal(body.stats.fileCount, 2);
    assert.equal(body.repositoryInfo.length, 1);
    assert.equal(body.stats.flushReason, 'FLUSH_REASON_FINAL_FLUSH');

    // Context lines, a regex, and case-insensitivity.
    const ctx = JSON.parse(trawl(['search', 'RETURN \\d', '--regex', '--context', '1', '--json'], data).stdout);
    assert.equal(ctx.files.length, 1);
    assert.equal(ctx.files[0].chunks[0].content, '  printf("héllo wörld\\n"); /* wörld */\n  return 0;\n}');
    assert.deepEqual(ctx.files[0].chunks[0].contentStart, { byteOffset: 36, lineNumber: 3, column: 1 });

    // The text output is grep-like.
    const text = trawl(['search', 'hello'], data);
    assert.match(text.stdout, /^proj\/README.md:1:Say hello to the wörld\.\r$/m);
  } finally {
    dir.cleanup();
  }
});

test('bad input gets one clear line on stderr and a non-zero exit', () => {
  const { dir, data, src } = setup();
  try {
    const missing = trawl(['index', join(dir.path, 'nope')], data);
    assert.equal(missing.status, 1);
    assert.equal(missing.stderr, `trawl: cannot index ${join(dir.path, 'nope')}: no such file or directory\n`);

    const file = trawl(['index', join(src, 'README.md')], data);
    assert.equal(file.status, 1);
    assert.match(file.stderr, /^trawl: cannot index .*README\.md: not a directory\n$/);

    const brokenGit = join(dir.path, 'broken');
    mkdirSync(join(brokenGit, '.git'), { recursive: true });
    const notGit = trawl(['index', brokenGit], data);
    assert.equal(notGit.status, 1);
    assert.match(notGit.stderr, /^trawl: cannot index .*broken: .*git.*\n$/);

    const usage = trawl(['index'], data);
    assert.equal(usage.status, 2);
    assert.equal(usage.stderr.split('\n').length, 2);
    assert.equal(trawl(['search', 'x', '--bogus'], data).status, 2);

    const empty = trawl(['search', 'x'], data);
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /^trawl: nothing is indexed in .*: run trawl index PATH first\n$/);

    assert.equal(trawl(['index', src], data).status, 0);
    const regex = trawl(['search', 'foo(', '--regex'], data);
    assert.equal(regex.status, 1);
    assert.match(regex.stderr, /^trawl: FAILED_TO_PARSE_QUERY: invalid regular expression "foo\(" at column 1: missing \)\n$/);
    const matches = trawl(['search', 'x', '--matches', '0'], data);
    assert.equal(matches.status, 1);
    assert.equal(matches.stderr, 'trawl: INVALID_REQUEST_BODY: matches must be an integer between 1 and 100000, got 0\n');
  } finally {
    dir.cleanup();
  }
});

test('a corrupt shard is reported in crashes and the other shards still answer', () => {
  const { dir, data, src } = setup();
  try {
    const other = join(dir.path, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'x.c'), 'printf("hello");\n');
    assert.equal(trawl(['index', src], data).status, 0);
    assert.equal(trawl(['index', other], data).status, 0);
    // Truncate the first repository's shard.
    const shardDir = join(data, 'shards', '1');
    const shardFile = join(shardDir, readdirSync(shardDir).find((f) => f.endsWith('.trawl'))!);
    writeFileSync(shardFile, readFileSync(shardFile).subarray(0, 100));
    const res = trawl(['search', 'printf', '--json'], data);
    assert.equal(res.status, 0, res.stderr);
    const body = JSON.parse(res.stdout);
    assert.equal(body.stats.crashes, 1);
    assert.equal(body.isSearchExhaustive, false);
    assert.deepEqual(
      body.files.map((f: { repository: string }) => f.repository),
      ['other'],
    );
    assert.match(res.stderr, /1 shard\(s\) failed/);
  } finally {
    dir.cleanup();
  }
});

test('search type:commit prints each matching commit: repository, id, date, author, then its matching lines', () => {
  const dir = tempDir('cli-commits');
  try {
    const src = join(dir.path, 'proj');
    const repo = TestRepo.init(src);
    repo.commit({ 'a.c': 'int a;\n' }, 'Add a\n\nFixes the widget crash.', { author: 'Ann Author <ann@example.com>', date: '2024-01-02T03:04:05Z' });
    const second = repo.commit({ 'b.c': 'int b;\n' }, 'Fix the widget again', { author: 'Bob <bob@example.com>', date: '2024-02-02T03:04:05Z' });
    const data = join(dir.path, 'data');
    const indexed = trawl(['index', '--history', src], data);
    assert.equal(indexed.status, 0, indexed.stderr);
    const res = trawl(['search', 'type:commit widget author:bob'], data);
    assert.equal(res.status, 0, res.stderr);
    const lines = res.stdout.split('\n');
    assert.deepEqual(lines.slice(0, 2), [`proj ${second} 2024-02-02T03:04:05+00:00 Bob <bob@example.com>`, '    1:Fix the widget again']);
    assert.match(lines[2]!, /^1 match in 1 commit in [\d.]+ ms$/);
    assert.equal(lines.length, 4);
    const body = trawl(['search', 'type:commit widget', '--context', '1'], data).stdout;
    assert.match(body, /\n {4}2-\n {4}3:Fixes the widget crash\.\n/);
    // A diff result names its commit; a history:yes result says when the file held matches.
    const diff = trawl(['search', 'type:diff case:yes "int b"'], data).stdout.split('\n');
    assert.deepEqual(diff.slice(0, 2), [`proj/b.c: commit ${second} 2024-02-02T03:04:05+00:00 Bob`, 'proj/b.c:1:+int b;']);
    const spans = trawl(['search', 'history:yes "int a"'], data).stdout.split('\n');
    assert.match(spans[0]!, /^proj\/a\.c: held matches from [0-9a-f]{10} \(2024-01-02\) until now; 1 change$/);
  } finally {
    dir.cleanup();
  }
});
