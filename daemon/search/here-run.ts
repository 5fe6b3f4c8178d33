// A search of a few named documents (SearchOptions.docs) run in the thread that asks, as a
// run the merge takes like the pool's (merge.ts, pool.ts PoolRun). A caller who names a
// handful of documents (a history's spans: history/history-spans.ts) would otherwise pay
// for a round trip to a worker thread that costs several times the search itself: the task
// and its plan packed and decoded, a sleeping thread woken, the reply packed and copied
// back. Each shard is searched whole by the same searchShard, its hits become the same
// files (shard-files.ts); a blocking search's are left unshaped: its sink shapes those it
// keeps, here too (searcher.ts reshape), with the documents' bytes still at hand; a
// stream's are shaped here, as a worker shapes them. The merge applies the cut
// and the limit as it does to a pool's replies, which a whole shard's reply satisfies.

import type { Shard } from '../index/shard-reader.ts';
import { planTerms, type Plan } from '../query/terms.ts';
import { Matcher } from './matcher.ts';
import { shapeInto } from './file-json.ts';
import type { TaskParams } from './merge.ts';
import type { PoolRun } from './pool.ts';
import type { ShardRef, ShardReply } from './protocol.ts';
import { failedReply, filesOf, infosOf, reposOf, searchedMembers } from './shard-files.ts';
import { searchShard } from './shard-search.ts';

/**
 * A search naming at most this many documents in all runs in the thread that asks: about
 * what a worker's round trip costs in examining and shaping (a document read and matched
 * whole), so that the thread serving requests is never held much longer than the trip.
 */
export const HERE_MAX_DOCS = 16;

/** A shard of the run: its catalog entry, its members searched (null: all), its documents, and its mapping in this thread. */
export interface HereShard {
  ref: ShardRef;
  only: readonly number[] | null;
  docs: readonly number[];
  open: () => Shard;
}

/**
 * Searches `shards` for `plan` now, in this thread: a run whose replies are settled. A shard
 * that fails its checks answers as failed (corrupt), as from a worker, and `onDamage(i)` is
 * told so that its mapping is dropped. `indexed`: the plan's matchers for an indexed search,
 * when the caller has made them already (made here otherwise).
 */
export function runHere(task: TaskParams, plan: Plan, shards: readonly HereShard[], onDamage: (i: number) => void, indexed?: Matcher[]): PoolRun {
  const matchers = task.brute ? planTerms(plan).map((t) => new Matcher(t, 'reference')) : (indexed ?? planTerms(plan).map((t) => new Matcher(t, 'indexed')));
  const replies = shards.map((s, i): Promise<ShardReply> => {
    try {
      const shard = s.open();
      const members = searchedMembers(s.ref, s.only);
      const result = searchShard(shard, {
        plan,
        matchers,
        limit: task.limit,
        useIndex: !task.brute,
        members: members.search,
        docs: Uint32Array.from(s.docs),
      });
      const repos = reposOf(members.refs, shard, task.shape.baseUrl);
      const files = filesOf(result.hits, shard, repos, i);
      // A stream sends every file it takes as it comes (its sink shapes only the one it
      // cuts): all are shaped now, as a worker shapes a stream's.
      if (!task.batch) for (const f of files) shapeInto(f, shard, repos(f.hit.member), task.shape);
      result.hits = [];
      result.termDocs = [];
      return Promise.resolve({ status: 'done', result, files, repositories: infosOf(files, repos), queuedNs: 0 });
    } catch (err) {
      const reply = failedReply(s.ref.shardPath, err, 0);
      if (reply.corrupt) onDamage(i);
      return Promise.resolve(reply);
    }
  });
  return { replies, grant: () => {}, stop: () => {}, definitionsOnly: () => {} };
}
