// A search over a cluster's shards (the coordinator's side: any node that got the API
// request). The units of the search are the shards of every repository's published index
// (published.ts), in the order one node would take them (repository name, id, shard
// order); each is asked of one node that holds it at that generation (holdings.ts): this
// node itself when it does (its own worker pool, no request), else one of its holders
// chosen so that as few nodes as possible are asked (nodes-to-ask.ts: each node asked costs
// messages on both sides). The replies are merged by the same loop a single node uses
// (search/merge.ts), which is why a cluster answers exactly what one node with every shard
// would.
//
// The units of one node travel as one part over the link to it (peer-link.ts; served by
// link-server.ts), which answers the shards' replies as they are done. When a node fails
// (it cannot be reached, its link breaks, it does not start answering in time, or it no
// longer holds a shard) its unanswered units are asked of their next holder at once; a
// unit with no live holder left fails, which makes the answer not exhaustive and names it
// in `unavailableShards` (and the log). Unless its repository moved meanwhile (built again,
// or copied into a compound shard or out of one: a node drops a generation once it sees a
// newer one published, which may be before this node does): then the cluster view is read
// again, and the repository's current shard, when it is one, is asked in its place, once.
// Each unit names the generation it is of: a node that has copied that generation into a
// compound shard and not yet published the copy answers from the copy (searcher.ts
// startUnits), so a pack job on a repository's only live holder leaves no gap.
//
// What a remote part does not share with a local run: a stream's backpressure (a node runs
// its part without waiting for the client; what it sends is at most its shards' files) and
// the cut's skipping, which each node applies to its own shards' counts (smaller than the
// search's, so it skips no shard the merge would take).
//
// Speculation. One node taking its shards in order stops searching them whole once the
// shards before have enough matches (its cut; merge.ts): for most searches, after a few of
// them. Parts running side by side cannot know when the merge will get there, so each
// searched its own first shards whole, work the merge then dropped (on Linux, a cluster of
// four spent several times one daemon's CPU per request, most of it on such shards:
// docs/deployment.md, "Sizing").
// So a blocking search bets: the first shards, as many as the cut needs at the least (each
// shard gives at most `limit` + 1 ranges), are searched whole; every later one that another
// node searches is searched speculatively (shard-search.ts `speculate`): for its
// definitions only, as past the cut, unless so few of its documents can match that
// searching it whole costs as little. (This node's own part takes its shards in order and
// hears of the cut at once, as one node does: it bets only on shards that follow one of
// another node's, where it would run ahead of the merge.) Such
// a reply is held back until the merge's cut passes (it is then exactly what the shard
// gives past the cut), or until the merge reaches it before its cut (PoolRun.need): then
// it is asked again, whole, of the node that searched it, and so is every unit after it
// that the cut needs at the rate of the shards taken, as soon as its reply says it was
// searched speculatively. The answer is the same either way; a lost bet costs a round
// trip. A stream takes no bet (it shows files as they come).

import type { TaskParams } from '../search/merge.ts';
import { mergeSearch } from '../search/merge.ts';
import { planSearch, refuseHistoryPlan } from '../search/plan-cache.ts';
import type { PoolRun } from '../search/pool.ts';
import { NO_SPECULATION, type Cut, type PartialReply, type ShardReply } from '../search/protocol.ts';
import { failOnServiceAbort, parseFile, type Searcher, type UnitRun } from '../search/searcher.ts';
import type { SearchOptions, SearchService, UnavailableShard, WireResponse } from '../search/search-options.ts';
import { cutFile } from '../search/file-json-cut.ts';
import type { ShapedFile, ShapeOptions } from '../search/file-json.ts';
import type { SearchRequest, SearchResponse } from '../search/types.ts';
import type { ClusterCounters } from './counters.ts';
import { NOT_HELD, type Unit } from './link-frames.ts';
import type { LinkPart, PeerLinks } from './peer-link.ts';
import { cover, spreadFirst } from './nodes-to-ask.ts';

/** A unit as a search takes it: where it may be asked, and what the caller may see of its repository. */
export interface PlacedUnit extends Unit {
  repository: string;
  visibility: 'public' | 'private';
  /** Live nodes that hold it at the published generation, in the order to ask them. */
  holders: string[];
}

