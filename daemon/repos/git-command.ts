// Running git itself on a repository the daemon reads: the environment and options every
// such run takes, and a run whose standard output is collected whole.

import { spawnSmall } from '../runtime/spawner.ts';

/** git with the repository's own configuration, but no environment that would redirect it (GIT_DIR, GIT_INDEX_FILE, ...). */
export function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return env;
}

// safe.directory: the daemon reads mirrors it made and trees an operator named; git's
// ownership check (meant for work trees shared between users) would refuse the latter
// when they belong to someone else, which nodegit does not.
export const GIT_BASE_ARGS = ['-c', 'safe.directory=*', '-c', 'core.fsmonitor=false'];

/**
 * Runs `git -C gitDir args...` (through the spawner: runtime/spawner.ts) and resolves to its
 * whole standard output; rejects with git's first line of stderr when it fails, or when
 * the output passes `maxBytes` (the child is killed then).
 */
export function runGit(gitDir: string, args: string[], maxBytes: number): Promise<Buffer> {
  const child = spawnSmall('git', [...GIT_BASE_ARGS, '-C', gitDir, ...args], gitEnv());
  child.stdin.on('error', () => {});
  child.stdin.end();
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let bytes = 0;
    let over = false;
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      if (over) return;
      bytes += d.length;
      if (bytes > maxBytes) {
        over = true;
        child.kill('SIGKILL');
        return;
      }
      parts.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 4096) err += d.toString('utf8');
    });
    child.on('error', (e: Error) => reject(new Error(`git ${args[0]}: ${e.message}`)));
    child.on('close', (code: number | null, signal: string | null) => {
      if (over) reject(new Error(`git ${args[0]}: its output passed ${maxBytes} bytes`));
      else if (code === 0) resolve(Buffer.concat(parts, bytes));
      else reject(new Error(`git ${args[0]} failed (${code ?? signal}): ${err.trim().split('\n')[0] ?? ''}`));
    });
  });
}
