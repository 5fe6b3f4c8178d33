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
//   RESHAPE    a worker message (search/file-codec.ts) of one file with ReshapeRequest: shape it again
// From the node asked:
//   REPLIES    u32 n, u32 unit[n] (indices into the part's units), then a worker message of n ShardReplies
//   PARTIAL    u32 unit, then a worker message of one PartialReply (a stream's early files)
//   END        the part has answered every unit
//   ERROR      UTF-8 text: the part could not run (its unanswered units count as failed)
//   ALIVE      the part runs and has sent nothing for ALIVE_MS (again every ALIVE_MS)
//   RESHAPED   a worker message of the file shaped again
//   UNSHAPED   UTF-8 text: why the file could not be shaped again
//
// A worker message's files are read through typed arrays over its buffer, which must start
// 8-aligned: the reader copies each into a buffer of its own.

import { Packr } from 'msgpackr';
import type { TaskParams } from '../search/merge.ts';
import type { ShapeOptions } from '../search/shape-file.ts';

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

/** A shard of the cluster's index: the published file of a repository. */
export interface Unit {
  repoId: number;
  file: string;
}

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

/** REPLIES: the units' indices and a worker message of their replies. */
export function repliesFrame(id: number, units: number[], message: Uint8Array): Uint8Array {
  const head = Buffer.allocUnsafe(4 + 4 * units.length);
  head.writeUInt32LE(units.length, 0);
  units.forEach((u, i) => head.writeUInt32LE(u, 4 + 4 * i));
  return frame(KIND.REPLIES, id, head, message);
}

export const textFrame = (kind: number, id: number, text: string): Uint8Array => frame(kind, id, Buffer.from(text, 'utf8'));

/** A received frame's kind, id and payload (a view of `bytes`). Throws on a frame too short. */
export function readFrame(bytes: Uint8Array): { kind: number; id: number; payload: Buffer } {
  if (bytes.length < HEAD) throw new Error(`a link frame of ${bytes.length} bytes`);
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { kind: b[0]!, id: b.readUInt32LE(1), payload: b.subarray(HEAD) };
}

/** REPLIES' payload: the units and their worker message (copied, aligned). */
export function readReplies(payload: Buffer): { units: number[]; message: Uint8Array } {
  const n = payload.readUInt32LE(0);
  const units: number[] = [];
  for (let i = 0; i < n; i++) units.push(payload.readUInt32LE(4 + 4 * i));
  return { units, message: aligned(payload.subarray(4 + 4 * n)) };
}

/** A copy at offset 0 of a buffer of its own (file-codec.ts reads it through typed arrays). */
export function aligned(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(new ArrayBuffer(bytes.length));
  copy.set(bytes);
  return copy;
}
