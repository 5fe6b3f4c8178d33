// A private Redis server for a test: daemon/runtime/private-redis.ts (`redis-server` on a
// free loopback port, without persistence), stopped by stop(). With $TRAWL_TEST_REDIS_URL
// set, that server is used instead and nothing is started.
//
// When no Redis can be started the tests that need it skip with a visible reason, unless
// $TRAWL_REQUIRE_REDIS=1 (set by .ci/run), where that is a failure: CI must run them.

import { startPrivateRedis } from '../../daemon/runtime/private-redis.ts';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** `port`: start on this one (a restart after stop()); otherwise a free one. */
export async function startTestRedis(port?: number): Promise<TestRedis | { skip: string }> {
  const given = process.env.TRAWL_TEST_REDIS_URL;
  if (given && port === undefined) return { url: given, port: Number(new URL(given).port || 6379), stop: async () => {} };
  let reason: string;
  try {
    const r = await startPrivateRedis(port);
    return { url: r.url, port: r.port, stop: r.stop };
  } catch (err) {
    reason = (err as Error).message;
  }
  const skip = `no Redis server could be started (${reason}); install Debian's redis-server (scripts/setup.sh does) or set TRAWL_TEST_REDIS_URL`;
  if (process.env.TRAWL_REQUIRE_REDIS === '1') throw new Error(`TRAWL_REQUIRE_REDIS=1: ${skip}`);
  process.stderr.write(`SKIPPED (Redis): ${skip}\n`);
  return { skip };
}
