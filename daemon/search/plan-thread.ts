// A planner thread's entry point (planner.ts starts it): plans the queries it is sent, one
// at a time, and answers each with the plan encoded as the search workers get it, or with
// the ServiceError that refuses the query.

import { parentPort } from 'node:worker_threads';
import { ServiceError } from '../errors.ts';
import { planQuery } from '../query/plan.ts';
import { pack } from './protocol.ts';
import type { PlanJob, PlanAnswer } from './planner.ts';

const port = parentPort!;
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
