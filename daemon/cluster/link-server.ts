// A node's side of the links other nodes dial to it (link-frames.ts; http/server.ts upgrades
// GET /_cluster/link once the caller proved it is of the cluster): runs the parts of their
// searches on this node's shards and shapes files again.
//
// A part's replies are sent as its shards answer, several to a frame. One that found
// something (or failed) goes at the next turn of the event loop: the coordinator's merge
// may be waiting for it to decide its cut, and stop the other parts' work. One that found
// nothing waits for others, up to FLUSH_MS or the part's end, so that a part of quick
// shards without matches (most shards of most searches) costs one frame, not one per
// shard. A stream's early files (PARTIAL) go at the next turn, in order with the replies.
// Frames of one flush leave in one write (LinkPeer.send). A worker's message of replies
// becomes a REPLIES frame as it is, its files never unpacked here (PoolRun.onMessage);
// replies made here (units not held) are packed.

import { copyMessage, packMessage, recycle, releaseFile, unpackMessage } from '../search/file-codec.ts';
import type { PoolRun } from '../search/pool.ts';
import type { ShardReply } from '../search/protocol.ts';
import { foreignPlanId } from '../search/plan-cache.ts';
import type { Searcher } from '../search/searcher.ts';
import type { LinkPeer, LinkSession } from './internal-route.ts';
import {
  ACTION,
  ALIVE_MS,
  bodies,
  frame,
  KIND,
  messageFrame,
  NOT_HELD,
  readFrame,
  readMessage,
  repliesHead,
  textFrame,
  type PartRequest,
  type ReshapeRequest,
} from './link-frames.ts';

const NO_HEAD = new Uint8Array(0);

/** How long a reply without matches may wait for others to share its frame. */
const FLUSH_MS = 2;

/** Serves one link: the messages of the node at its other end. */
export function serveLink(searcher: Searcher, peer: LinkPeer): LinkSession {
  const parts = new Map<number, ServedPart>();
  let closed = false;
  const fail = (id: number, why: string) => peer.send([textFrame(KIND.ERROR, id, why)]);
  return {
    message(bytes: Uint8Array): void {
      let f: ReturnType<typeof readFrame>;
      try {
        f = readFrame(bytes);
      } catch (err) {
        return peer.close(`a malformed frame (${(err as Error).message})`);
      }
      switch (f.kind) {
        case KIND.SEARCH: {
          let req: PartRequest;
          try {
            req = bodies.unpack(f.payload) as PartRequest;
            if (!req || !Array.isArray(req.units) || typeof req.task !== 'object') throw new Error('not a search part');
          } catch (err) {
            return fail(f.id, `not a search part: ${(err as Error).message}`);
          }
          if (parts.has(f.id)) return fail(f.id, `part ${f.id} is already running`);
          let part: ServedPart;
          try {
            part = new ServedPart(f.id, searcher, req, peer, () => parts.delete(f.id));
          } catch (err) {
            return fail(f.id, `the part could not start: ${(err as Error).message}`);
          }
          parts.set(f.id, part);
          return part.start();
        }
        case KIND.CONTROL: {
          const part = parts.get(f.id);
          if (!part || f.payload.length < 1) return;
          if (f.payload[0] === ACTION.stop) part.stop();
          else if (f.payload[0] === ACTION.definitionsOnly) part.run.definitionsOnly();
          return;
        }
        case KIND.RESHAPE:
          return reshape(searcher, peer, f.id, f.payload);
        default:
          return peer.close(`unknown frame kind ${f.kind}`);
      }
    },
    closed(): void {
      if (closed) return;
      closed = true;
      // Nobody waits for these parts any more.
      for (const p of parts.values()) p.stop();
    },
  };
}

function reshape(searcher: Searcher, peer: LinkPeer, id: number, payload: Buffer): void {
  try {
    const { value, groups } = unpackMessage(readMessage(payload, 0));
    const req = value as ReshapeRequest;
    const f = groups[0]?.[0];
    if (!f || !req?.unit) throw new Error('not a file to shape');
    const shaped = searcher.reshapeUnit(req.unit, req.shape, f, req.budget);
    if (!shaped) throw new Error(NOT_HELD);
    const out = messageFrame(KIND.RESHAPED, id, NO_HEAD, (room) => packMessage({}, [[shaped]], false, room));
    peer.send([out]);
    recycle(out.buffer as ArrayBuffer);
  } catch (err) {
    peer.send([textFrame(KIND.UNSHAPED, id, (err as Error).message)]);
  }
}

