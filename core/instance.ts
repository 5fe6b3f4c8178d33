// The trawl WebAssembly core's instance (core/assembly/*.ts, built to
// core/build/trawl-core.wasm): the files of core/ beside this one are the only code that
// touches wasm memory, and they reach it through here.
//
// - The module is compiled and instantiated lazily and synchronously on first use, once
//   per thread: module-level state is per realm, so each worker thread gets its own
//   instance and its own memory.
// - The wasm side never allocates. Everything above the module's heap base is an arena
//   owned here (arena.ts: a first-fit list of 64-byte aligned blocks). Memory grows
//   (memory.grow) when a block does not fit, and the typed-array views are rebuilt after
//   each grow, because growing detaches the previous ArrayBuffer.
// - One "io" block is reused by every call for its inputs and outputs (grown on demand,
//   never shrunk). A builder (PostingsBuilder, WordsBuilder) owns further blocks until it
//   is finished or disposed.
// - Results are copied out (.slice()) so they stay valid after the next call.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { INSTALL_ROOT } from '../daemon/install-root.ts';
import { align, Arena, type Block } from './arena.ts';
import { REQUIRED_EXPORTS, type CoreExports, type WasmMemory } from './exports.ts';

const WASM_URL = pathToFileURL(join(INSTALL_ROOT, 'core/build/trawl-core.wasm'));
const NOT_BUILT = 'trawl core not built: run ./scripts/setup.sh (or npm run build:wasm)';
const PAGE = 65536;
const MAX_BYTES = 65536 * PAGE; // wasm32 limit: 4 GiB
/** Inputs this small go past the resident document instead of replacing it (Core.scratchWith). */
const SIDE_MAX = 4096;

// (Typed locally, as exports.ts says why.)
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  /** A trap (core/assembly/cscan.ts stops a scan with one). */
  RuntimeError: new (
    ...args: never[]
  ) => Error;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Whether `err` is a trap of the module (its `unreachable`, say), not a JavaScript error. */
export function isTrap(err: unknown): boolean {
  return err instanceof Wasm.RuntimeError;
}

/** The instance: its exports, views of its memory (rebuilt when it grows), its arena and io region. */
export class Core {
  readonly ex: CoreExports;
  readonly memory: WasmMemory;
  readonly arena: Arena;
  readonly seenBytes: number;
  u8: Uint8Array;
  u32: Uint32Array;
  readonly #io: Block;

  constructor(ex: CoreExports) {
    this.ex = ex;
    this.memory = ex.memory;
    this.u8 = new Uint8Array(this.memory.buffer);
    this.u32 = new Uint32Array(this.memory.buffer);
    this.seenBytes = ex.seenBytes() >>> 0;
    this.arena = new Arena(this, align(ex.heapBase() >>> 0));
    this.#io = this.arena.alloc(1 << 16);
  }

  /** Grows memory so that [0, end) is addressable, then refreshes the views. */
  ensureBytes(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    if (end > MAX_BYTES) throw new RangeError(`trawl core: needs ${end} bytes of wasm memory, more than 4 GiB`);
    // Grow by at least 1/8 of the current size so repeated small growths stay amortized.
    const pages = Math.min(Math.max(Math.ceil((end - have) / PAGE), Math.ceil(have / PAGE / 8)), MAX_BYTES / PAGE - have / PAGE);
    try {
      this.memory.grow(pages);
    } catch (err) {
      throw new RangeError(`trawl core: cannot grow wasm memory to ${have + pages * PAGE} bytes`, { cause: err });
    }
    this.u8 = new Uint8Array(this.memory.buffer);
    this.u32 = new Uint32Array(this.memory.buffer);
  }

  /**
   * The document whose bytes sit at the start of the io region since the last findLiteral
   * or locateLines call (the same object, so the same bytes: documents are read-only
   * views): another needle in it, or its lines, copy nothing. Any other use of the io
   * region forgets it, but a small input laid out past it (scratchWith).
   */
  resident: Uint8Array | null = null;
  /** How many bytes of `resident` are there (locateLines and a one-match findLiteral copy a prefix). */
  residentBytes = 0;

