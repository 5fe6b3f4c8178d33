// The planner's threads: they give the plans (and refusals) planning in this thread gives,
// keep them, share a thread fairly between callers, and a plan that overruns its time has
// its thread replaced and its query refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../daemon/errors.ts';
import { Planner } from '../../daemon/search/planner.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';

/** A query whose prefilter analysis takes the analysis budget (tens of ms): thousands of alternatives. */
const costly = (k: number) => ({
  query: Array.from({ length: 1800 }, (_, i) => `w${i}x${k}`).join('|'),
  isRegexEnabled: true,
  isCaseSensitivityEnabled: false,
});

test('the threads plan as this thread does, refuse as it does, and keep what they made', async () => {
  const planner = new Planner({ threads: 2 });
  try {
    for (const req of [
      { query: 'EXPORT_SYMBOL_GPL file:\\.c$' },
      { query: '(foo|bar)baz[0-9]+ -lang:go', isRegexEnabled: true },
      { query: 'Foo case:auto or sym:^main$' },
    ]) {
      const there = await planner.plan(req, 'a');
      const here = planSearch({ ...req, query: `${req.query} ` });
      assert.deepEqual(there.plan, here.plan, req.query);
      assert.deepEqual(Buffer.from(there.bytes), Buffer.from(here.bytes));
      const again = await planner.plan(req, 'b');
      assert.equal(again.planId, there.planId, 'the same query keeps its plan');
    }
    for (const query of ['foo(', '.{0,1000}'.repeat(3), Array.from({ length: 70 }, (_, i) => `t${i}`).join(' or ')]) {
      const req = { query, isRegexEnabled: true };
      const want = (() => {
        try {
          planSearch({ ...req, query: `${query} ` });
        } catch (err) {
          return err as ServiceError;
        }
        throw new Error(`${query} was not refused`);
      })();
      await assert.rejects(
        planner.plan(req, 'a'),
        (err: unknown) =>
          err instanceof ServiceError &&
          err.errorCode === 'FAILED_TO_PARSE_QUERY' &&
          err.message.replace(/column \d+/g, '') === want.message.replace(/column \d+/g, ''),
      );
    }
  } finally {
    await planner.close();
  }
});

test("a caller's costly queries are planned one at a time; another caller's query takes the free thread", async () => {
  const planner = new Planner({ threads: 2 });
  planner.warm();
  try {
    await planner.plan({ query: 'warm up both threads' }, 'x');
    const done: string[] = [];
    const a = [0, 1, 2].map((k) => planner.plan(costly(k), 'a').then(() => done.push(`a${k}`)));
    const b = planner.plan({ query: 'kmalloc' }, 'b').then(() => done.push('b'));
    await Promise.all([...a, b]);
    assert.ok(done.indexOf('b') < done.indexOf('a1'), `b waited behind a's queries: ${done.join(' ')}`);
    assert.deepEqual(
      done.filter((d) => d !== 'b'),
      ['a0', 'a1', 'a2'],
      "a's own queries in order",
    );
  } finally {
    await planner.close();
  }
});

test('a plan past its time limit is refused, and the planner goes on with a new thread', async () => {
  const planner = new Planner({ threads: 1, timeoutMs: 5 });
  try {
    await assert.rejects(
      planner.plan(costly(9), 'a'),
      (err: unknown) => err instanceof ServiceError && err.errorCode === 'FAILED_TO_PARSE_QUERY' && /took more than 5 ms to plan/.test(err.message),
    );
    // Refused again at once, from the cache.
    await assert.rejects(planner.plan(costly(9), 'a'), /took more than 5 ms/);
  } finally {
    await planner.close();
  }
  const patient = new Planner({ threads: 1, timeoutMs: 30_000 });
  try {
    assert.equal((await patient.plan({ query: 'still planned' }, 'a')).plan.terms, 2);
  } finally {
    await patient.close();
  }
});

test('a query whose caller left while it waited is dropped', async () => {
  const planner = new Planner({ threads: 1 });
  try {
    const first = planner.plan(costly(20), 'a');
    const gone = new AbortController();
    const waiting = planner.plan(costly(21), 'a', gone.signal);
    gone.abort();
    await assert.rejects(waiting, /went away/);
    await first;
  } finally {
    await planner.close();
  }
});
