// The wasm memory above the module's static data, as the glue hands it out: the module
// never allocates, so every region a call needs is a block of this arena.

/** A region of wasm memory: [off, off + size), off and size multiples of 64. */
export interface Block {
  off: number;
  size: number;
}

/** The memory an arena lays its blocks in (the core instance's). */
export interface ArenaMemory {
  /** A view of the whole memory (replaced when it grows). */
  readonly u8: Uint8Array;
  /** Grows memory so that [0, end) is addressable. */
  ensureBytes(end: number): void;
}

/**
 * The blocks one call takes, freed together when it is done (`free`, in a finally), or one
 * early (`drop`): what a builder's finish and the name index lay out for a while.
 */
export class Taken {
  readonly #arena: Arena;
  readonly #blocks: Block[] = [];

  constructor(arena: Arena) {
    this.#arena = arena;
  }

  take(size: number): Block {
    const b = this.#arena.alloc(size);
    this.#blocks.push(b);
    return b;
  }

  /** Several blocks at once, all or none (a failure frees those taken). */
  all(sizes: readonly number[]): Block[] {
    const from = this.#blocks.length;
    try {
      return sizes.map((size) => this.take(size));
    } catch (err) {
      for (const b of this.#blocks.splice(from)) this.#arena.free(b);
      throw err;
    }
  }

  drop(b: Block): void {
    this.#blocks.splice(this.#blocks.indexOf(b), 1);
    this.#arena.free(b);
  }

  free(): void {
    for (const b of this.#blocks.splice(0)) this.#arena.free(b);
  }
}

/**
 * First-fit allocator over [base, memory end). Live blocks are kept sorted by offset; the
 * gaps between them are the free space, so freeing needs no coalescing. Blocks are
 * mutable records: resize() may move a block and updates it in place, so holders keep
 * one reference.
 */
export class Arena {
  readonly #blocks: Block[] = [];
  readonly #base: number;
  readonly #memory: ArenaMemory;

  constructor(c: ArenaMemory, base: number) {
    this.#memory = c;
    this.#base = base;
  }

  alloc(size: number): Block {
    const b: Block = { off: 0, size: align(Math.max(size, 64)) };
    const [off, idx] = this.#place(b.size);
    b.off = off;
    this.#blocks.splice(idx, 0, b);
    return b;
  }

  free(b: Block): void {
    const i = this.#blocks.indexOf(b);
    if (i >= 0) this.#blocks.splice(i, 1);
  }

  /** Makes b at least `size` bytes, preserving its first `keep` bytes (it may move). */
  resize(b: Block, size: number, keep: number): void {
    size = align(size);
    if (size <= b.size) return;
    const i = this.#blocks.indexOf(b);
    if (i < 0) throw new Error('trawl core: resize of a freed block');
    const nextOff = i + 1 < this.#blocks.length ? this.#blocks[i + 1]!.off : Infinity;
    if (b.off + size <= nextOff) {
      this.#memory.ensureBytes(b.off + size);
      b.size = size;
      return;
    }
    this.#blocks.splice(i, 1);
    let placed: [number, number];
    try {
      placed = this.#place(size);
    } catch (err) {
      this.#blocks.splice(i, 0, b);
      throw err;
    }
    const [off, idx] = placed;
    // The new place may overlap the old one (a gap that contained it); copyWithin has
    // memmove semantics.
    if (keep > 0 && off !== b.off) this.#memory.u8.copyWithin(off, b.off, b.off + keep);
    b.off = off;
    b.size = size;
    this.#blocks.splice(idx, 0, b);
  }

  /** The gaps between live blocks, and the room after the last, as [offset, length] of whole `page`s (a power of two). */
  freePages(end: number, page: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let from = this.#base;
    const gap = (a: number, b: number) => {
      const s = Math.ceil(a / page) * page;
      const e = Math.floor(b / page) * page;
      if (e > s) out.push([s, e - s]);
    };
    for (const b of this.#blocks) {
      gap(from, b.off);
      from = b.off + b.size;
    }
    gap(from, end);
    return out;
  }

  /** Finds room for `size` bytes: the first gap that fits, else after the last block. */
  #place(size: number): [number, number] {
    let prevEnd = this.#base;
    const blocks = this.#blocks;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i]!;
      if (b.off - prevEnd >= size) return [prevEnd, i];
      prevEnd = b.off + b.size;
    }
    this.#memory.ensureBytes(prevEnd + size);
    return [prevEnd, blocks.length];
  }
}

/** `x` rounded up to a multiple of 64 (a block's alignment). */
export function align(x: number): number {
  return Math.ceil(x / 64) * 64;
}
