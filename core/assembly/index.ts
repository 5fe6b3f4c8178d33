// trawl core: WebAssembly entry point. Every export takes and returns plain numbers;
// buffers are passed as (pointer, length) into this instance's linear memory.
//
// Memory ownership: this module never allocates. Everything at and above heapBase() is
// managed by the TypeScript glue (core/*.ts; core/instance.ts owns the memory), which lays
// out the regions each call needs; the per-function comments say how big each region must
// be.

export { fold } from './fold';
export { distinctTrigrams, mergeIntoGroup, seenBytes } from './ngrams';
export { segmentMasks } from './segments';
export { countTrigrams, keysToIds, countDistinct, collectTrigrams, scatterDocs, encodeLists, decodeList, intersectEncoded } from './postings';
export { intersect, union } from './intersect';
export { findLiteral } from './verify';
export { docWords, groupWords, keptWordBytes, wordCountsBytes } from './words';
export { namesDedup, namesFold, namesSort, namesWrite } from './names';
export { findClassSequence } from './classes';
export { locateLines } from './lines';
export { shapeChunks } from './chunks';
export { xxh32, xxh32Begin, xxh32Update, xxh32End, xxh32Save, xxh32Restore } from './hash';
export { skipCBody } from './cbody';
export { cScan } from './cscan';

/** First byte the glue may use: everything below holds this module's static data. */
export function heapBase(): usize {
  return __heap_base;
}
