// Runs the `trawl` command line as a child process, as an operator would (bin/trawl.js).

import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

export const TRAWL = join(resolve(import.meta.dirname, '../..'), 'bin', 'trawl.js');

export interface TrawlRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Spawn to exit. */
  ms: number;
}

export function runTrawl(args: string[], cwd: string): Promise<TrawlRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [TRAWL, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr, ms: performance.now() - started })));
}

export interface KilledRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stderr: string;
}

/**
 * Runs the command line to be killed (the fault tests): SIGKILL `kill` ms after the start
 * (if it still runs), or as soon as the condition holds (polled every 2 ms). The
 * environment's TRAWL_CONFIG and TRAWL_DATA_DIR are left out: the arguments say.
 */
export function runTrawlKilled(args: string[], kill?: number | (() => boolean)): Promise<KilledRun> {
  const env = { ...process.env };
  delete env.TRAWL_CONFIG;
  delete env.TRAWL_DATA_DIR;
  const started = performance.now();
  const child = spawn(process.execPath, [TRAWL, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer =
    kill === undefined
      ? undefined
      : typeof kill === 'number'
        ? setTimeout(() => child.kill('SIGKILL'), kill)
        : setInterval(() => kill() && child.kill('SIGKILL'), 2);
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clearInterval(timer);
      resolve({ code, signal, ms: performance.now() - started, stderr });
    }),
  );
}
