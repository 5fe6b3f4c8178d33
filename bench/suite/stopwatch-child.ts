// Times one command from a small process: `node stopwatch-child.js COMMAND ARGS...` runs
// it to completion (stdio ignored but stderr kept for a failure) and prints
// {"seconds": S, "status": N, "stderr": "..."}. The bench's own process is large (hundreds
// of MB by its later phases), and forking it costs a spawn tens of milliseconds more than
// a shell's fork does, a large share of a whole-process figure, which must not carry it.

import { spawnSync } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) throw new Error('usage: stopwatch-child.ts COMMAND [ARGS...]');
const start = process.hrtime.bigint();
const r = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
process.stdout.write(`${JSON.stringify({ seconds, status: r.error ? String(r.error) : r.status, stderr: (r.stderr ?? '').slice(-2000) })}\n`);
