// Pathological globs against a real daemon (`trawl index` and `trawl serve` as processes,
// so a matcher that backtracks makes this test fail at its timeouts instead of hanging
// it): a configured revisions glob and a query's `branch:` glob against a long branch
// name, and the MCP glob tool over a repository of deep and long paths while /api/health
// is polled. The daemon keeps answering: the worst health latency is reported, and the
// costliest pattern stops at the tool's matching budget with a clear error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { prng, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { healthPoller, ownDelay, showHealth, type HealthSample } from '../helpers/health-poller.ts';
import { serve, stop } from '../helpers/serve.ts';

const TRAWL = join(import.meta.dirname, '..', '..', 'bin', 'trawl.js');
const FULL = process.env.TRAWL_FAULTS_FULL === '1';

const LONG_BRANCH = 'a'.repeat(63);
/** `*a` ×12 + `b`: the old matcher backtracked for hours on 63 `a`s. */
const STARS_A = `${'*a'.repeat(12)}b`;
const DEEP_DIR = Array.from({ length: 30 }, (_, i) => `d${i}`).join('/');
const DEEP_FILES = FULL ? 400 : 100;
/** Long paths for the costliest pattern: three shared 200-character directories, then a 200-character name. */
const LONG_FILES = 500;

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text: string }> };

test('pathological globs against a real daemon: it keeps answering', async (t) => {
  const dir = tempDir('glob-daemon');
  let child: Awaited<ReturnType<typeof serve>>['child'] | undefined;
  try {
    const rnd = prng(18);
    const ab = (n: number) => Array.from({ length: n }, () => (rnd.chance(0.5) ? 'a' : 'b')).join('');
    const longDir = [ab(200), ab(200), ab(200)].join('/');
    const repo = TestRepo.init(join(dir.path, 'deep-repo'));
    const files: Record<string, string> = { 'README.md': 'deep and long paths\n' };
    for (let i = 0; i < DEEP_FILES; i++) files[`${DEEP_DIR}/f${i}.c`] = `int deep_${i};\n`;
    for (let i = 0; i < LONG_FILES; i++) files[`${longDir}/${ab(200)}`] = 'x\n';
    repo.commit(files, 'deep and long paths');
    repo.checkout(LONG_BRANCH, true).commit({ 'long-branch.c': 'int long_branch_marker;\n' }, 'on the long branch');
    repo.checkout('main');

    // A configured revisions glob (the CLI's --branches) that backtracks on the long
    // branch's name, next to the literal name that selects it.
    const data = join(dir.path, 'data');
    const indexed = spawnSync(process.execPath, [TRAWL, 'index', repo.path, '--data-dir', data, '--branches', `${STARS_A},${LONG_BRANCH}`], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(indexed.status, 0, `trawl index: ${indexed.signal ?? ''} ${indexed.stderr}`);

    const served = await serve(['--data-dir', data, '--log-level', 'silent'], dir.path);
    child = served.child;
    const url = served.url;

    await t.test('branch: globs on a long branch name, through the search', async () => {
      const search = async (query: string) => {
        const res = await fetch(`${url}/api/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query, matches: 10 }),
          signal: AbortSignal.timeout(20_000),
        });
        assert.equal(res.status, 200, query);
        return ((await res.json()) as { files: Array<{ fileName: { text: string }; branches: string[] }> }).files.map(
          (f) => `${f.fileName.text}@${f.branches.join(',')}`,
        );
      };
      const t0 = performance.now();
      assert.deepEqual(await search(`long_branch_marker branch:${STARS_A}`), []);
      t.diagnostic(`branch:${STARS_A} against a 63-character branch: ${(performance.now() - t0).toFixed(0)} ms`);
      assert.deepEqual(await search('long_branch_marker branch:*a*a*a'), [`long-branch.c@${LONG_BRANCH}`]);
    });

    await t.test('the glob tool: pathological patterns while /api/health is polled', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`));
      const client = new Client({ name: 'glob-faults', version: '1.0.0' });
      await client.connect(transport);
      // Polled from a worker thread, with the scheduler's account of the daemon's main thread
      // and of the polling thread: how long either waited for a CPU is the machine's load.
      const poller = healthPoller(url, served.child.pid!);
      let samples: HealthSample[] = [];
      const glob = async (pattern: string): Promise<{ r: ToolResult; ms: number }> => {
        const t0 = performance.now();
        const r = (await client.callTool({ name: 'glob', arguments: { repo: 'deep-repo', pattern, limit: 1000 } }, undefined, {
          timeout: 60_000,
        })) as ToolResult;
        return { r, ms: performance.now() - t0 };
      };
      let costly: { r: ToolResult; ms: number } | undefined;
      try {
        await poller.started;
        // The patterns: answers, quickly.
        const none = await glob(`${'**/'.repeat(10)}x.h`);
        assert.ok(!none.r.isError, none.r.content[0]?.text);
        assert.equal(none.r.structuredContent.total, 0);
        const deep = await glob(`${'**/'.repeat(10)}f*.c`);
        assert.equal(deep.r.structuredContent.total, DEEP_FILES);
        // No name here ends with `c`; names of `a`s and `b`s: every split of the `a`s is a try.
        const stars = await glob(`**/${'*a'.repeat(12)}c`);
        assert.equal(stars.r.structuredContent.total, 0);
        t.diagnostic(
          `**/ x10 over ${DEEP_FILES + LONG_FILES + 1} paths: ${none.ms.toFixed(0)} ms; **/ x10 + f*.c: ${deep.ms.toFixed(0)} ms; **/ + *a x12 + c: ${stars.ms.toFixed(0)} ms`,
        );

        // The costliest kind of pattern the bounds allow (64 alternatives of seven stars, costly
        // at every character of 800-character paths): more work than the budget allows.
        costly = await glob(`**/*${'{a*,b*}'.repeat(6)}`);
        t.diagnostic(`the costly pattern: ${costly.r.content[0]!.text.slice(0, 120)}... after ${costly.ms.toFixed(0)} ms`);
      } finally {
        samples = await poller.stop();
        await client.close();
      }
      const worst = samples.reduce((w, x) => (x.ms > w.ms ? x : w));
      const worstNet = samples.reduce((w, x) => (ownDelay(x) > ownDelay(w) ? x : w));
      const median = samples.map((x) => x.ms).sort((a, b) => a - b)[samples.length >> 1]!;
      t.diagnostic(
        `/api/health answered ${samples.length} times during the glob calls; latency median ${median.toFixed(0)} ms, worst ${showHealth(worst)}; worst less the daemon's wait for a CPU and the poller's own time ${showHealth(worstNet)}`,
      );
      assert.ok(samples.length >= 10, `health polled ${samples.length} times`);
      // The matching runs in 10 ms slices, and one path of the costly pattern takes longer
      // than a slice. A daemon that matched in one go would not answer for the whole filter
      // (its main thread running, not waiting), far longer than the bound below. The time
      // the machine's load kept the daemon or the poller from running is not the daemon's.
      assert.ok(ownDelay(worstNet) < 1500, `worst health latency, less the daemon's wait for a CPU and the poller's own time: ${showHealth(worstNet)}`);
      assert.equal(costly!.r.isError, true);
      assert.match(costly!.r.content[0]!.text, /^INVALID_ARGUMENT: pattern: matching stopped after \d+ ms with \d+ of \d+ paths checked/);
    });
  } finally {
    if (child) await stop(child);
    dir.cleanup();
  }
});
