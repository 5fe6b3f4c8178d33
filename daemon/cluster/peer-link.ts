// The links this node dials to the others (link-frames.ts): one WebSocket per node, made
// when first needed, signed once with the cluster's credential (peer-auth.ts), carrying
// every part of this node's searches there and every reshape. A link that closes or errs
// fails what it carried (their units go to their next holders: fan-out.ts) and is dialled
// again on next use.
//
// A part must get its first frame within FIRST_ANSWER_MS, and each next one within
// FIRST_ANSWER_MS of the last (the node sends ALIVE every ALIVE_MS a running part has sent
// nothing: link-server.ts): if not, its unanswered units go elsewhere, so a node that
// wedges after answering some units holds a search no longer than one that never answers;
// and if nothing at all came over the link meanwhile, the node is taken for gone (a dead
// peer's TCP connection may say nothing for minutes) and the link is closed. A part told
// to stop must end within FIRST_ANSWER_MS too.

import WebSocket from 'ws';
import { unpackMessage, packMessage } from '../search/file-codec.ts';
import type { PartialReply, ShardReply } from '../search/protocol.ts';
import type { ShapedFile, ShapeOptions } from '../search/file-json.ts';
import { LINK_MAX_MESSAGE_BYTES, LINK_PATH } from './internal-route.ts';
import {
  ACTION,
  bodies,
  FIRST_ANSWER_MS,
  frame,
  KIND,
  messageFrame,
  readFrame,
  readMessage,
  readReplies,
  type Action,
  type PartRequest,
  type ReshapeRequest,
  type Unit,
} from './link-frames.ts';
import { NODE_HEADER, type PeerAuth } from './peer-auth.ts';

/** What a part's caller hears: each unit's reply, a stream's early files, and the end or loss of the rest. */
export interface PartHandlers {
  reply(unit: number, reply: ShardReply): void;
  partial(unit: number, p: PartialReply): void;
  /** The part will say nothing more: `why` undefined when it answered everything. */
  ended(why?: string): void;
}

/** A part sent over a link. */
export interface LinkPart {
  control(action: Action): void;
  /** Nobody wants its frames any more: the node stops it (when still running). */
  close(): void;
}

export class PeerLinks {
  readonly #links = new Map<string, PeerLink>();

  constructor(private readonly auth: PeerAuth) {}

