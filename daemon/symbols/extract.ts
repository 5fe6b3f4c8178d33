// Symbol definitions for indexed files: C sources and headers, device tree sources and
// Kconfig files by scanners of our own (c-definitions.ts, dts-definitions.ts,
// kconfig-definitions.ts: several times faster than ctags, on what is most of a kernel or an
// embedded tree), everything else, and any header that turns out to be C++, by
// universal-ctags (ctags.ts). One rule for the indexer and the
// outline endpoint, so the outline of an indexed file lists what find_definitions knows
// about it.

import { isCPath, scanCFile, scanDefs } from './c-definitions.ts';
import type { CScan } from '../../core/index.ts';
import { dtsDefinitions, isDtsPath } from './dts-definitions.ts';
import { isKconfigPath, kconfigDefinitions } from './kconfig-definitions.ts';
import {
  ctagsVersion,
  extractSymbols as ctagsSymbols,
  sortSymbolDefs,
  SYMBOL_MAX_FILE_BYTES,
  type SymbolDef,
  type SymbolOptions,
  type SymbolResult,
} from './ctags.ts';

/**
 * The version of these rules: 1 (absent from a shard's meta): ctags for every language;
 * 2: C by the scanner; 3: device tree sources by theirs; 4: Kconfig files by theirs.
 */
export const SYMBOL_RULES = 4;

/**
 * What a shard's definitions came from, kept in its meta (symbolExtraction): these rules'
 * version and ctags' own. A full rebuild reuses a previous index's definitions only when
 * they came from the same (symbols-pass.ts): an upgraded ctags, or new rules, extract again.
 */
export function symbolExtraction(): string {
  return `${SYMBOL_RULES}; ${ctagsVersion()}`;
}

/** Whether a scanner of ours reads files with this path (C, device tree and Kconfig files); ctags reads the rest. */
export function scannerReads(path: string): boolean {
  return isCPath(path) || isDtsPath(path) || isKconfigPath(path);
}

/**
 * What a scanner of ours gives for a file: the core's scan of a C file (CScan, records
 * rather than objects: symbol-sections.ts takes them as they are), the definitions of a
 * device tree or Kconfig file (sorted, without repeats), or undefined: not one of those,
 * a header that holds C++ (ask ctags), or empty or larger than `maxFileBytes` (ctags gives
 * those none either).
 */
export function scanned(path: string, content: Uint8Array, maxFileBytes = SYMBOL_MAX_FILE_BYTES): { scan: CScan } | { defs: SymbolDef[] } | undefined {
  if (content.byteLength === 0 || content.byteLength > maxFileBytes) return undefined;
  if (isCPath(path)) {
    const scan = scanCFile(path, content);
    return scan && { scan };
  }
  const defs = isDtsPath(path) ? dtsDefinitions(content) : isKconfigPath(path) ? kconfigDefinitions(path, content) : undefined;
  return defs && { defs: sortSymbolDefs(defs) };
}

/** scanned's definitions as objects (sorted, without repeats), or undefined (ctags). */
export function scannedSymbols(path: string, content: Uint8Array, maxFileBytes = SYMBOL_MAX_FILE_BYTES): SymbolDef[] | undefined {
  const s = scanned(path, content, maxFileBytes);
  if (!s) return undefined;
  return 'scan' in s ? sortSymbolDefs(scanDefs(s.scan, content)) : s.defs;
}

/** ctags.ts' extractSymbols, with C files read by the scanner; the same result shape and rules. */
export function extractSymbols(files: Array<{ path: string; content: Uint8Array }>, options: SymbolOptions = {}): SymbolResult {
  const maxFileBytes = options.maxFileBytes ?? SYMBOL_MAX_FILE_BYTES;
  const symbols: SymbolDef[][] = new Array<SymbolDef[]>(files.length);
  const rest: number[] = [];
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    const defs = scannedSymbols(f.path, f.content, maxFileBytes);
    if (defs) symbols[i] = defs;
    else rest.push(i);
  }
  if (rest.length === 0) return { symbols, failed: 0, timedOut: 0 };
  const r = ctagsSymbols(
    rest.map((i) => files[i]!),
    options,
  );
  rest.forEach((i, k) => (symbols[i] = r.symbols[k]!));
  return { symbols, failed: r.failed, timedOut: r.timedOut };
}
