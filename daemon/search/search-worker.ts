// Search worker (search-thread.ts starts it in a thread of its own): claims the shards of
// each search it is given (protocol.ts), evaluates them one at a time and shapes each
// shard's hits into finished file results (file-json.ts) while the documents are at hand,
// posting each shard's reply as soon as it is done (a stream) or a batch of them (a
// blocking search). Keeps the shards it has opened mapped, and the matchers of the plans it
// searched last, across shards and searches.
//
// Sharing the worker between callers: a search runs until it has nothing left to claim,
// unless another search reaches this worker meanwhile (the pool's attention counter,
// protocol.ts). Then, after at least MIN_SLICE_MS of work, the running shard is suspended
// before its next document (shard-search.ts searchShardSteps), the worker takes its
// messages, and it goes on with the search whose caller has had the least of its time
// while it had searches here (first come, first served within one caller). A caller whose
// searches are costly thus shares each worker with everybody else's, instead of holding it
// until they end; a suspended shard resumes where it stopped, so the answers are the same.

import type { MessagePort } from 'node:worker_threads';
import { Shard } from '../index/shard-reader.ts';
import { Matcher } from './matcher.ts';
import { planTerms, type Plan } from '../query/terms.ts';
import {
  CONTROL_CLAIMS,
  CONTROL_DEFS_ONLY,
  CONTROL_FOUND,
  CONTROL_GRANTED,
  CONTROL_LOADED,
  CONTROL_NEXT,
  loadedKiB,
  packr,
  pastCut,
  shardKey,
  SPECULATE_WHOLE_DOCS,
  type FromWorker,
  type MemberRef,
  type PartialReply,
  type SearchTask,
  type CatalogItem,
  type ShardRef,
  type ShardReply,
  type ToWorker,
} from './protocol.ts';
import { searchShardSteps, type PartialHits, type ShardSearchResult } from './shard-search.ts';
import type { SearchMember } from './branch-classes.ts';
import { keepChunks, messageSent, shapeForMessage, type ShapedFile } from './file-json.ts';
import { failedReply, filesOf, infosOf, reposOf, searchedMembers, type RepoOf } from './shard-files.ts';
import { compareRanked } from './rank.ts';
import { dropSpares, packMessage, recycle } from './file-codec.ts';
import { collectHeap } from '../runtime/collect-heap.ts';

// Set once by serveSearches: one worker per module instance (a thread, or the thread of an
// in-thread pool).
let port: MessagePort;
let workerId = 0;
const shards = new Map<string, Shard>();
/** The shards of each index version the pool told of (protocol.ts, 'catalog'), by id. */
const catalogs = new Map<number, ShardRef[]>();
/** The shared checks of shard and symbols files, by file (protocol.ts, 'verified'). */
const verified = new Map<string, SharedArrayBuffer>();
const NONE: number[] = [];

/** A shard being searched, suspended or about to resume (searchShardSteps). */
interface Running {
  i: number;
  claimedPastCut: boolean;
  steps: Generator<undefined, ShardSearchResult, undefined>;
  shard: Shard;
  repos: RepoOf;
  queuedNs: number;
}

/** A search this worker works on, or may be asked to resume (it left it for lack of a grant). */
interface WorkerSearch {
  run: number;
  task: SearchTask;
  control: Int32Array;
  flag: Int32Array;
  sentAt: number;
  /** Arrival order on this worker: first come, first served within a caller. */
  seq: number;
  /** Its shard under way, when another search took the worker before it was done. */
  running?: Running;
  /** A blocking search's shards done here, posted together once it can claim no more. */
  shardsDone: number[];
  /** Their replies, in the same order. */
  answered: HeldReply[];
}
/** The searches this worker was given and has not forgotten, by run. */
const searches = new Map<number, WorkerSearch>();
let nextSeq = 0;

/** Milliseconds of this worker's time each caller with searches here has had (while it has them). */
const served = new Map<string, number>();

/** The pool's attention counter for this worker (protocol.ts). */
let attention: Int32Array;

/**
 * The least time a search keeps the worker once another is waiting: switching costs a turn
 * of the event loop and the caches' contents, and a search that arrives waits at most this
 * long (plus one term of one document) before it runs.
 */
const MIN_SLICE_MS = 2;

/** The attention count and the time when the search now running took the worker. */
let sliceSeen = 0;
let sliceStarted = 0;

