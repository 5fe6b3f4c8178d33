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