export interface FanOutOptions {
  self: string;
  searcher: Searcher;
  links: PeerLinks;
  /** A live node's base URL; undefined when it is not live (any more). */
  urlOf(node: string): string | undefined;
  /** Every unit of the published index, in search order, with its holders now. */
  units(): PlacedUnit[];
  /** A unit no live node could answer (logged by the caller). */
  onUnavailable?(u: UnavailableShard): void;
  /**
   * The repository's unit now, after reading the cluster view again, when it has one unit
   * with a live holder; undefined otherwise (the unit is then unavailable).
   */
  relocate?(u: PlacedUnit): Promise<PlacedUnit | undefined>;
  /** Requests to other nodes, failed and retried units, unavailable ones (/metrics). */
  counters: ClusterCounters;
}

export class FanOut implements SearchService {
  constructor(private readonly options: FanOutOptions) {}

  async search(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<SearchResponse> {
    const res = await this.searchWire(req, options);
    const out: SearchResponse = {
      stats: res.stats,
      files: res.files.map(parseFile),
      repositoryInfo: res.repositoryInfo,
      isSearchExhaustive: res.isSearchExhaustive,
    };
    if (res.unavailableShards) out.unavailableShards = res.unavailableShards;
    return out;
  }

  shapeOptions(req: Required<SearchRequest>): ShapeOptions {
    return this.options.searcher.shapeOptions(req);
  }

  searchWire(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<WireResponse> {
    return failOnServiceAbort(this.#search(req, options), options.signal);
  }

  async #search(req: Required<SearchRequest>, options: SearchOptions): Promise<WireResponse> {
    refuseHistoryPlan((options.planned ?? planSearch(req)).plan);
    // (Only the history's spans name documents, and a cluster searches no histories.)
    if (options.docs !== undefined) throw new Error('a cluster search cannot be limited to named documents');
    const filter = options.repoFilter;
    const all = this.options.units();
    const units = filter ? all.filter((u) => filter({ repoId: u.repoId, visibility: u.visibility })) : all;
    const unavailable: UnavailableShard[] = [];
    let run: ClusterSearchRun | undefined;
    const shape = this.options.searcher.shapeOptions(req);
    try {
      const res = await mergeSearch(units.length, req, options, {
        workers: Math.max(1, this.options.searcher.threads),
        lostShards: 0,
        shape,
        start: (task, cancel, grantedTo) => (run = new ClusterSearchRun(this.options, { units, task, cancel, grantedTo, unavailable })),
        reshape: (i, s, f, budget) => run!.reshape(i, s, f, budget),
        corrupt: (i, error) => run!.corrupt(i, error),
      });
      if (unavailable.length > 0) {
        res.unavailableShards = unavailable;
        res.isSearchExhaustive = false;
      }
      return res;
    } finally {
      run?.close();
    }
  }
}

/** What a search's run starts from: the merge's task, cancel flag and first grant (PoolRun), and where it lists the units it loses. */
interface SearchRunStart {
  units: readonly PlacedUnit[];
  task: TaskParams;
  cancel: SharedArrayBuffer;
  grantedTo: number;
  unavailable: UnavailableShard[];
}

/** One search's parts, local and remote, as one PoolRun over the units in search order. */
class ClusterSearchRun implements PoolRun {
  readonly replies: Array<Promise<ShardReply>>;
  onPartial?: (shard: number, reply: PartialReply) => void;
  readonly #resolvers: Array<((r: ShardReply) => void) | undefined>;
  /** Nodes each unit was asked of so far. */
  readonly #tried: Array<Set<string>>;
  /** Why the last node asked for each unit failed it. */
  readonly #failures: Array<string | undefined>;
  /** Which part answers each unit, and its index there (for reshapes: the last asked until one answers, as a stream reshapes files before their shard's reply). */
  readonly #where: Array<{ part: Part; at: number } | undefined>;
  /** The part whose answer each unit waits for (the last asked: a failure of another is old news). */
  readonly #current: Array<Part | undefined>;
  /** Speculative replies held back until the cut passes (see the file's comment). */
  readonly #held: Array<{ reply: ShardReply; part: Part; at: number } | undefined>;
  /** Units from this one on are searched speculatively by the other nodes' parts. */
  #wholeBelow: number;
  /** What the merge had taken when it last moved #wholeBelow (the cut of parts asked again: cutAfter). */
  #taken: Taken | undefined;
  /** Units to ask again whole at the end of this turn, by the part that answered them speculatively. */
  readonly #againAsked = new Map<Part, number[]>();
  readonly #parts: Part[] = [];
  /** The search's units (this search's copy: a unit that moved is replaced in it). */
  private readonly units: PlacedUnit[];
  private readonly task: TaskParams;
  private readonly cancel: SharedArrayBuffer;
  private grantedTo: number;
  private readonly unavailable: UnavailableShard[];
  /** Units whose repository was looked up again (once per unit). */
  readonly #relocated = new Set<number>();
  #stopped = false;
  #defsOnly = false;
  /** The merge is past its cut (it said definitionsOnly, or stop). */
  #cutPassed = false;

  constructor(
    private readonly o: FanOutOptions,
    { units, task, cancel, grantedTo, unavailable }: SearchRunStart,
  ) {
    this.units = [...units];
    this.task = task;
    this.cancel = cancel;
    this.grantedTo = grantedTo;
    this.unavailable = unavailable;
    this.#resolvers = new Array(units.length);
    this.replies = units.map((_, i) => new Promise<ShardReply>((r) => (this.#resolvers[i] = r)));
    this.#tried = units.map(() => new Set());
    this.#failures = new Array(units.length);
    this.#where = new Array(units.length);
    this.#current = new Array(units.length);
    this.#held = new Array(units.length);
    this.#wholeBelow = wholeAtFirst(task, units.length);
    this.#ask(units.map((_, i) => i));
  }

  /** Asks each of `indices` of an untried live holder, as few nodes as may answer them all (nodes-to-ask.ts). */
  #ask(indices: number[]): void {
    const asked: number[] = [];
    const candidates: string[][] = [];
    for (const i of indices) {
      if (this.#resolvers[i] === undefined) continue;
      if (this.#stopped) {
        this.#resolve(i, { status: 'skipped' });
        continue;
      }
      const u = this.units[i]!;
      // A unit asked before comes back here only because the node asked failed it.
      const failed = this.#tried[i]!.size > 0;
      if (failed) this.o.counters.shardFailures.inc();
      const nodes = u.holders.filter((n) => !this.#tried[i]!.has(n) && (n === this.o.self || this.o.urlOf(n) !== undefined));
      if (nodes.length === 0) {
        const reason = failed
          ? `every live node holding it failed (asked ${[...this.#tried[i]!].join(', ')}; last: ${this.#failures[i]})`
          : 'no live node holds this shard';
        if (this.o.relocate && !this.#relocated.has(i)) {
          this.#relocated.add(i);
          void this.#relocate(i, reason);
        } else this.#lose(i, reason);
        continue;
      }
      if (failed) this.o.counters.shardRetries.inc();
      asked.push(i);
      candidates.push(nodes);
    }
    const nodes = cover(candidates, this.o.self);
    // A blocking search's first units (searched whole wherever they are): beside each other.
    if (this.task.batch) spreadFirst(nodes, candidates, this.o.self, (k) => asked[k]! < this.#wholeBelow);
    // The other nodes' parts first: theirs have a way to travel, this node's starts at once.
    const chosen = [...nodes].sort(([a], [b]) => Number(a === this.o.self) - Number(b === this.o.self));
    for (const [node, at] of chosen) {
      const list = at.map((k) => asked[k]!);
      for (const i of list) this.#tried[i]!.add(node);
      const part = node === this.o.self ? this.#local(list) : this.#remote(node, list);
      this.#parts.push(part);
    }
  }

  /** Asks unit `i` again where its repository is now, when it moved; else it is lost. */
  async #relocate(i: number, reason: string): Promise<void> {
    const u = this.units[i]!;
    const now = await this.o.relocate!(u).catch(() => undefined);
    if (this.#resolvers[i] === undefined) return;
    if (now === undefined || now.repoId !== u.repoId || (now.file === u.file && now.holders.every((n) => this.#tried[i]!.has(n)))) return this.#lose(i, reason);
    this.units[i] = now;
    this.#tried[i]!.clear();
    this.#ask([i]);
  }

  /** Unit `i` could not be searched: the answer is not exhaustive, and says so. */
  #lose(i: number, reason: string): void {
    const u = this.units[i]!;
    const lost: UnavailableShard = { repositoryId: u.repoId, repository: u.repository, shard: u.file, reason };
    this.unavailable.push(lost);
    this.o.counters.unavailableShards.inc();
    this.o.onUnavailable?.(lost);
    this.#resolve(i, { status: 'failed', error: reason, queuedNs: 0 });
  }

  #resolve(i: number, reply: ShardReply, part?: Part, at?: number): void {
    const r = this.#resolvers[i];
    if (!r) return;
    this.#resolvers[i] = undefined;
    this.#held[i] = undefined;
    if (part && at !== undefined) this.#where[i] = { part, at };
    if (reply.status === 'done') for (const f of reply.files) f.shard = i;
    r(reply);
  }

  /**
   * A part's reply for unit `i`: taken, or held back when it is speculative and the cut has
   * not passed; then asked again whole if the merge needs it so already (a lost bet).
   */
  #answer(i: number, reply: ShardReply, part: Part, at: number): void {
    if (this.#resolvers[i] === undefined) return;
    if (reply.status === 'done' && reply.result.speculative && !this.#cutPassed) {
      this.#held[i] ??= { reply, part, at };
      if (i < this.#wholeBelow && this.#current[i] === part) this.#askAgain(i, part);
      return;
    }
    // A failure of a part no longer asked for the unit: the part asked since answers it.
    if (reply.status !== 'done' && this.#current[i] !== part) return;
    this.#resolve(i, reply, part, at);
  }

  /**
   * The task of a part asking `list` (ascending): from which of its units on it speculates.
   * This node's own part bets only on units that follow one of another node: up to there
   * its worker takes the units in order, as one node does, and the merge tells it the cut
   * at once (one node, or nodes holding every shard, bet nothing); past such a unit it would
   * run ahead of the merge, which waits for the other node's reply, searching whole what
   * the cut may drop (common words on four nodes: most of the coordinator's CPU).
   */
  #taskFor(list: number[], local: boolean, taken?: Taken): TaskParams {
    // list[k] === k: every unit before is this part's (the list is ascending).
    const from = list.findIndex((i, k) => i >= this.#wholeBelow && !(local && i === k));
    const task = taken ? { ...this.task, cut: cutAfter(this.task.cut, taken) } : this.task;
    if (from < 0) return task.speculateFrom === NO_SPECULATION ? task : { ...task, speculateFrom: NO_SPECULATION };
    this.o.counters.speculativeShards.inc(list.length - from);
    return { ...task, speculateFrom: from };
  }

  #local(list: number[], taken?: Taken): Part {
    const unitRun = this.o.searcher.startUnits(
      list.map((i) => this.units[i]!),
      this.#taskFor(list, true, taken),
      this.cancel,
      grantWithin(list, this.grantedTo),
    );
    const part = new LocalPart(list, unitRun);
    const missing: number[] = [];
    list.forEach((i, k) => {
      const at = unitRun.held[k]!;
      if (at < 0) {
        this.#failures[i] = `${this.o.self}: ${NOT_HELD}`;
        missing.push(i);
        return;
      }
      this.#current[i] = part;
      this.#where[i] = { part, at };
      void unitRun.run.replies[at]!.then((reply) => this.#answer(i, reply, part, at));
    });
    unitRun.run.onPartial = (at, p) => {
      const i = part.globalOf(at);
      for (const f of p.files) f.shard = i;
      this.onPartial?.(i, p);
    };
    if (this.#defsOnly) unitRun.run.definitionsOnly();
    if (missing.length > 0) queueMicrotask(() => this.#ask(missing));
    return part;
  }

  #remote(node: string, list: number[], taken?: Taken): Part {
    this.o.counters.remoteRequests.inc();
    this.o.counters.remoteShards.inc(list.length);
    const part = new RemotePart(node, this.o);
    list.forEach((i, k) => {
      this.#current[i] = part;
      this.#where[i] = { part, at: k };
    });
    part.start(
      this.#taskFor(list, false, taken),
      list.map((i) => ({ repoId: this.units[i]!.repoId, file: this.units[i]!.file, generation: this.units[i]!.generation })),
      (k, reply) => {
        const i = list[k]!;
        if (reply.status === 'failed' && reply.error === NOT_HELD) {
          if (this.#current[i] !== part) return;
          this.#failures[i] = `${node}: ${NOT_HELD}`;
          return this.#ask([i]);
        }
        this.#answer(i, reply, part, k);
      },
      (k, p) => {
        const i = list[k]!;
        for (const f of p.files) f.shard = i;
        this.onPartial?.(i, p);
      },
      (unanswered, why) => {
        const lost = unanswered.map((k) => list[k]!).filter((i) => this.#current[i] === part);
        for (const i of lost) this.#failures[i] = `${node}: ${why}`;
        this.#ask(lost);
      },
    );
    if (this.#defsOnly) part.definitionsOnly();
    return part;
  }

  grant(upTo: number): void {
    this.grantedTo = Math.max(this.grantedTo, upTo);
    for (const p of this.#parts) p.grant(upTo);
  }

  /**
   * The merge is at unit `i`, before its cut, having taken `ranges` ranges and read
   * `readKiB` from the units before. When `i` was searched speculatively (a lost bet), it
   * and the units after it that the cut still needs at the rate of those before are asked
   * again whole of the nodes that searched them (their pages are warm there): those whose
   * speculative reply is in at once, the others as it comes (#answer). Only then: the
   * units of a repository differ too much for the rate of the first one or two to say how
   * far the cut is (asked at the first unit, a regex over Linux whose cut came at its
   * fourth unit had all ten searched whole). And only what came back speculative: a unit
   * asked so may still be searched whole (few candidates, or none: rare words, no-hit
   * searches), and asked again while its reply was on its way it was searched twice (a
   * no-hit search on four nodes asked ~2 units again for every request).
   */
  need(i: number, ranges: number, readKiB: number): void {
    if (i < this.#wholeBelow || this.#stopped) return;
    const to = Math.min(this.units.length, i + unitsToCut(this.task.cut, i, ranges, readKiB));
    if (to <= this.#wholeBelow) return;
    const from = this.#wholeBelow;
    this.#wholeBelow = to;
    this.#taken = { ranges, readKiB };
    for (let j = from; j < to; j++) {
      const held = this.#held[j];
      if (held && this.#current[j] === held.part) this.#askAgain(j, held.part);
    }
  }

  /** Asks unit `i` again whole of the node of `part` (with the others asked again in this turn: one part a node). */
  #askAgain(i: number, part: Part): void {
    if (this.#againAsked.size === 0) queueMicrotask(() => this.#sendAgain());
    const list = this.#againAsked.get(part) ?? [];
    list.push(i);
    this.#againAsked.set(part, list);
  }

  #sendAgain(): void {
    const asked = [...this.#againAsked];
    this.#againAsked.clear();
    if (this.#stopped) return;
    for (const [part, all] of asked) {
      const list = all.filter((j) => this.#resolvers[j] !== undefined && this.#current[j] === part).sort((a, b) => a - b);
      if (list.length === 0) continue;
      this.o.counters.shardsAskedAgain.inc(list.length);
      this.#parts.push(part instanceof RemotePart ? this.#remote(part.node, list, this.#taken) : this.#local(list, this.#taken));
    }
  }

  /** The cut passed (or the search stopped): the speculative replies held back are what the merge takes. */
  #release(): void {
    this.#cutPassed = true;
    this.#held.forEach((h, i) => h && this.#resolve(i, h.reply, h.part, h.at));
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    Atomics.store(new Int32Array(this.cancel), 0, 1);
    for (const p of this.#parts) p.stop();
    this.#release();
  }

  definitionsOnly(): void {
    this.#defsOnly = true;
    for (const p of this.#parts) p.definitionsOnly();
    this.#release();
  }

  async reshape(i: number, shape: ShapeOptions, f: ShapedFile, budget: number): Promise<ShapedFile> {
    const w = this.#where[i];
    if (!w) throw new Error(`shard ${i} of the search was answered by no node`);
    const unit = this.units[i]!;
    let shaped: ShapedFile;
    try {
      shaped = await w.part.reshape(w.at, shape, f, budget, unit);
    } catch (err) {
      // The node that answered the shard left, or dropped its copy since (a builder's copy
      // once the shard's owners hold it): the file is the same on every holder.
      shaped = await this.#reshapeElsewhere(unit, shape, f, budget, { part: w.part, error: err as Error });
    }
    shaped.shard = i;
    return shaped;
  }

  /** `failed`: the part that answered the unit, and how shaping the file there failed. */
  async #reshapeElsewhere(unit: PlacedUnit, shape: ShapeOptions, f: ShapedFile, budget: number, failed: { part: Part; error: Error }): Promise<ShapedFile> {
    // The holders when the search began, then those of the view now: a builder's copy
    // dropped since the search planned on it is held by the shard's owners, which the view
    // may not have listed then.
    const tried = new Set([failed.part instanceof RemotePart ? failed.part.node : this.o.self]);
    const now = this.o.units().find((u) => u.repoId === unit.repoId && u.file === unit.file)?.holders ?? [];
    for (const node of [...unit.holders, ...now]) {
      if (tried.has(node)) continue;
      tried.add(node);
      if (node === this.o.self) {
        const shaped = this.o.searcher.reshapeUnit(unit, shape, f, budget);
        if (shaped) return shaped;
        continue;
      }
      const url = this.o.urlOf(node);
      if (url === undefined) continue;
      try {
        return await this.o.links.to(url).reshape(unit, shape, f, budget);
      } catch {
        // The next holder.
      }
    }
    throw failed.error;
  }

  corrupt(i: number, error: string): void {
    const w = this.#where[i];
    if (w?.part instanceof LocalPart) w.part.unitRun.corrupt(w.at, error);
  }

  close(): void {
    for (const p of this.#parts) p.close();
  }
}

/** What the merge took from the units before a part's first: their ranges and KiB read. */
interface Taken {
  ranges: number;
  readKiB: number;
}

/**
 * A part's cut once the merge has taken `taken` from the units before its first: its
 * workers count only their own units' ranges and reads (protocol.ts, FOUND and LOADED), so
 * the cut they apply is the search's less what the merge holds already. With every unit
 * before the part's first taken, and its units in a row, they stop exactly where the merge
 * would; with units of other parts among them they count less and stop later, never
 * before the merge's cut.
 */
export function cutAfter(cut: Cut, taken: Taken): Cut {
  return { ranges: cut.ranges - taken.ranges, rankedRanges: cut.rankedRanges - taken.ranges, loadedKiB: cut.loadedKiB - taken.readKiB };
}

/**
 * The units a blocking search searches whole from the start: as many as its cut needs at
 * the least (a shard gives at most `limit` + 1 match ranges before it stops, and the cut
 * wants more than `rankedRanges` of them unless `loadedKiB` was read first). A stream, or
 * a search of no more units, searches every unit whole.
 */
function wholeAtFirst(task: TaskParams, count: number): number {
  if (!task.batch) return NO_SPECULATION;
  const n = Math.ceil((task.cut.rankedRanges + 1) / (task.limit + 1));
  return n >= count ? NO_SPECULATION : n;
}

/**
 * How many more units the cut needs at least, if each gives what the `taken` before gave
 * on average (ranges and content read): pastCut wants more than cut.ranges ranges, and
 * more than cut.rankedRanges or more than cut.loadedKiB read. Units that gave nothing say
 * nothing of when the cut comes: then every unit left.
 */
export function unitsToCut(cut: Cut, taken: number, ranges: number, readKiB: number): number {
  const units = (want: number, have: number): number => (have >= want ? 0 : taken > 0 && have > 0 ? Math.ceil((want - have) / (have / taken)) : Infinity);
  return Math.max(1, units(cut.ranges + 1, ranges), Math.min(units(cut.rankedRanges + 1, ranges), units(cut.loadedKiB + 1, readKiB)));
}

/** How many of a part's units (global indices, ascending) lie below the search's grant. */
function grantWithin(list: number[], upTo: number): number {
  let n = 0;
  while (n < list.length && list[n]! < upTo) n++;
  return n;
}

interface Part {
  grant(upTo: number): void;
  stop(): void;
  definitionsOnly(): void;
  reshape(at: number, shape: ShapeOptions, f: ShapedFile, budget: number, unit: Unit): Promise<ShapedFile>;
  close(): void;
}

class LocalPart implements Part {
  /** Run shard index → global index. */
  readonly #global: number[] = [];

  constructor(
    readonly list: number[],
    readonly unitRun: UnitRun,
  ) {
    list.forEach((i, k) => {
      const at = unitRun.held[k]!;
      if (at >= 0) this.#global[at] = i;
    });
  }

  globalOf(at: number): number {
    return this.#global[at]!;
  }

  grant(upTo: number): void {
    let n = 0;
    while (n < this.#global.length && this.#global[n]! < upTo) n++;
    this.unitRun.run.grant(n);
  }

  stop(): void {
    this.unitRun.run.stop();
  }

  definitionsOnly(): void {
    this.unitRun.run.definitionsOnly();
  }

  async reshape(at: number, shape: ShapeOptions, f: ShapedFile, budget: number): Promise<ShapedFile> {
    return this.unitRun.reshape(at, shape, f, budget);
  }

  close(): void {
    this.unitRun.release();
  }
}

/** A node's part of a search, over the link to it (peer-link.ts). */
class RemotePart implements Part {
  #link: LinkPart | undefined;
  #stopped = false;
  #defsOnly = false;

  constructor(
    readonly node: string,
    private readonly o: FanOutOptions,
  ) {}

  start(
    task: TaskParams,
    units: Unit[],
    onReply: (k: number, r: ShardReply) => void,
    onPartial: (k: number, p: PartialReply) => void,
    onLost: (unanswered: number[], why: string) => void,
  ): void {
    const url = this.o.urlOf(this.node);
    const answered = units.map(() => false);
    let ended = false;
    const end = (why?: string) => {
      if (ended) return;
      ended = true;
      const unanswered = answered.flatMap((a, k) => (a ? [] : [k]));
      if (unanswered.length > 0) onLost(unanswered, why ?? 'the node ended its part without answering every shard');
    };
    if (url === undefined) return queueMicrotask(() => end('not live'));
    this.#link = this.o.links.to(url).search(task, units, {
      reply: (k, reply) => {
        if (ended || answered[k]) return;
        answered[k] = true;
        onReply(k, reply);
      },
      partial: (k, p) => {
        if (!ended && !answered[k]) onPartial(k, p);
      },
      ended: end,
    });
  }

  grant(): void {
    // A remote part runs without waiting for grants (see the file's comment).
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#link?.control('stop');
  }

  definitionsOnly(): void {
    if (this.#defsOnly || this.#stopped) return;
    this.#defsOnly = true;
    this.#link?.control('definitionsOnly');
  }

  reshape(_at: number, shape: ShapeOptions, f: ShapedFile, budget: number, unit: Unit): Promise<ShapedFile> {
    // Cut here from its JSON when that gives what the node would (search/file-json-cut.ts): no round trip.
    const cut = cutFile(f, budget, shape.contextLines);
    if (cut) {
      this.o.counters.filesCut.inc();
      return Promise.resolve(cut);
    }
    this.o.counters.filesShapedRemotely.inc();
    const url = this.o.urlOf(this.node);
    if (url === undefined) return Promise.reject(new Error(`node ${this.node} left before a file of its shard could be shaped`));
    return this.o.links.to(url).reshape(unit, shape, f, budget);
  }

  close(): void {
    // The search is over: a part still running on the node is stopped there.
    this.#link?.close();
  }
}