/** Whether another search may be waiting for the worker and the one running has had its slice. */
function shouldYield(): boolean {
  return Atomics.load(attention, 0) !== sliceSeen && performance.now() - sliceStarted >= MIN_SLICE_MS;
}

/** Plans decoded and their matchers (RE2 objects) built, by plan key, the most recently used last. */
const PLANS_KEPT = 8;
const plans = new Map<string, { plan: Plan; matchers: Matcher[] }>();

function shardAt(ref: ShardRef): Shard {
  const path = ref.shardPath;
  const key = shardKey(path, ref.membership, ref.symbols);
  let shard = shards.get(key);
  if (!shard) {
    shard = Shard.open(path, {
      membership: ref.membership,
      symbols: ref.symbols,
      verified: verified.get(path),
      symbolsVerified: ref.symbols === undefined ? undefined : verified.get(ref.symbols),
    });
    shards.set(key, shard);
  }
  return shard;
}

/** Whether the shards answered so far are past the search's cut (protocol.ts). */
function cutPassed(s: WorkerSearch): boolean {
  return pastCut(s.task.cut, Atomics.load(s.control, CONTROL_FOUND), Atomics.load(s.control, CONTROL_LOADED));
}

/**
 * Claims the next granted shard: its index, or -1 when none is left to claim now, and
 * whether it is past the cut (then, for a task with definitionsPastCut, searched for its
 * definitions only). A shard claimed once the finished shards are past the cut lies past
 * the searcher's cut (protocol.ts, FOUND): this worker may decide so for it alone. The
 * shards already running are told only by the searcher (DEFS_ONLY), which sets it once it
 * has every shard up to its cut in hand.
 */
function claim(s: WorkerSearch): { shard: number; pastCut: boolean } | undefined {
  for (;;) {
    const next = Atomics.load(s.control, CONTROL_NEXT);
    if (next >= Atomics.load(s.control, CONTROL_GRANTED) || next >= s.task.shards.length) return undefined;
    const past = cutPassed(s);
    if (past && !s.task.definitionsPastCut) return undefined;
    if (Atomics.compareExchange(s.control, CONTROL_NEXT, next, next + 1) === next) {
      Atomics.store(s.control, CONTROL_CLAIMS + next, workerId);
      return { shard: next, pastCut: past };
    }
  }
}

/** A shard's reply while its worker still holds it, with what shaping its files needs. */
interface HeldReply {
  reply: ShardReply;
  shard?: Shard;
  repos?: RepoOf;
}

/**
 * When a stream's shard hands its hits over early (shard-search.ts, PartialHits): its
 * first hit at once, so that a stream's first results wait for one document rather than
 * for a whole shard (for a common identifier, several times sooner); then every
 * PARTIAL_MS or PARTIAL_MAX_FILES files, whichever comes
 * first, so that the main thread writes while the shard runs. Each is a message of its
 * own: a few dozen per stream.
 */
const PARTIAL_MS = 25;
const PARTIAL_MAX_FILES = 400;

/** Hands a stream's hits over as they are found: shaped and posted to the searcher (PartialReply). */
function partialSender(run: number, i: number, shard: Shard, repos: RepoOf, task: SearchTask): PartialHits {
  let last = -1;
  return {
    due(count) {
      return last < 0 || count >= PARTIAL_MAX_FILES || performance.now() - last >= PARTIAL_MS;
    },
    send(hits) {
      last = performance.now();
      const files = filesOf(hits, shard, repos, i);
      for (const f of files) {
        shapeForMessage(f, shard, repos(f.hit.member), task.shape);
        f.hit.lines = undefined;
        f.hit.chunks = undefined;
      }
      const body = packMessage({ files: NO_FILES, repositories: infosOf(files, repos) } satisfies PartialReply, [files], true);
      messageSent();
      port.postMessage({ run, shards: [i], body, partial: true } satisfies FromWorker, [body.buffer]);
    },
  };
}

/** The plan of a task with its matchers, decoded and built once per plan while it is searched. */
function planOf(task: SearchTask): { plan: Plan; matchers: Matcher[] } {
  const key = `${task.brute ? 'b' : 'i'}:${task.planId}`;
  let kept = plans.get(key);
  if (kept) plans.delete(key);
  else {
    const plan = packr.unpack(task.plan) as Plan;
    kept = { plan, matchers: planTerms(plan).map((t) => new Matcher(t, task.brute ? 'reference' : 'indexed')) };
  }
  plans.set(key, kept);
  if (plans.size > PLANS_KEPT) plans.delete(plans.keys().next().value!);
  return kept;
}

