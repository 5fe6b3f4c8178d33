// Plan ids: a worker keeps a decoded plan by its id, so an id must stand for one plan in
// this process, including plans that other nodes of a cluster encoded with their own ids.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { derivedPlan, foreignPlanId, planSearch } from '../../daemon/search/plan-cache.ts';
import { packr } from '../../daemon/search/protocol.ts';
import { validateSearchRequest } from '../../daemon/search/request.ts';

const planned = (query: string) => planSearch(validateSearchRequest({ query, matches: 10 }));

test('a query asked again keeps its plan id; another query gets another', () => {
  const a = planned('alpha_plan');
  assert.equal(planned('alpha_plan').planId, a.planId);
  assert.notEqual(planned('beta_plan').planId, a.planId);
});

test('a plan from another node gets an id of this node: stable per bytes, never one of its own plans', () => {
  const mine = planned('gamma_plan');
  // Another node's encoding of other queries (its own counter may have given them any id, mine.planId included).
  const theirs = [planned('delta_plan').bytes, planned('epsilon_plan').bytes].map((b) => Uint8Array.from(b));
  const ids = theirs.map(foreignPlanId);
  assert.equal(new Set([...ids, mine.planId]).size, 3);
  assert.deepEqual(
    theirs.map((b) => foreignPlanId(Uint8Array.from(b))),
    ids,
    'the same bytes, the same id',
  );
  const inBigger = new Uint8Array(theirs[0]!.length + 8);
  inBigger.set(theirs[0]!, 4);
  assert.equal(foreignPlanId(inBigger.subarray(4, 4 + theirs[0]!.length)), ids[0], 'only the view counts, not its buffer');
});

test('a plan made from another: the same rewrite of the same plan keeps its id and is made once; its bytes are the plan', () => {
  const from = planned('zeta_plan').plan;
  let made = 0;
  const make = (glob: string) => () => {
    made++;
    return { ...from, branches: [glob] };
  };
  const a = derivedPlan(from, 'at c1', make('c1'));
  assert.equal(derivedPlan(from, 'at c1', make('c1')).planId, a.planId);
  assert.equal(made, 1, 'made once');
  const b = derivedPlan(from, 'at c2', make('c2'));
  assert.notEqual(b.planId, a.planId);
  assert.notEqual(derivedPlan(planned('eta_plan').plan, 'at c1', make('c1')).planId, a.planId, 'another plan, another id');
  assert.deepEqual(packr.unpack(b.bytes), b.plan);
  assert.equal(b.bytes, b.bytes, 'encoded once');
});
