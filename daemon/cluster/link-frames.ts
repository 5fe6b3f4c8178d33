// The messages of a node-to-node link (peer-link.ts dials it, link-server.ts serves it at
// internal-route.ts LINK_PATH):
// one WebSocket from a coordinating node to another node, carrying every part of every
// search the first asks of the second, so that asking a node costs one message each way
// and no HTTP request, header signature or connection of its own. Each binary WebSocket
// message is one frame:
//
//   u8 kind, u32 id (little-endian: the part's number, or a reshape's), then the kind's payload
//
// From the coordinator:
//   SEARCH     msgpack of PartRequest: start a part (its units, in the order the replies name them)
//   CONTROL    u8 action: 1 stop the part, 2 search the rest of its shards for definitions only
//   RESHAPE    [message] of one file with ReshapeRequest: shape it again
// From the node asked:
//   REPLIES    u32 n, u32 unit[n] (indices into the part's units), then [message] of n ShardReplies
//   PARTIAL    u32 unit, then [message] of one PartialReply (a stream's early files)
//   END        the part has answered every unit
//   ERROR      UTF-8 text: the part could not run (its unanswered units count as failed)
//   ALIVE      the part runs and has sent nothing for ALIVE_MS (again every ALIVE_MS)
//   RESHAPED   [message] of the file shaped again
//   UNSHAPED   UTF-8 text: why the file could not be shaped again
//
// [message]: zero bytes up to the next multiple of 8 from the frame's first byte, then a
// worker message (search/file-codec.ts). Its files are read through typed arrays over its
// buffer, which must be 8-aligned: the sender packs the message in place behind the frame's
// head (no copy), and the reader reads it where it lies when the WebSocket message is
// 8-aligned in its buffer (a message that came in several reads is a buffer of its own),
// else from a copy. Each copy of a search's files was memory V8 counts against its heap:
// on Linux at four nodes, three per file on each side made the coordinating node collect
// its whole heap every ~40 common-word searches (2026-11-26).

import { Packr } from 'msgpackr';
import type { TaskParams } from '../search/merge.ts';
import type { ShapeOptions } from '../search/file-json.ts';
import type { ShardUnit } from '../search/searcher.ts';

export const KIND = {
  SEARCH: 1,
  CONTROL: 2,
  RESHAPE: 3,
  REPLIES: 11,
  PARTIAL: 12,
  END: 13,
  ERROR: 14,
  ALIVE: 15,
  RESHAPED: 16,
  UNSHAPED: 17,
} as const;

export const ACTION = { stop: 1, definitionsOnly: 2 } as const;
export type Action = keyof typeof ACTION;

/** A shard of the cluster's index: the published file of a repository, and its generation. */
export type Unit = ShardUnit;

/** The body of SEARCH. */
export interface PartRequest {
  task: TaskParams;
  units: Unit[];
}

/** The value of RESHAPE's worker message (its one file is the file to shape). */
export interface ReshapeRequest {
  unit: Unit;
  shape: ShapeOptions;
  budget: number;
}

/** A reply of a unit that the asked node does not hold (its index moved on, or lost it). */
export const NOT_HELD = 'the node does not hold this shard';

/** How long a running part may go without a frame before the node says it is alive (the coordinator waits FIRST_ANSWER_MS between frames). */
export const ALIVE_MS = 500;
/** How long a node may take to send a part's first frame, or its next one (or a reshape's answer), before the part's unanswered units go to their next holders. */
export const FIRST_ANSWER_MS = 2000;

/** Request bodies between nodes (plain msgpack: no records shared beyond the search's own). */
export const bodies = new Packr({ useRecords: false });

const HEAD = 5;
const pad8 = (n: number): number => (n + 7) & ~7;

/** A frame of `kind` and `id` with `payload` (several pieces, copied into one message). */
export function frame(kind: number, id: number, ...payload: Uint8Array[]): Uint8Array {
  let length = HEAD;
  for (const p of payload) length += p.length;
  const out = Buffer.allocUnsafe(length);
  out[0] = kind;
  out.writeUInt32LE(id, 1);
  let at = HEAD;
  for (const p of payload) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A frame of `kind` and `id` with `head`, then a worker message that `pack` lays out after
 * `room` bytes of its buffer (file-codec.ts packMessage's `room`): [message] above.
 */
export function messageFrame(kind: number, id: number, head: Uint8Array, pack: (room: number) => Uint8Array<ArrayBuffer>): Uint8Array {
  const room = pad8(HEAD + head.length);
  const packed = pack(room);
  const out = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  out[0] = kind;
  out.writeUInt32LE(id, 1);
  out.set(head, HEAD);
  out.fill(0, HEAD + head.length, room);
  return out;
}

/** REPLIES' head: the units' indices. */
export function repliesHead(units: number[]): Uint8Array {
  const head = Buffer.allocUnsafe(4 + 4 * units.length);
  head.writeUInt32LE(units.length, 0);
  units.forEach((u, i) => head.writeUInt32LE(u, 4 + 4 * i));
  return head;
}

export const textFrame = (kind: number, id: number, text: string): Uint8Array => frame(kind, id, Buffer.from(text, 'utf8'));

/** A received frame's kind, id and payload (a view of `bytes`). Throws on a frame too short. */
export function readFrame(bytes: Uint8Array): { kind: number; id: number; payload: Buffer } {
  if (bytes.length < HEAD) throw new Error(`a link frame of ${bytes.length} bytes`);
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { kind: b[0]!, id: b.readUInt32LE(1), payload: b.subarray(HEAD) };
}

/** REPLIES' payload: the units and their worker message. */
export function readReplies(payload: Buffer): { units: number[]; message: Uint8Array } {
  if (payload.length < 4) throw new Error('a REPLIES frame without its count');
  const n = payload.readUInt32LE(0);
  if (payload.length < 4 + 4 * n) throw new Error(`a REPLIES frame of ${n} units in ${payload.length} bytes`);
  const units: number[] = [];
  for (let i = 0; i < n; i++) units.push(payload.readUInt32LE(4 + 4 * i));
  return { units, message: readMessage(payload, 4 + 4 * n) };
}

/**
 * The worker message of a frame's payload after its kind's head of `headLength` bytes
 * ([message] above): a view of the payload when it is 8-aligned, else a copy. Throws on a
 * payload too short.
 */
export function readMessage(payload: Buffer, headLength: number): Uint8Array {
  const start = pad8(HEAD + headLength) - HEAD;
  if (payload.length < start + 8) throw new Error(`a frame of ${payload.length + HEAD} bytes has no message after its head`);
  const message = payload.subarray(start);
  if (message.byteOffset % 8 === 0) return message;
  const copy = new Uint8Array(new ArrayBuffer(message.length));
  copy.set(message);
  return copy;
}