  /** The shared io region, grown to at least `size` bytes (contents not preserved past its first `keep` bytes). Returns its offset. */
  scratch(size: number, keep = 0): number {
    this.resident = null;
    if (size > this.#io.size) this.arena.resize(this.#io, Math.max(size, this.#io.size * 1.25), keep);
    return this.#io.off;
  }

  /**
   * The io region for a call whose first `n` bytes are `doc`'s first `n` bytes (the call's
   * other data at `n` + 16 and after), of which the first `upto` (default all) are copied
   * there unless they are there already: the region did not move since and nothing else
   * used it. A caller may copy a growing prefix call by call. Returns its offset.
   *
   * A small other input (up to SIDE_MAX bytes: a file's path, searched between calls on its
   * content) is laid out past the resident document, which stays resident: a search that
   * looks for a term in a file's content, then in its name, then locates the content's
   * lines copies the content once.
   */
  scratchWith(doc: Uint8Array, n: number, size: number, upto: number = n): number {
    const resident = this.resident;
    if (resident !== null && resident !== doc && n <= SIDE_MAX) {
      const kept = this.residentBytes;
      const off = align(kept + 16);
      const base = this.scratch(off + size, kept) + off;
      this.resident = resident;
      this.u8.set(doc.subarray(0, upto), base);
      return base;
    }
    const there = this.resident === doc && size <= this.#io.size ? this.residentBytes : 0;
    const base = this.scratch(size);
    // (The whole document without a view of it: a Buffer's subarray is a slow call.)
    if (there === 0 && upto === doc.length) this.u8.set(doc, base);
    else if (there < upto) this.u8.set(doc.subarray(there, upto), base + there);
    // The call lays out its other data from n + 16 on: only the first n bytes stay.
    this.resident = doc;
    this.residentBytes = Math.min(Math.max(there, upto), n);
    return base;
  }
}

let instance: Core | null = null;

/** This thread's instance, loaded on first use. */
export function core(): Core {
  if (instance === null) instance = load();
  return instance;
}

function load(): Core {
  let bytes: Buffer;
  try {
    bytes = readFileSync(WASM_URL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(NOT_BUILT);
    throw err;
  }
  const mod = new Wasm.Module(bytes);
  const inst = new Wasm.Instance(mod, {
    env: {
      abort(_msg: number, _file: number, line: number, col: number): never {
        throw new Error(`trawl core: wasm abort at ${line}:${col}`);
      },
    },
  });
  const ex = inst.exports;
  const missing = REQUIRED_EXPORTS.filter((name) => !(name in ex));
  if (missing.length > 0) throw new Error(`trawl core: ${WASM_URL.pathname} lacks exports ${missing.join(', ')}; rebuild it (npm run build:wasm)`);
  return new Core(ex as unknown as CoreExports);
}

/**
 * Lets this thread's wasm memory go where no block lies: `discard(memory, offset, length)`
 * is called for each such run of whole 64 KiB pages (a caller's madvise(MADV_DONTNEED):
 * memory cannot shrink, but its pages need not stay resident; they read as zeros after,
 * and nothing here assumes what a free region holds). A build thread does it between a
 * content build, whose posting lists are the largest thing it lays out, and a symbols
 * pass, which needs much less.
 * Returns the bytes let go.
 */
export function releaseFreeMemory(discard: (memory: Buffer, offset: number, length: number) => void): number {
  if (instance === null) return 0;
  const c = instance;
  c.resident = null;
  const memory = Buffer.from(c.u8.buffer, 0, c.u8.byteLength);
  let released = 0;
  for (const [off, len] of c.arena.freePages(c.u8.byteLength, PAGE)) {
    discard(memory, off, len);
    released += len;
  }
  return released;
}
