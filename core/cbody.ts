// C function bodies read by the core (core/assembly/cbody.ts), for the symbol scanner's
// JavaScript reference (test/helpers/c-definitions-oracle.ts).

import { align } from './arena.ts';
import { core } from './instance.ts';

/** Why CBodyReader.read stopped (core/assembly/cbody.ts). */
export const C_BODY_END = 0;
export const C_BODY_EOF = 1;
export const C_BODY_KEYWORD = 2;
export const C_BODY_DIRECTIVE = 3;

/**
 * Reads a C function body of one document by the rules of core/assembly/cbody.ts, stretch
 * by stretch: each read stops at the body's end, at a `struct`/`union`/`enum`, or at a
 * directive, which the caller reads before it reads on. The document is copied into the
 * core once and stays there while nothing else uses the core.
 */
export class CBodyReader {
  /** Where the last read stopped (see C_BODY_*). */
  pos = 0;
  /** Braces open in the body. */
  braces = 0;
  /** Only whitespace since the last newline. */
  bol = false;
  /** Lines the last read counted. */
  lines = 0;
  /** Change of the nesting depth (braces and parentheses) in the last read. */
  depth = 0;
  /** First byte of the keyword a C_BODY_KEYWORD read stopped after. */
  keywordAt = 0;

  constructor(private readonly doc: Uint8Array) {}

  /** Reads from `pos` with `braces` open and `bol`; returns why it stopped, the rest in the fields. */
  read(pos: number, braces: number, bol: boolean): number {
    const c = core();
    const n = this.doc.length;
    const stateOff = align(n + 16);
    const base = c.scratchWith(this.doc, n, stateOff + 32);
    const st = (base + stateOff) >>> 2;
    const u32 = c.u32;
    u32[st] = pos;
    u32[st + 1] = braces;
    u32[st + 2] = bol ? 1 : 0;
    const why = c.ex.skipCBody(base, n, base + stateOff);
    this.pos = u32[st]!;
    this.braces = u32[st + 1]!;
    this.bol = u32[st + 2] !== 0;
    this.lines = u32[st + 3]!;
    this.depth = u32[st + 4]! | 0;
    this.keywordAt = u32[st + 5]!;
    return why;
  }
}
