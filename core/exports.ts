// What the TypeScript side requires of the WebAssembly module (core/assembly/index.ts
// exports these): the functions' signatures, and their names, which loading checks.
//
// The compiler options include no DOM library, which is where the WebAssembly typings
// live, so the few parts used here are typed locally.

/** The module's linear memory. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
/** The module's exports, as the glue calls them (pointers and lengths are numbers). */
export interface CoreExports {
  memory: WasmMemory;
  heapBase(): number;
  fold(src: number, n: number, dst: number): number;
  seenBytes(): number;
  distinctTrigrams(folded: number, n: number, seen: number, out: number, masks: number, limit: number): number;
  mergeIntoGroup(out: number, masks: number, start: number, at: number, cnt: number, seen: number): number;
  segmentMasks(folded: number, n: number, keys: number, cnt: number, rows: number, shift: number, width: number, out: number): void;
  countTrigrams(pairs: number, n: number, table: number): void;
  keysToIds(pairs: number, n: number): void;
  countDistinct(table: number): number;
  collectTrigrams(table: number, ids: number, counts: number): number;
  scatterDocs(pairs: number, masks: number, docCounts: number, numDocs: number, table: number, docs: number, follow: number): void;
  encodeLists(docs: number, counts: number, k: number, blob: number, offsets: number): number;
  decodeList(src: number, len: number, count: number, follow: number, want: number, out: number, maxId: number): number;
  intersectEncoded(acc: number, na: number, src: number, len: number, count: number, follow: number, want: number, out: number, maxId: number): number;
  intersect(a: number, na: number, b: number, nb: number, out: number): number;
  union(a: number, na: number, b: number, nb: number, out: number): number;
  findLiteral(hay: number, n: number, needle: number, m: number, ci: number, out: number, max: number, pa: number, pb: number): number;
  docWords(
    src: number,
    n: number,
    doc: number,
    table: number,
    mask: number,
    shift: number,
    gen: number,
    pairs: number,
    arena: number,
    state: number,
    hashBits: number,
  ): number;
  groupWords(
    pairs: number,
    n: number,
    sorted: number,
    counts: number,
    minDocs: number,
    arena: number,
    outWord: number,
    outCount: number,
    outDocs: number,
  ): number;
  keptWordBytes(sorted: number, outWord: number, k: number, arena: number, out: number, offs: number): number;
  wordCountsBytes(): number;
  namesDedup(
    bytes: number,
    start: number,
    length: number,
    d: number,
    table: number,
    mask: number,
    nameOf: number,
    rawStart: number,
    rawLength: number,
    state: number,
  ): void;
  namesFold(bytes: number, rawStart: number, rawLength: number, n: number, foldBytes: number, foldStart: number, foldLength: number): void;
  namesSort(kb: number, ks: number, kl: number, rb: number, rs: number, rl: number, n: number, order: number, stack: number): void;
  namesWrite(
    bytes: number,
    rawStart: number,
    rawLength: number,
    order: number,
    n: number,
    nameOf: number,
    d: number,
    rank: number,
    next: number,
    out: number,
    nameOffOf: number,
  ): number;
  findClassSequence(hay: number, n: number, prog: number, k: number, pa: number, pb: number, pc: number, out: number, max: number): number;
  locateLines(hay: number, n: number, offs: number, k: number, out: number): void;
  shapeChunks(
    hay: number,
    n: number,
    ranges: number,
    k: number,
    context: number,
    lines: number,
    spans: number,
    marks: number,
    out: number,
    state: number,
  ): number;
  xxh32(p: number, len: number, seed: number): number;
  xxh32Begin(seed: number): void;
  xxh32Update(p: number, len: number): void;
  xxh32End(tail: number, tailLen: number, totalLow: number, large: number, seed: number): number;
  xxh32Save(p: number): void;
  xxh32Restore(p: number): void;
  skipCBody(src: number, n: number, state: number): number;
  cScan(
    src: number,
    n: number,
    header: number,
    pathHash: number,
    defs: number,
    defsCap: number,
    parents: number,
    parentsCap: number,
    names: number,
    namesCap: number,
    tokens: number,
    tokensCap: number,
    conds: number,
    condsCap: number,
    state: number,
  ): number;
}

/** Names of the wasm exports the glue requires (for a test that asserts the module has them). */
export const REQUIRED_EXPORTS: readonly string[] = Object.freeze([
  'memory',
  'heapBase',
  'fold',
  'seenBytes',
  'distinctTrigrams',
  'mergeIntoGroup',
  'segmentMasks',
  'countTrigrams',
  'keysToIds',
  'countDistinct',
  'collectTrigrams',
  'scatterDocs',
  'encodeLists',
  'decodeList',
  'intersectEncoded',
  'intersect',
  'union',
  'findLiteral',
  'docWords',
  'groupWords',
  'keptWordBytes',
  'wordCountsBytes',
  'namesDedup',
  'namesFold',
  'namesSort',
  'namesWrite',
  'findClassSequence',
  'locateLines',
  'shapeChunks',
  'xxh32',
  'xxh32Begin',
  'xxh32Update',
  'xxh32End',
  'xxh32Save',
  'xxh32Restore',
  'skipCBody',
  'cScan',
]);
