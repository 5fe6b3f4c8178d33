// The streaming figures' client, in a process of its own: the HTTP phase starts it once the
// daemon is warm (phase-http.ts). It warms the stream path up, then times the runs, each
// after an untimed collection of its own heap, and prints them as one JSON array on stdout
// (a run's line goes to stderr as it ends, for the bench's log). Its own process because
// the bench's holds autocannon and the other phases' state: with autocannon loaded, the
// same fetch client spent about twice the CPU per stream (V8 collected its old space many
// times a stream instead of once every few streams), CPU the machine's cores take from
// the daemon being measured. A user's client holds neither.
//
//   node bench/suite/stream-child.ts --url URL --pid PID --body JSON --warmup-runs N --warmup-ms MS --runs N
import { parseArgs } from 'node:util';
import { collectHeap } from '../../daemon/runtime/collect-heap.ts';
import { streamOnce, type StreamRun, type StreamTarget } from './stream.ts';
import { warmUp } from './warm-up.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    pid: { type: 'string' },
    body: { type: 'string' },
    'warmup-runs': { type: 'string' },
    'warmup-ms': { type: 'string' },
    runs: { type: 'string' },
  },
});
const count = (name: keyof typeof values): number => {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`stream-child: --${name} must be a whole number, not ${JSON.stringify(values[name])}`);
  return n;
};
if (!values.url || !values.body) throw new Error('stream-child: --url and --body are required');
const target: StreamTarget = { url: values.url, pid: values.pid === undefined ? undefined : count('pid') };
const body = values.body;

/** One stream, which must be whole (a final message, then [DONE]). */
async function checked(run: number): Promise<StreamRun> {
  const r = await streamOnce(target, body, run);
  if (r.status !== 200 || r.error || !r.final || !r.endsWithDone) {
    throw new Error(
      `POST /api/stream_search ${body}: status ${r.status}${r.error ? `, error ${r.error}` : ''}${r.final ? '' : ', no final message'}${r.endsWithDone ? '' : ', no [DONE]'}`,
    );
  }
  return r;
}

await warmUp({ runs: count('warmup-runs'), ms: count('warmup-ms') }, () => checked(0));
const runs: StreamRun[] = [];
for (let i = 1; i <= count('runs'); i++) {
  // The last stream's garbage (megabytes for a common literal) is collected first, untimed: its
  // collection inside the next run's first milliseconds was most of the first byte's time.
  collectHeap();
  runs.push(await checked(i));
}
process.stdout.write(`${JSON.stringify(runs)}\n`);
