// Plans of search queries, with the ones made recently kept: a query asked again is
// neither parsed nor encoded again, and keeps its planId, by which the workers keep its
// decoded plan and matchers. A query refused is remembered too, so that the same bad
// query sent again costs a lookup. The plans themselves are made on the planner's threads
// (planner.ts); planSearch makes one in this thread, for a command on a small index and
// for tests.

import { ServiceError } from '../errors.ts';
import { planQuery, type Plan } from '../query/plan.ts';
import { pack } from './protocol.ts';
import type { SearchRequest } from './types.ts';

/** A query planned ahead (planSearch): a caller checks the query before it waits for a turn, and the search does not plan it again. */
export interface PlannedSearch {
  plan: Plan;
  /** How long planning took (stats.matchTreeConstruction; counted in stats.duration). */
  planNs: number;
  /**
   * The plan as the workers get it (msgpack) and its id: they keep a plan they know, with
   * its matchers, by id. The bytes are made when first read (a getter), once per plan: a
   * search run in the thread that asks (here-run.ts) sends no plan anywhere.
   */
  planId: number;
  readonly bytes: Uint8Array;
}

/** The request fields a plan is made from (planQuery reads only these). */
export type PlanRequest = Pick<SearchRequest, 'query' | 'isRegexEnabled' | 'isCaseSensitivityEnabled'>;

/** What the cache keeps of a query: its plan (and its bytes once made: plannedFrom), or why it was refused. */
export type PlanOutcome = { plan: Plan; planId: number; bytes?: Uint8Array } | { refused: ServiceError };

let nextPlanId = 1;

/**
 * Plans made recently, by their key (planKey): a query asked again gets the same planId, so
 * the workers keep its decoded plan and matchers instead of building them again. Plans are
 * not changed once made.
 */
const PLAN_CACHE_SIZE = 256;
const plans = new Map<string, PlanOutcome>();

/** The cache's key of a request: its mode flags and its query. */
export function planKey(req: PlanRequest): string {
  return `${req.isRegexEnabled ? 'r' : 'l'}${req.isCaseSensitivityEnabled ? 'c' : 'i'}${req.query}`;
}

/** The outcome kept for `key`, made the most recently used; undefined when none is kept. */
export function cachedPlan(key: string): PlanOutcome | undefined {
  const known = plans.get(key);
  if (known) {
    plans.delete(key);
    plans.set(key, known);
  }
  return known;
}

/** Keeps the outcome of planning `key`: a plan (with its bytes when a planner thread made them) gets its planId here. */
export function keepPlan(key: string, made: { plan: Plan; bytes?: Uint8Array } | { refused: ServiceError }): PlanOutcome {
  const outcome: PlanOutcome = 'refused' in made ? made : { plan: made.plan, bytes: made.bytes, planId: nextPlanId++ };
  plans.delete(key);
  plans.set(key, outcome);
  if (plans.size > PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value!);
  return outcome;
}

/** The planned search of an outcome, or its refusal thrown. */
export function plannedFrom(outcome: PlanOutcome, planNs: number): PlannedSearch {
  if ('refused' in outcome) throw outcome.refused;
  return {
    plan: outcome.plan,
    planId: outcome.planId,
    planNs,
    get bytes() {
      outcome.bytes ??= pack(outcome.plan);
      return outcome.bytes;
    },
  };
}

/**
 * Plans a query in this thread (its work is bounded, but not small: the daemon plans on the
 * planner's threads); a FAILED_TO_PARSE_QUERY ServiceError when it is not valid.
 */
export function planSearch(req: PlanRequest): PlannedSearch {
  const t = process.hrtime.bigint();
  const key = planKey(req);
  let outcome = cachedPlan(key);
  if (!outcome) {
    try {
      outcome = keepPlan(key, { plan: planQuery(req) });
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      outcome = keepPlan(key, { refused: err });
    }
  }
  return plannedFrom(outcome, Number(process.hrtime.bigint() - t));
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

/**
 * Plans made from others, per plan made from (a planned query's plan, the same object while
 * the cache keeps it), by what was made of it: the same rewrite keeps its planId.
 */
const derived = new WeakMap<Plan, Map<string, PlanOutcome>>();
/** Rewrites kept per plan (the commits of a few revisions asked again, say). */
const DERIVED_PER_PLAN = 16;

/**
 * A plan made from `from` (history/history-search.ts rewrites a query's revisions into the
 * commits they name; history/history-spans.ts narrows a query to the histories): `make()`
 * the first time `variant` (a key naming everything the rewrite depends on besides `from`)
 * is asked of `from`, kept like a planned query so that the same rewrite keeps its planId.
 */
export function derivedPlan(from: Plan, variant: string, make: () => Plan): PlannedSearch {
  let made = derived.get(from);
  if (made === undefined) derived.set(from, (made = new Map()));
  let outcome = made.get(variant);
  if (outcome === undefined) {
    outcome = { plan: make(), planId: nextPlanId++ };
    made.set(variant, outcome);
    if (made.size > DERIVED_PER_PLAN) made.delete(made.keys().next().value!);
  }
  return plannedFrom(outcome, 0);
}

/**
 * Refuses a plan only the history service answers (history/history-search.ts): `type:diff`
 * and `type:commit` search the diff and commit records of indexed histories, `history:yes`
 * the history indexes. A searcher of index shards (and a cluster's fan-out, which searches
 * no histories) would otherwise answer it with files, as if none of them were given.
 */
export function refuseHistoryPlan(plan: Plan): void {
  const what = plan.type === 'diff' ? 'type:diff' : plan.type === 'commit' ? 'type:commit' : plan.history ? 'history:yes' : undefined;
  if (what !== undefined)
    throw new ServiceError('FAILED_TO_PARSE_QUERY', `${what} searches the indexed histories, and this search reads none (a cluster searches files only)`);
}
