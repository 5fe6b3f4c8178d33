// The frames of a node-to-node response stream (a fanned-out search's replies as a node's
// shards answer): each frame is
//
//   u32 length (little-endian, of what follows), u8 kind, then the kind's payload:
//     REPLIES  u32 n, u32 shard[n] (the indices of the request's shard list), then a
//              worker message (search/file-codec.ts packMessage) of n ShardReplies
//     PARTIAL  u32 shard, then a worker message of one PartialReply (a stream's early files)
//     END      nothing: the node has answered every shard it was asked for
//     ERROR    UTF-8 text: the node could not run the search (its shards count as failed)
//
// A worker message's files are read through typed arrays over its buffer, which must start
// 8-aligned: the reader copies each message into a buffer of its own (one copy per frame;
// the bytes arrived in socket-sized pieces anyway).

export const FRAME = { REPLIES: 1, PARTIAL: 2, END: 3, ERROR: 4 } as const;

export type Frame =
  | { kind: typeof FRAME.REPLIES; shards: number[]; message: Uint8Array }
  | { kind: typeof FRAME.PARTIAL; shard: number; message: Uint8Array }
  | { kind: typeof FRAME.END }
  | { kind: typeof FRAME.ERROR; error: string };

/** A frame as bytes (several parts, written together). */
export function encodeFrame(frame: Frame): Uint8Array[] {
  let head: Buffer;
  let tail: Uint8Array | undefined;
  switch (frame.kind) {
    case FRAME.REPLIES:
      head = Buffer.allocUnsafe(4 + 1 + 4 + 4 * frame.shards.length);
      head.writeUInt32LE(1 + 4 + 4 * frame.shards.length + frame.message.length, 0);
      head[4] = frame.kind;
      head.writeUInt32LE(frame.shards.length, 5);
      frame.shards.forEach((s, i) => head.writeUInt32LE(s, 9 + 4 * i));
      tail = frame.message;
      break;
    case FRAME.PARTIAL:
      head = Buffer.allocUnsafe(4 + 1 + 4);
      head.writeUInt32LE(1 + 4 + frame.message.length, 0);
      head[4] = frame.kind;
      head.writeUInt32LE(frame.shard, 5);
      tail = frame.message;
      break;
    case FRAME.END:
      head = Buffer.allocUnsafe(5);
      head.writeUInt32LE(1, 0);
      head[4] = frame.kind;
      break;
    case FRAME.ERROR: {
      const text = Buffer.from(frame.error, 'utf8');
      head = Buffer.allocUnsafe(5);
      head.writeUInt32LE(1 + text.length, 0);
      head[4] = frame.kind;
      tail = text;
      break;
    }
  }
  return tail ? [head, tail] : [head];
}

/** Reads frames out of a byte stream given in pieces of any size. */
export class FrameReader {
  #pending: Buffer[] = [];
  #have = 0;

  /** The frames completed by `chunk`, in order. Throws on a malformed frame. */
  push(chunk: Buffer): Frame[] {
    this.#pending.push(chunk);
    this.#have += chunk.length;
    const out: Frame[] = [];
    for (;;) {
      if (this.#have < 4) break;
      const length = this.#peekLength();
      if (this.#have < 4 + length) break;
      const bytes = this.#take(4 + length);
      out.push(decode(bytes.subarray(4)));
    }
    return out;
  }

  /** Bytes of an unfinished frame (a stream that ends with some is cut short). */
  get leftover(): number {
    return this.#have;
  }

  #peekLength(): number {
    const first = this.#pending[0]!;
    if (first.length >= 4) return first.readUInt32LE(0);
    return Buffer.concat(this.#pending).readUInt32LE(0);
  }

  #take(n: number): Buffer {
    const joined = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
    const taken = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.#pending = rest.length > 0 ? [rest] : [];
    this.#have = rest.length;
    return taken;
  }
}

function decode(body: Buffer): Frame {
  if (body.length < 1) throw new Error('empty frame');
  const kind = body[0]!;
  switch (kind) {
    case FRAME.REPLIES: {
      const n = body.readUInt32LE(1);
      const shards: number[] = [];
      for (let i = 0; i < n; i++) shards.push(body.readUInt32LE(5 + 4 * i));
      return { kind, shards, message: aligned(body.subarray(5 + 4 * n)) };
    }
    case FRAME.PARTIAL:
      return { kind, shard: body.readUInt32LE(1), message: aligned(body.subarray(5)) };
    case FRAME.END:
      return { kind };
    case FRAME.ERROR:
      return { kind, error: body.toString('utf8', 1) };
    default:
      throw new Error(`unknown frame kind ${kind}`);
  }
}

/** A copy at offset 0 of a buffer of its own (file-codec.ts reads it through typed arrays). */
function aligned(bytes: Buffer): Uint8Array {
  const copy = new Uint8Array(new ArrayBuffer(bytes.length));
  copy.set(bytes);
  return copy;
}