/** The catalog received last, kept after it is dropped: the next one is sent as changes to it. */
let last: { id: number; refs: ShardRef[] } | undefined;

/** A catalog message's shards: the unchanged ones are the very objects of the base, so what was worked out from them (allMembers, the shards' branch classes) still holds. */
function catalogOf(msg: Extract<ToWorker, { kind: 'catalog' }>): ShardRef[] {
  if (msg.base === undefined) return packr.unpack(msg.body) as ShardRef[];
  if (last?.id !== msg.base) throw new Error(`catalog ${msg.id} is sent as changes to catalog ${msg.base}, which this worker does not hold`);
  const base = last.refs;
  return (packr.unpack(msg.body) as CatalogItem[]).map((x) => (typeof x === 'number' ? base[x]! : x));
}

/** The catalog entry of shard `i` of a search. */
function refOf(task: SearchTask, i: number): ShardRef {
  const catalog = catalogs.get(task.catalog);
  if (!catalog) throw new Error(`search names catalog ${task.catalog}, which this worker was not given`);
  return catalog[task.shards[i]!]!;
}

/** The members of a shard a search searches: the catalog's (those that serve), or the caller's share of them. */
function membersOf(ref: ShardRef, only: number[] | null | undefined): { refs: MemberRef[]; search: SearchMember[] } {
  if (only) return searchedMembers(ref, only);
  // The same lists for every search of the catalog: branch-classes.ts keeps what it works
  // out from them (a compound shard's grouping of its members) while they stay the same.
  let all = allMembers.get(ref);
  if (!all) allMembers.set(ref, (all = searchedMembers(ref, null)));
  return all;
}

const allMembers = new WeakMap<ShardRef, { refs: MemberRef[]; search: SearchMember[] }>();

/** Starts searching shard `i` of a search: its steps, or its failure's answer. */
function startShard(s: WorkerSearch, i: number, claimedPastCut: boolean): Running | HeldReply {
  const task = s.task;
  const queuedNs = Math.max(0, Math.round((performance.timeOrigin + performance.now() - s.sentAt) * 1e6));
  let ref: ShardRef | undefined;
  try {
    ref = refOf(task, i);
    const { plan, matchers } = planOf(task);
    const shard = shardAt(ref);
    const members = membersOf(ref, task.only?.[i]);
    const repos = reposOf(members.refs, shard, task.shape.baseUrl);
    // (Every key given, undefined where it does not apply: one object shape for every shard.)
    const steps = searchShardSteps(shard, {
      plan,
      matchers,
      limit: task.limit,
      isCancelled: () => Atomics.load(s.flag, 0) !== 0,
      useIndex: !task.brute,
      members: members.search,
      definitionsOnly: () => claimedPastCut || Atomics.load(s.control, CONTROL_DEFS_ONLY) !== 0,
      locate: task.batch ? undefined : { contextLines: task.shape.contextLines, keep: keepChunks },
      partial: task.batch ? undefined : partialSender(s.run, i, shard, repos, task),
      speculate: i >= task.speculateFrom ? SPECULATE_WHOLE_DOCS : undefined,
      shouldYield,
      docs: task.docs === undefined ? undefined : Uint32Array.from(task.docs[i]!),
    });
    return { i, claimedPastCut, steps, shard, repos, queuedNs };
  } catch (err) {
    return { reply: failed(ref, err, queuedNs) };
  }
}

/** Runs a shard on until it is done (its answer) or suspended (undefined: `shouldYield` said so). */
function stepShard(s: WorkerSearch, r: Running): HeldReply | undefined {
  const task = s.task;
  let answered: HeldReply;
  try {
    const step = r.steps.next();
    if (!step.done) return undefined;
    const result = step.value;
    // A shard claimed past the cut is past the searcher's cut too (protocol.ts): of its
    // hits the searcher keeps the definitions only.
    const files = filesOf(r.claimedPastCut ? result.hits.filter((hit) => hit.definition) : result.hits, r.shard, r.repos, r.i);
    result.hits = [];
    result.termDocs = NONE;
    // A stream sends every file it takes: all are shaped now. A blocking search's are
    // shaped once the worker's batch is complete (finish()).
    if (!task.batch) for (const f of files) shapeForMessage(f, r.shard, r.repos(f.hit.member), task.shape);
    answered = { reply: { status: 'done', result, files, repositories: infosOf(files, r.repos), queuedNs: r.queuedNs }, shard: r.shard, repos: r.repos };
  } catch (err) {
    answered = { reply: failed(refOf(task, r.i), err, r.queuedNs) };
  }
  const reply = answered.reply;
  // (Capped: the counts only have to pass the cut, and must not wrap around.)
  if (reply.status === 'done') {
    Atomics.add(s.control, CONTROL_FOUND, Math.min(reply.result.found, 1 << 24));
    Atomics.add(s.control, CONTROL_LOADED, Math.min(loadedKiB(reply.result.counters.contentBytesLoaded), 1 << 24));
  }
  return answered;
}

