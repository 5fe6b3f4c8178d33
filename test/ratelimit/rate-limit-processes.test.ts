// Acceptance of the rate limit (docs/identity.md "Rate limit"): with a limit of 100 per
// day, 4 client processes sending 50 requests each, through two `trawl serve` processes
// that share the store, see exactly 100 successes and 100 429s, and the
// X-RateLimit-Remaining values of the successes are 99 down to 0, each exactly once. The
// clients use one user's different credentials (two API keys in both headers, a scoped
// token), so the budget is the user's. Once with the counters in the shared SQLite
// database, once in a shared Redis.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { credentialHash, newScopedToken, serverSecret } from '../../daemon/auth/credentials.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import type { RateClientResult } from '../helpers/rate-client.ts';
import { startTestRedis } from '../helpers/redis.ts';
import { serve, stop } from '../helpers/serve.ts';

const ROOT = join(import.meta.dirname, '../..');
const CLIENT = join(ROOT, 'test', 'helpers', 'rate-client.ts');

const redis = await startTestRedis();

for (const backend of ['embedded', 'redis'] as const) {
  const skip = backend === 'redis' && 'skip' in redis ? redis.skip : undefined;
  test(`limit 100: 4 clients × 50 requests through 2 daemons sharing the ${backend} counters → exactly 100 × 200 and 100 × 429`, { skip }, async () => {
    const dir = tempDir(`ratelimit-${backend}`);
    const daemons: ChildProcess[] = [];
    try {
      const dataDir = join(dir.path, 'data');
      const repo = TestRepo.init(join(dir.path, 'project'));
      repo.commit({ 'limit.txt': 'the limit is a hundred\n' });
      await indexLocal(repo.path, { dataDir, symbols: false });
      const store = backend === 'redis' && !('skip' in redis) ? redis.url : 'embedded';
      const configPath = join(dir.path, 'trawl.json');
      writeFileSync(configPath, JSON.stringify({ settings: { anonymousAccess: false, symbols: false, rateLimit: { requestsPerDay: 100, store } } }));

      const lines: string[] = [];
      const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => new Date() };
      const dd = ['--data-dir', dataDir];
      await usersCommand(['add', '--email', 'bot@example.com', ...dd], io);
      await keysCommand(['create', '--user', 'bot@example.com', ...dd], io);
      const key1 = lines.at(-1)!;
      await keysCommand(['create', '--user', 'bot@example.com', ...dd], io);
      const key2 = lines.at(-1)!;
      const token = newScopedToken();
      const s = openStore(dataDir);
      try {
        const user = (await s.getUserByEmail('bot@example.com'))!;
        const now = new Date();
        await s.createScopedToken(
          {
            userId: user.id,
            apiKeyId: (await s.listApiKeys(user.id))[0]!.id,
            hash: credentialHash(serverSecret(dataDir), token),
            repoIds: [(await s.listRepos())[0]!.repoId],
            expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
          },
          now.toISOString(),
        );
      } finally {
        await s.close();
      }

      const urls = await Promise.all(
        [0, 1].map(async () => {
          const d = await serve(['--config', configPath, '--data-dir', dataDir, '--log-level', 'silent']);
          daemons.push(d.child);
          return d.url;
        }),
      );
      const credentials: Array<Record<string, string>> = [
        { authorization: `Bearer ${key1}` },
        { 'x-service-api-key': key2 },
        { authorization: `Bearer ${token}` },
        { 'x-service-api-key': key1 },
      ];
      const results = (
        await Promise.all(credentials.map((headers, i) => client({ urls: i % 2 ? urls : [...urls].reverse(), headers, count: 50, inFlight: 5 })))
      ).flat();

      assert.equal(results.length, 200);
      const ok = results.filter((r) => r.status === 200);
      const limited = results.filter((r) => r.status === 429);
      assert.equal(ok.length, 100, `statuses: ${JSON.stringify(count(results.map((r) => r.status)))}`);
      assert.equal(limited.length, 100);
      // Each success saw its own place in the count: 99, 98, ..., 0, each once.
      assert.deepEqual(
        ok.map((r) => Number(r.remaining)).sort((a, b) => b - a),
        Array.from({ length: 100 }, (_, i) => 99 - i),
      );
      const reset = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) / 1000;
      for (const r of results) {
        assert.equal(r.limit, '100');
        assert.ok(Math.abs(Number(r.reset) - reset) <= 86400, 'the next 00:00 UTC (the test may straddle midnight)');
      }
      for (const r of limited) {
        assert.equal(r.errorCode, 'API_RATE_LIMIT_EXCEEDED');
        assert.equal(r.remaining, '0');
        assert.ok(Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 86400, `Retry-After ${r.retryAfter}`);
      }
    } finally {
      await Promise.all(daemons.map(stop));
      dir.cleanup();
    }
  });
}

after(async () => {
  if (!('skip' in redis)) await redis.stop();
});

function count<T>(xs: T[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[String(x)] = (out[String(x)] ?? 0) + 1;
  return out;
}

function client(plan: { urls: string[]; headers: Record<string, string>; count: number; inFlight: number }): Promise<RateClientResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLIENT, JSON.stringify(plan)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as RateClientResult[]) : reject(new Error(`client exited with ${code}: ${err}`))));
  });
}
