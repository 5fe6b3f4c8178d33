// /metrics reports the daemon's resident memory split (docs/operations.md "Metrics"):
// RssAnon (what the daemon allocated) and RssFile (mapped shard pages the kernel can drop)
// apart, read from /proc/self/status, so that an operator sees the growth that matters and
// not VmRSS alone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestDaemon } from '../helpers/daemon.ts';

const gauge = (text: string, name: string): number => {
  const m = new RegExp(`^${name} (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)$`, 'm').exec(text);
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
};

test('/metrics has RssAnon and RssFile, which with RssShmem make up the resident memory', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
  const d = await startTestDaemon({ settings: { anonymousAccess: true } });
  try {
    // A search maps shard pages: RssFile has something of the index in it.
    assert.equal(
      (
        await fetch(`${d.url}/api/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'widget_count', matches: 10 }),
        })
      ).status,
      200,
    );
    const text = await (await fetch(`${d.url}/metrics`)).text();
    const anon = gauge(text, 'trawl_process_resident_anon_bytes');
    const file = gauge(text, 'trawl_process_resident_file_bytes');
    const shmem = gauge(text, 'trawl_process_resident_shmem_bytes');
    const rss = gauge(text, 'trawl_process_resident_memory_bytes');
    assert.match(text, /# HELP trawl_process_resident_anon_bytes .*RssAnon/);
    assert.ok(anon > 0 && file > 0, `anon ${anon}, file ${file}`);
    // The same /proc/self/status, read a moment apart: the parts add up to VmRSS, give or take what moved meanwhile.
    const sum = anon + file + shmem;
    assert.ok(Math.abs(sum - rss) < 0.1 * rss, `RssAnon + RssFile + RssShmem ${sum} vs VmRSS ${rss}`);
    // And they are this process's figures (the test daemon runs in this process).
    const own = Number(/^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
    assert.ok(Math.abs(own - anon) < 0.25 * own, `RssAnon ${anon} vs /proc/self/status ${own}`);
  } finally {
    await d.cleanup();
  }
});