/**
 * A shard that failed: its mapping is dropped (a corrupt one is opened afresh next time). A
 * reader's finding of damage in a section not yet verified (section-checks.ts) fails it as
 * corrupt, as a checksum would.
 */
function failed(ref: ShardRef | undefined, err: unknown, queuedNs: number): ShardReply {
  if (ref) shards.delete(shardKey(ref.shardPath, ref.membership, ref.symbols));
  return failedReply(ref?.shardPath ?? '', err, queuedNs);
}

/**
 * Shapes the files of a blocking search's batch that can make its answer: the best
 * `limit` match ranges' worth of them by score (compareRanked, the searcher's order), the
 * last one cut to the ranges left (what the searcher keeps when this worker's files are
 * the best of all). Every file the searcher keeps ranks at least as high among this
 * worker's files as it does among all, so only files of shards the searcher drops (past
 * its cut) can push one out of this set; the searcher shapes such a file itself, and the
 * last one again when its own budget ends elsewhere. A shard that fails its checks here
 * fails whole.
 */
function shapeBest(task: SearchTask, answered: HeldReply[]): void {
  const all: Array<{ f: ShapedFile; a: HeldReply }> = [];
  for (const a of answered) if (a.reply.status === 'done') for (const f of a.reply.files) all.push({ f, a });
  all.sort((x, y) => compareRanked(x.f, y.f));
  let budget = task.limit;
  for (const { f, a } of all) {
    if (budget <= 0) break;
    if (a.reply.status !== 'done') continue; // its shard failed below
    try {
      shapeForMessage(f, a.shard!, a.repos!(f.hit.member), task.shape, budget);
      budget -= f.count;
    } catch (err) {
      a.reply = failed(refOf(task, f.shard), err, a.reply.queuedNs);
    }
  }
}

/**
 * Line tables go no further than shaping here: the searcher shapes a file again only when
 * a budget ends inside it, rarely enough to count its lines itself.
 */
function dropLines(reply: ShardReply): void {
  if (reply.status === 'done') {
    for (const f of reply.files) {
      f.hit.lines = undefined;
      f.hit.chunks = undefined;
    }
  }
}

const NO_FILES: ShapedFile[] = [];

/** Posts replies of shards: the replies packed, their files laid out after them (file-codec.ts). */
function postReplies(run: number, shards: number[], replies: ShardReply[], stream: boolean): void {
  const groups = replies.map((r) => (r.status === 'done' ? r.files : NO_FILES));
  for (const r of replies) if (r.status === 'done') r.files = NO_FILES;
  const body = packMessage(replies, groups, stream);
  messageSent();
  port.postMessage({ run, shards, body } satisfies FromWorker, [body.buffer]);
}

/** Takes a shard's answer: a stream's is posted now, a blocking search's kept for its batch. */
function take(s: WorkerSearch, i: number, a: HeldReply): void {
  if (s.task.batch) {
    s.shardsDone.push(i);
    s.answered.push(a);
  } else {
    dropLines(a.reply);
    postReplies(s.run, [i], [a.reply], true);
  }
}

/**
 * Works on a search until nothing granted is left to claim, or until shouldYield() asks
 * for the worker (then its shard under way is kept, suspended). True when it stopped to
 * yield.
 */
function slice(s: WorkerSearch): boolean {
  for (;;) {
    if (!s.running) {
      if (Atomics.load(s.flag, 0) !== 0) return false;
      if (shouldYield()) return true;
      const claimed = claim(s);
      if (!claimed) return false;
      const started = startShard(s, claimed.shard, claimed.pastCut);
      if ('reply' in started) {
        take(s, claimed.shard, started);
        continue;
      }
      s.running = started;
    }
    const r = s.running;
    const a = stepShard(s, r);
    if (!a) return true;
    s.running = undefined;
    take(s, r.i, a);
  }
}

