// Planning a search's query, with the plans made recently kept: a query asked again is
// neither parsed nor encoded again, and keeps its planId, by which the workers keep its
// decoded plan and matchers.

import { planQuery, type Plan } from '../query/plan.ts';
import { pack } from './protocol.ts';
import type { SearchRequest } from './types.ts';

/** A query planned ahead (planSearch): a caller checks the query before it waits for a turn, and the search does not plan it again. */
export interface PlannedSearch {
  plan: Plan;
  /** How long planning took (stats.matchTreeConstruction; counted in stats.duration). */
  planNs: number;
  /** The plan as the workers get it (msgpack) and its id: they keep a plan they know, with its matchers, by id. */
  planId: number;
  bytes: Uint8Array;
}

let nextPlanId = 1;

/**
 * Plans made recently, by the request fields a plan is made from (planQuery reads only
 * these): a query asked again is neither parsed nor encoded again, and gets the same planId,
 * so the workers keep its decoded plan and matchers instead of building them again
 * (measured under 16 connections of one rare literal: ~0.05 ms per search and worker, and
 * the planning and encoding here). Plans are not changed once made.
 */
const PLAN_CACHE_SIZE = 256;
const plans = new Map<string, { plan: Plan; planId: number; bytes: Uint8Array }>();

/** Plans a search's query: a FAILED_TO_PARSE_QUERY ServiceError when it is not valid. */
export function planSearch(req: Required<SearchRequest>): PlannedSearch {
  const t = process.hrtime.bigint();
  const key = `${req.isRegexEnabled ? 'r' : 'l'}${req.isCaseSensitivityEnabled ? 'c' : 'i'}${req.query}`;
  let known = plans.get(key);
  if (known) {
    plans.delete(key);
  } else {
    const plan = planQuery(req);
    known = { plan, planId: nextPlanId++, bytes: pack(plan) };
  }
  plans.set(key, known);
  if (plans.size > PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value!);
  return { ...known, planNs: Number(process.hrtime.bigint() - t) };
}


/**
 * Plans that came from another node (a cluster's coordinator, cluster/peer-routes.ts), by
 * their bytes: each gets an id from this node's own sequence. A coordinator numbers its
 * plans in its own process, so its ids mean nothing here: taken as they are, two nodes'
 * different queries would share an id and a worker would search one with the other's
 * matchers.
 */
const foreign = new Map<string, number>();

/** This node's planId for a plan encoded elsewhere: the same bytes get the same id. */
export function foreignPlanId(bytes: Uint8Array): number {
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let id = foreign.get(key);
  if (id === undefined) id = nextPlanId++;
  else foreign.delete(key);
  foreign.set(key, id);
  if (foreign.size > PLAN_CACHE_SIZE) foreign.delete(foreign.keys().next().value!);
  return id;
}
