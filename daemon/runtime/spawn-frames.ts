// The frames between a process and its spawner (spawner.ts, spawner-child.ts), over the
// spawner's stdin and stdout. A frame is a 9-byte head, then its payload:
//
//   u32 payload length (little-endian) | u8 kind | u32 child id (little-endian) | payload
//
// To the spawner: START (payload: JSON of SpawnRequest), STDIN (bytes for the child's
// stdin), STDIN_END (none), KILL (the signal's name). From it: STDOUT and STDERR (the
// child's bytes), EXIT (JSON {code, signal}), FAILED (JSON {message}: it could not start).

export const HEAD = 9;

export const Kind = {
  START: 1,
  STDIN: 2,
  STDIN_END: 3,
  KILL: 4,
  STDOUT: 11,
  STDERR: 12,
  EXIT: 13,
  FAILED: 14,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export interface SpawnRequest {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export function frame(kind: Kind, id: number, payload: Uint8Array | string = ''): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const out = Buffer.allocUnsafe(HEAD + body.length);
  out.writeUInt32LE(body.length, 0);
  out.writeUInt8(kind, 4);
  out.writeUInt32LE(id, 5);
  out.set(body, HEAD);
  return out;
}

/** Cuts a byte stream into frames: feed it chunks, it calls `onFrame` for each whole one. */
export class FrameReader {
  #pending: Buffer[] = [];
  #size = 0;

  constructor(private readonly onFrame: (kind: Kind, id: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.#pending.push(chunk);
    this.#size += chunk.length;
    if (this.#size < HEAD) return;
    let buf = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#size);
    let at = 0;
    while (buf.length - at >= HEAD) {
      const len = buf.readUInt32LE(at);
      if (buf.length - at < HEAD + len) break;
      this.onFrame(buf.readUInt8(at + 4) as Kind, buf.readUInt32LE(at + 5), buf.subarray(at + HEAD, at + HEAD + len));
      at += HEAD + len;
    }
    buf = buf.subarray(at);
    this.#pending = buf.length > 0 ? [buf] : [];
    this.#size = buf.length;
  }
}