/** Posts a blocking search's batch once it can claim no more here; forgets a search that has ended. */
function finish(s: WorkerSearch): void {
  if (s.running) return;
  const stopped = Atomics.load(s.flag, 0) !== 0;
  const more = !stopped && claimable(s);
  if (more) return;
  if (s.shardsDone.length > 0) {
    shapeBest(s.task, s.answered);
    for (const a of s.answered) dropLines(a.reply);
    postReplies(
      s.run,
      s.shardsDone,
      s.answered.map((a) => a.reply),
      false,
    );
    s.shardsDone = [];
    s.answered = [];
  }
  // Stopped, or every shard claimed: no resume will bring more. Otherwise the grant ran
  // out: a resume message comes when the searcher grants more (or stops the search).
  const over = Atomics.load(s.control, CONTROL_NEXT) >= s.task.shards.length || (cutPassed(s) && !s.task.definitionsPastCut);
  if (stopped || over) forget(s);
}

function forget(s: WorkerSearch): void {
  searches.delete(s.run);
  const caller = s.task.caller;
  for (const other of searches.values()) if (other.task.caller === caller) return;
  served.delete(caller);
}

/** Whether the search has a granted shard left to claim now. */
function claimable(s: WorkerSearch): boolean {
  const next = Atomics.load(s.control, CONTROL_NEXT);
  if (next >= Atomics.load(s.control, CONTROL_GRANTED) || next >= s.task.shards.length) return false;
  return !cutPassed(s) || s.task.definitionsPastCut;
}

/**
 * The search to work on next: of those with work to do, the one whose caller has had the
 * least time here, then the oldest. Those with nothing to do now are finished on the way
 * (their batch posted, forgotten when they have ended).
 */
function pick(): WorkerSearch | undefined {
  let best: WorkerSearch | undefined;
  let bestServed = Infinity;
  for (const s of searches.values()) {
    if (!s.running && (Atomics.load(s.flag, 0) !== 0 || !claimable(s))) {
      finish(s);
      continue;
    }
    const had = served.get(s.task.caller) ?? 0;
    if (had < bestServed || (had === bestServed && s.seq < best!.seq)) {
      best = s;
      bestServed = had;
    }
  }
  return best;
}

let turnsQueued = false;

/**
 * Works on the searches with work to do, by turns (pick), until none has any. When a
 * search yields to one that may be waiting, the worker first takes its messages (the next
 * turns run from a new event-loop task).
 */
function turns(): void {
  turnsQueued = false;
  for (;;) {
    const s = pick();
    if (!s) return;
    sliceSeen = Atomics.load(attention, 0);
    sliceStarted = performance.now();
    const yielded = slice(s);
    served.set(s.task.caller, (served.get(s.task.caller) ?? 0) + (performance.now() - sliceStarted));
    if (yielded) {
      if (!turnsQueued) {
        turnsQueued = true;
        setImmediate(turns);
      }
      return;
    }
  }
}

/** Answers the pool's messages on `p` (search-thread.ts in a worker thread; the pool itself in-thread). */
export function serveSearches(p: MessagePort, id: number, sharedAttention: SharedArrayBuffer): void {
  port = p;
  workerId = id;
  attention = new Int32Array(sharedAttention);
  port.on('message', onMessage);
}

function onMessage(msg: ToWorker): void {
  switch (msg.kind) {
    case 'forget':
      for (const k of msg.keys) shards.delete(k);
      return;
    case 'catalog':
      catalogs.set(msg.id, (last = { id: msg.id, refs: catalogOf(msg) }).refs);
      return;
    case 'drop-catalog':
      catalogs.delete(msg.id);
      return;
    case 'verified':
      for (const [path, bitmap] of msg.add) verified.set(path, bitmap);
      for (const path of msg.gone) verified.delete(path);
      return;
    case 'collect':
      dropSpares();
      collectHeap();
      return;
    case 'recycle':
      recycle(msg.buffer);
      return;
    case 'search': {
      const s: WorkerSearch = {
        run: msg.run,
        task: packr.unpack(msg.body) as SearchTask,
        control: new Int32Array(msg.control),
        flag: new Int32Array(msg.cancel),
        sentAt: msg.sentAt,
        seq: nextSeq++,
        shardsDone: [],
        answered: [],
      };
      searches.set(msg.run, s);
      if (!turnsQueued) turns();
      return;
    }
    case 'resume':
      if (searches.has(msg.run) && !turnsQueued) turns();
      return;
  }
}
