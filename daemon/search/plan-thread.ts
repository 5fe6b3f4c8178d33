// A planner thread's entry point (planner.ts starts it): plans the queries it is sent, one
// at a time, and answers each with the plan encoded as the search workers get it, or with
// the ServiceError that refuses the query.

import { parentPort } from 'node:worker_threads';
import { ServiceError } from '../errors.ts';
import { planQuery } from '../query/plan.ts';
import { lowerThisThreadsPriority } from '../runtime/thread-priority.ts';
import { pack } from './protocol.ts';
import type { PlanAnswer, PlanJob } from './planner.ts';

lowerThisThreadsPriority();

// Queries of each kind, planned once before the thread says it is ready: the first plan
// loads the parser's tables and the case-folding data, which the first caller's query
// should not wait for.
const WARM_UP = [
  { query: 'Warm_up_ÉTÉ file:\\.c$ sym:^main$ lang:go repo:x -branch:y', isRegexEnabled: false },
  { query: '(?i)[a-z]+_\\d{2}\\s*\\(|(foo|bar)baz[0-9]+\\b', isRegexEnabled: true },
];
for (const request of WARM_UP) planQuery(request);

const port = parentPort!;
port.postMessage({ ready: true } satisfies PlanAnswer);
port.on('message', (job: PlanJob) => {
  const t = process.hrtime.bigint();
  let answer: PlanAnswer;
  try {
    const bytes = pack(planQuery(job.request));
    answer = { id: job.id, bytes, planNs: Number(process.hrtime.bigint() - t) };
    port.postMessage(answer, [bytes.buffer]);
    return;
  } catch (err) {
    if (err instanceof ServiceError) answer = { id: job.id, refused: { errorCode: err.errorCode, message: err.message } };
    else answer = { id: job.id, failed: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer);
});
