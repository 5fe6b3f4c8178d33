// A separate process that takes a lock file, for the lock tests:
//   node --import tsx test/helpers/lock-child.ts LOCK LOG HOLD_MS
// Appends "in PID" to LOG once it holds the lock, holds it HOLD_MS (forever when 0, until
// killed), appends "out PID" and releases it. Prints "held" on stdout once it holds it.
import { appendFileSync } from 'node:fs';
import { acquireLock } from '../../daemon/runtime/lock-file.ts';

const [lock, log, hold] = process.argv.slice(2);
const release = await acquireLock(lock!, 'the test lock', 60_000);
appendFileSync(log!, `in ${process.pid}\n`);
process.stdout.write('held\n');
if (Number(hold) === 0) setInterval(() => {}, 1000);
else {
  await new Promise((r) => setTimeout(r, Number(hold)));
  appendFileSync(log!, `out ${process.pid}\n`);
  release();
}
