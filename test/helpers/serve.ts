// `trawl serve` as a real process for tests: started on a free port with one search
// worker, without the caller's TRAWL_CONFIG / TRAWL_DATA_DIR, and resolved once it prints
// the address it listens on.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const TRAWL = join(import.meta.dirname, '..', '..', 'bin', 'trawl.js');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything it wrote to stdout so far (the JSON log lines). */
  stdout: () => string;
}

export function serve(args: string[], cwd?: string): Promise<ServeProcess> {
  const env = { ...process.env };
  delete env.TRAWL_CONFIG;
  delete env.TRAWL_DATA_DIR;
  const child = spawn(process.execPath, [TRAWL, 'serve', '--port', '0', '--workers', '1', ...args], { cwd, env });
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address within 60 s; stderr: ${err}`)), 60_000);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stdout: () => out });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`trawl serve exited with ${code}: ${err}`));
    });
  });
}

/** Its exit code once it has exited. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );
}

/** SIGTERM, then its exit. */
export function stop(child: ChildProcess): Promise<number | null> {
  const done = exited(child);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  return done;
}