/** A part of a search running here for the node at the link's other end. */
class ServedPart {
  readonly run: PoolRun;
  readonly #cancel = new SharedArrayBuffer(4);
  readonly #release: () => void;
  /** Run shard index → the part's unit index. */
  readonly #unitOf: number[] = [];
  /** Run shard indices whose replies went in their worker's message (onMessage). */
  readonly #forwarded: boolean[] = [];
  /** Replies done and not sent, and frames made and not sent (in order). */
  #replies: Array<{ unit: number; reply: ShardReply }> = [];
  #frames: Uint8Array[] = [];
  /** The buffers of the frames packed here (messageFrame): the next frames' once these are sent (LinkPeer.send copies). */
  #packed: ArrayBuffer[] = [];
  #open: number;
  /** Whether a frame went since the last ALIVE tick. */
  #sentSinceTick = false;
  #flushTimer: NodeJS.Timeout | undefined;
  #flushSoon: NodeJS.Immediate | undefined;
  #alive: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    searcher: Searcher,
    req: PartRequest,
    private readonly peer: LinkPeer,
    private readonly done: () => void,
  ) {
    const plan = new Uint8Array(req.task.plan);
    // The files of its replies unpacked here (a stream's partials, a message whose shard was
    // settled before it came) are released once copied into frames: their buffers go back to the workers.
    const unitRun = searcher.startUnits(req.units, { ...req.task, plan, planId: foreignPlanId(plan) }, this.#cancel, Infinity, true);
    this.run = unitRun.run;
    this.#release = unitRun.release;
    this.#open = req.units.length;
    unitRun.held.forEach((at, k) => {
      if (at < 0) this.#replies.push({ unit: k, reply: { status: 'failed', error: NOT_HELD, queuedNs: 0 } });
      else this.#unitOf[at] = k;
    });
    this.#open -= this.#replies.length;
  }

  start(): void {
    this.run.onPartial = (at, p) => {
      this.#pack();
      this.#push(messageFrame(KIND.PARTIAL, this.id, u32(this.#unitOf[at]!), (room) => packMessage({ ...p, files: [] }, [p.files], false, room)));
      for (const f of p.files) releaseFile(f);
      this.#schedule(true);
    };
    // A worker's message of replies goes on as it came (file-codec.ts copyMessage), behind
    // the replies made here before it.
    this.run.onMessage = (shards, message) => {
      this.#pack();
      this.#push(messageFrame(KIND.REPLIES, this.id, repliesHead(shards.map((at) => this.#unitOf[at]!)), (room) => copyMessage(message, room)));
      for (const at of shards) this.#forwarded[at] = true;
    };
    this.run.replies.forEach(
      (r, at) =>
        void r.then((reply) => {
          if (!this.#forwarded[at]) this.#replies.push({ unit: this.#unitOf[at]!, reply });
          this.#open--;
          this.#schedule(reply.status !== 'done' || reply.result.found > 0);
        }),
    );
    if (this.#open === 0) return this.#flush();
    // Units this node does not hold go back at once: the coordinator asks their other holders.
    if (this.#replies.length > 0) this.#schedule(true);
    // Every ALIVE_MS without another frame, for as long as the part runs: the coordinator
    // takes a part silent for FIRST_ANSWER_MS for wedged (peer-link.ts).
    this.#alive = setInterval(() => {
      if (!this.#sentSinceTick) this.peer.send([frame(KIND.ALIVE, this.id)]);
      this.#sentSinceTick = false;
    }, ALIVE_MS);
  }

  stop(): void {
    Atomics.store(new Int32Array(this.#cancel), 0, 1);
    this.run.stop();
  }

  /** Sends what is ready: now when the part is done, at the next turn when `soon`, else within FLUSH_MS. */
  #schedule(soon: boolean): void {
    if (this.#open === 0) return this.#flush();
    if (soon) this.#flushSoon ??= setImmediate(() => this.#flush());
    else this.#flushTimer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  #push(packed: Uint8Array): void {
    this.#frames.push(packed);
    this.#packed.push(packed.buffer as ArrayBuffer);
  }

  /** The replies done so far into a frame. */
  #pack(): void {
    if (this.#replies.length === 0) return;
    const list = this.#replies;
    this.#replies = [];
    const groups = list.map(({ reply }) => (reply.status === 'done' ? reply.files : []));
    const values = list.map(({ reply }) => (reply.status === 'done' ? { ...reply, files: [] } : reply));
    this.#push(messageFrame(KIND.REPLIES, this.id, repliesHead(list.map((r) => r.unit)), (room) => packMessage(values, groups, false, room)));
    for (const g of groups) for (const f of g) releaseFile(f);
  }

  #flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#flushSoon) clearImmediate(this.#flushSoon);
    this.#flushSoon = undefined;
    this.#pack();
    const last = this.#open === 0;
    if (last) this.#frames.push(frame(KIND.END, this.id));
    if (this.#frames.length > 0) {
      this.peer.send(this.#frames);
      this.#frames = [];
      // A new buffer per frame was memory V8 counts against its heap (link-frames.ts).
      for (const b of this.#packed) recycle(b);
      this.#packed = [];
      this.#sentSinceTick = true;
    }
    if (last) {
      clearInterval(this.#alive);
      this.#release();
      this.done();
    }
  }
}

function u32(v: number): Uint8Array {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(v, 0);
  return b;
}
