// A private Redis server: `redis-server` (Debian's package, which setup.sh installs) on a
// loopback port, without persistence, stopped by stop(). The tests start one per file
// (test/helpers/redis.ts adds their skip rules) and the benchmark's cluster phase one per
// cluster it measures (bench/README.md), so that neither touches a Redis someone runs.

import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './free-port.ts';

export interface PrivateRedis {
  url: string;
  port: number;
  /** The server's process (the benchmark accounts for its CPU time and stops it on Ctrl-C). */
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts redis-server on `port` (a restart after stop()), else on a free port. A free port
 * can be taken by someone else between finding and binding it, so a failed start is tried
 * again on a new one (three tries in all). Rejects with the last reason; its `code` is
 * ENOENT when redis-server is not installed.
 */
export async function startPrivateRedis(port?: number): Promise<PrivateRedis> {
  let last: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    port ??= await freePort();
    try {
      const child = await launch(port);
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        child,
        stop: () =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    } catch (err) {
      last = err as Error;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
      port = undefined;
    }
  }
  throw last!;
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
