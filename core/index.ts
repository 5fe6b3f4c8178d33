// The TypeScript face of the trawl WebAssembly core (core/assembly/*.ts, built to
// core/build/trawl-core.wasm): what the rest of trawl imports. Each file beside this one
// drives one part of the core, as core/assembly/ is split; instance.ts owns the module
// and its memory (how, and why, is said there).

export { releaseFreeMemory } from './instance.ts';
export { REQUIRED_EXPORTS } from './exports.ts';
export { foldBytes, trigramId } from './fold.ts';
export { PostingsBuilder } from './postings-builder.ts';
export type { SegmentMasks, SegmentOptions } from './segments.ts';
export { ANY_ID, decodePostings, intersectPostings, MalformedPostings, type EncodedList } from './postings.ts';
export { holdsSorted, indexOfSorted, intersectSorted, unionSorted } from './intersect.ts';
export { WordsBuilder } from './words.ts';
export { encodeNameIndex } from './names.ts';
export { C_KINDS, scanC, type CScan } from './cscan.ts';
export { C_BODY_DIRECTIVE, C_BODY_END, C_BODY_EOF, C_BODY_KEYWORD, CBodyReader } from './cbody.ts';
export { containsLiteral, findLiteral, probeOffsets } from './verify.ts';
export { shapeChunks, type CoreChunks } from './chunks.ts';
export { compileClassSequence, findClassSequence, type ClassSequence } from './classes.ts';
export { locateLines } from './lines.ts';
export { hash32, Hash32Stream } from './hash.ts';
