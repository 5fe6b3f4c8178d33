// A private Redis server for a test: `redis-server` (Debian's package, which setup.sh
// installs) on a free loopback port, without persistence, stopped by stop(). With
// $TRAWL_TEST_REDIS_URL set, that server is used instead and nothing is started.
//
// When no Redis can be started the tests that need it skip with a visible reason, unless
// $TRAWL_REQUIRE_REDIS=1 (set by .ci/run), where that is a failure: CI must run them.

import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './free-port.ts';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** `port`: start on this one (a restart after stop()); otherwise a free one. */
export async function startTestRedis(port?: number): Promise<TestRedis | { skip: string }> {
  const given = process.env.TRAWL_TEST_REDIS_URL;
  if (given && port === undefined) return { url: given, port: Number(new URL(given).port || 6379), stop: async () => {} };
  let reason = '';
  // A free port can be taken by someone else between finding and binding it: try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    port ??= await freePort();
    try {
      const child = await launch(port);
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: () =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    } catch (err) {
      reason = (err as Error).message;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
      port = undefined;
    }
  }
  const skip = `no Redis server could be started (${reason}); install Debian's redis-server (scripts/setup.sh does) or set TRAWL_TEST_REDIS_URL`;
  if (process.env.TRAWL_REQUIRE_REDIS === '1') throw new Error(`TRAWL_REQUIRE_REDIS=1: ${skip}`);
  process.stderr.write(`SKIPPED (Redis): ${skip}\n`);
  return { skip };
}

function launch(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'];
  return new Promise((resolve, reject) => {
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start within 10 s: ${out.trim()}`));
    }, 10_000);
    const poll = setInterval(async () => {
      if (await answers(port)) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve(child);
      }
    }, 50);
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('error', (err) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`redis-server exited with ${code}: ${out.trim().split('\n').at(-1) ?? ''}`));
    });
  });
}

/** Whether something on the port answers PING with PONG. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (b) => {
      got += b.toString();
      if (got.includes('\r\n')) {
        socket.destroy();
        resolve(got.startsWith('+PONG'));
      }
    });
    socket.on('error', () => resolve(false));
  });
}