  /** The link to the node at `url` (its base URL), dialled if there is none. */
  to(url: string): PeerLink {
    let link = this.#links.get(url);
    if (!link || link.closed) {
      link = new PeerLink(url, this.auth, (l) => {
        if (this.#links.get(url) === l) this.#links.delete(url);
      });
      this.#links.set(url, link);
    }
    return link;
  }

  close(): void {
    for (const l of this.#links.values()) l.close('this node stops');
    this.#links.clear();
  }
}

interface SentPart {
  handlers: PartHandlers;
  /** Whether a frame of it came. */
  answered: boolean;
  /** When it was sent, then when its last frame came. */
  lastAt: number;
  /** Told to stop: its timer is the deadline for its end. */
  stopping: boolean;
  /** Its next frame's deadline (re-armed lazily from lastAt), then (once stopping) its end's. */
  timer: NodeJS.Timeout | undefined;
}

interface SentReshape {
  resolve(f: ShapedFile): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class PeerLink {
  readonly #ws: WebSocket;
  readonly #parts = new Map<number, SentPart>();
  readonly #reshapes = new Map<number, SentReshape>();
  /** Frames sent before the link opened. */
  #queued: Uint8Array[] | undefined = [];
  #next = 1;
  /** When a frame (or pong) last came. */
  #heard = 0;
  closed = false;

  constructor(
    readonly url: string,
    auth: PeerAuth,
    private readonly onClose: (l: PeerLink) => void,
  ) {
    const target = new URL(LINK_PATH, url);
    target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
    this.#ws = new WebSocket(target, {
      headers: { [NODE_HEADER]: auth.header('GET', LINK_PATH) },
      perMessageDeflate: false,
      maxPayload: LINK_MAX_MESSAGE_BYTES,
      handshakeTimeout: FIRST_ANSWER_MS,
    });
    this.#ws.binaryType = 'nodebuffer';
    this.#ws.on('open', () => {
      const queued = this.#queued ?? [];
      this.#queued = undefined;
      for (const f of queued) this.#ws.send(f);
    });
    this.#ws.on('message', (data: Buffer) => this.#receive(data));
    this.#ws.on('pong', () => (this.#heard = performance.now()));
    this.#ws.on('unexpected-response', (_req, res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => {
        let why = Buffer.concat(parts).toString('utf8').slice(0, 300);
        try {
          why = (JSON.parse(why) as { message?: string }).message ?? why;
        } catch {
          // not the API's error object: the text as it is
        }
        this.close(`${url} refused the link (${res.statusCode}: ${why})`);
      });
      res.on('error', () => this.close(`${url} refused the link (${res.statusCode})`));
    });
    this.#ws.on('error', (err) => this.close(`${url} cannot be reached: ${err.message}`));
    this.#ws.on('close', (code, reason) => this.close(`the link to ${url} closed (${code}${reason.length > 0 ? `: ${reason.toString('utf8')}` : ''})`));
  }

  /** Starts a part of a search on the node. */
  search(task: PartRequest['task'], units: Unit[], handlers: PartHandlers): LinkPart {
    const id = this.#next++;
    if (this.closed) {
      queueMicrotask(() => handlers.ended('the link is closed'));
      return { control() {}, close() {} };
    }
    const sent: SentPart = { handlers, answered: false, lastAt: performance.now(), stopping: false, timer: undefined };
    sent.timer = setTimeout(() => this.#silent(id, sent), FIRST_ANSWER_MS);
    this.#parts.set(id, sent);
    this.#send(frame(KIND.SEARCH, id, bodies.pack({ task, units } satisfies PartRequest)));
    return {
      control: (action) => {
        const p = this.#parts.get(id);
        if (!p) return;
        this.#send(controlFrame(id, action));
        // A stopped part ends within moments (its shards not started are skipped, the running
        // one sees the flag): one that does not is given up on, or the search would wait on
        // it (and hold its turn) for as long as the node stays wedged.
        if (action === 'stop' && !p.stopping) {
          p.stopping = true;
          clearTimeout(p.timer);
          p.timer = setTimeout(
            () => this.#forget(id)?.handlers.ended(`${this.url} did not end its part within ${FIRST_ANSWER_MS} ms of being told to stop`),
            FIRST_ANSWER_MS,
          );
        }
      },
      close: () => {
        if (this.#forget(id)) this.#send(controlFrame(id, 'stop'));
      },
    };
  }

  /** A file of `unit` shaped again by the node. */
  reshape(unit: Unit, shape: ShapeOptions, f: ShapedFile, budget: number): Promise<ShapedFile> {
    if (this.closed) return Promise.reject(new Error(`the link to ${this.url} is closed`));
    const id = this.#next++;
    return new Promise<ShapedFile>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#reshapes.delete(id);
        reject(new Error(`${this.url} did not shape a file again within ${FIRST_ANSWER_MS} ms`));
      }, FIRST_ANSWER_MS);
      this.#reshapes.set(id, { resolve, reject, timer });
      const value: ReshapeRequest = { unit: { repoId: unit.repoId, file: unit.file }, shape, budget };
      this.#send(messageFrame(KIND.RESHAPE, id, NO_HEAD, (room) => packMessage(value, [[f]], false, room)));
    });
  }

  /** Closes the link: what it carried fails with `why`. */
  close(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose(this);
    this.#ws.terminate();
    for (const id of [...this.#parts.keys()]) this.#forget(id)?.handlers.ended(why);
    for (const [id, r] of this.#reshapes) {
      clearTimeout(r.timer);
      this.#reshapes.delete(id);
      r.reject(new Error(why));
    }
  }

  #send(f: Uint8Array): void {
    if (this.closed) return;
    if (this.#queued) this.#queued.push(f);
    else this.#ws.send(f);
  }

  /** A part's deadline for its next frame came: later when a frame came since, else the part (or the link) is given up. */
  #silent(id: number, p: SentPart): void {
    if (this.#parts.get(id) !== p || p.stopping) return;
    const due = p.lastAt + FIRST_ANSWER_MS - performance.now();
    if (due > 0) {
      p.timer = setTimeout(() => this.#silent(id, p), due);
      return;
    }
    if (this.#heard < p.lastAt) return this.close(`${this.url} sent nothing within ${FIRST_ANSWER_MS} ms`);
    const why = p.answered
      ? `${this.url} sent nothing more of its part within ${FIRST_ANSWER_MS} ms`
      : `${this.url} did not start answering within ${FIRST_ANSWER_MS} ms`;
    this.#forget(id)?.handlers.ended(why);
    this.#send(controlFrame(id, 'stop'));
  }

  #forget(id: number): SentPart | undefined {
    const p = this.#parts.get(id);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.#parts.delete(id);
    return p;
  }

  #receive(data: Buffer): void {
    this.#heard = performance.now();
    let f: ReturnType<typeof readFrame>;
    try {
      f = readFrame(data);
      if (f.kind === KIND.RESHAPED || f.kind === KIND.UNSHAPED) return this.#reshaped(f.kind, f.id, f.payload);
      const p = this.#parts.get(f.id);
      // A part given up on (or closed) may still send: nobody listens.
      if (!p) return;
      p.answered = true;
      p.lastAt = this.#heard;
      switch (f.kind) {
        case KIND.REPLIES: {
          const { units, message } = readReplies(f.payload);
          const { value, groups } = unpackMessage(message);
          const replies = value as ShardReply[];
          units.forEach((k, n) => {
            const reply = replies[n]!;
            if (reply.status === 'done') reply.files = groups[n]!;
            p.handlers.reply(k, reply);
          });
          return;
        }
        case KIND.PARTIAL: {
          const { value, groups } = unpackMessage(readMessage(f.payload, 4));
          const partial = value as PartialReply;
          partial.files = groups[0]!;
          p.handlers.partial(f.payload.readUInt32LE(0), partial);
          return;
        }
        case KIND.END:
          this.#forget(f.id);
          return p.handlers.ended();
        case KIND.ERROR:
          this.#forget(f.id);
          return p.handlers.ended(`${this.url}: ${f.payload.toString('utf8')}`);
        case KIND.ALIVE:
          return;
        default:
          throw new Error(`unknown frame kind ${f.kind}`);
      }
    } catch (err) {
      this.close(`${this.url} sent a malformed frame (${(err as Error).message})`);
    }
  }

  #reshaped(kind: number, id: number, payload: Buffer): void {
    const r = this.#reshapes.get(id);
    if (!r) return;
    clearTimeout(r.timer);
    this.#reshapes.delete(id);
    if (kind === KIND.UNSHAPED) return r.reject(new Error(`${this.url}: ${payload.toString('utf8')}`));
    try {
      r.resolve(unpackMessage(readMessage(payload, 0)).groups[0]![0]!);
    } catch (err) {
      r.reject(new Error(`${this.url} sent a malformed file (${(err as Error).message})`));
    }
  }
}

const NO_HEAD = new Uint8Array(0);

function controlFrame(id: number, action: Action): Uint8Array {
  return frame(KIND.CONTROL, id, Uint8Array.of(ACTION[action]));
}
