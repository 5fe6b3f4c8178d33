// Definitions of a C file, found by a scanner of our own instead of ctags; the scanner
// itself is in the core (core/assembly/cscan.ts), this file names what it finds.
//
// Why: on Linux nearly all the indexed bytes are C, and ctags' C/C++ parser alone took
// longer than the whole content build. This scanner is several times faster (docs/design.md
// "Symbols" has the figures) and gives what ctags gives for C with our options (the kinds
// macro, function, struct, union, enum, enumerator, member, typedef, variable; the line of
// the name; the end line where ctags gives one; the enclosing struct, union or enum as
// parent), which a test checks against ctags itself on C written to trip it.
//
// It is a scanner, not a compiler: it knows comments, strings, preprocessor lines, and
// the shape of declarations (`specifiers declarator, declarator;`, `head(params) {body}`,
// `struct name {members} declarators;`, `enum name {A, B = 2}`), and nothing of types.
// Like ctags it:
// - skips `#if 0` blocks, and reads the next branch of an #if/#else when the one before it
//   ends at the brace and parenthesis depth where the #if began, but none of the later
//   ones otherwise (a function header written twice, once per branch, is read once).
//   Unlike ctags, which reads only the first branch inside braces, it does so inside a
//   struct too: members of either layout are definitions;
// - gives file-scoped definitions too (static functions and variables), no prototypes,
//   no extern declarations, no locals;
// - names an anonymous struct, union or enum `__anon` + a hash of the path + a counter,
//   used only as the parent of its members (ctags' hash differs; the shape is the same).
// A header (.h, which ctags reads as C++) that turns out to hold C++ (`class`, `namespace`,
// `template`, `operator`, `::`) or Objective-C (`@`) makes cDefinitions return undefined:
// the caller asks ctags then.

// The core reads C faster than the JavaScript scanner it was ported from (docs/design.md
// "Symbols"), which stays as its oracle (test/helpers/c-definitions-oracle.ts, which
// test/symbols/c-scan.test.ts holds it to, definition for definition, on random C and on
// the test table).

import { C_KINDS, scanC, type CScan } from '../../core/index.ts';
import type { SymbolDef } from './ctags.ts';
import { bufferView } from '../runtime/buffer-view.ts';

/** Whether cDefinitions reads files with this path: C sources and headers. */
export function isCPath(path: string): boolean {
  const n = path.length;
  return n > 2 && path.charCodeAt(n - 2) === 0x2e /* . */ && (path.charCodeAt(n - 1) === 0x63 /* c */ || path.charCodeAt(n - 1) === 0x68) /* h */;
}

/** FNV-1a of a path's UTF-16 code units. */
function pathFnv(path: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The part of an anonymous scope's name that says which file it is in (8 hex digits, FNV-1a
 * of the path): ctags puts a hash of the file there too, of its own.
 */
export function pathHash(path: string): string {
  return pathFnv(path).toString(16).padStart(8, '0');
}

/** The scan of a C file (core/index.ts CScan), or undefined when a header holds C++ or Objective-C (or nests too deep). */
export function scanCFile(path: string, content: Uint8Array): CScan | undefined {
  return scanC(content, path.endsWith('.h'), pathFnv(path));
}

/** A name as a string: its bytes as UTF-8 when it has a byte above 0x7f, else one char per byte. */
function decodeName(bytes: Buffer, off: number, len: number): string {
  const end = off + len;
  for (let i = off; i < end; i++) if (bytes[i]! >= 0x80) return bytes.toString('utf8', off, end);
  return bytes.toString('latin1', off, end);
}

/**
 * The definitions of a C file (unsorted), or undefined when a header holds C++ or
 * Objective-C. Never throws on malformed C: it reads what it can.
 */
export function cDefinitions(path: string, content: Uint8Array): SymbolDef[] | undefined {
  const scan = scanCFile(path, content);
  return scan && scanDefs(scan, content);
}

/** A scan's definitions as objects (in the scanner's order). */
export function scanDefs(scan: CScan, content: Uint8Array): SymbolDef[] {
  const text = bufferView(content);
  const names = bufferView(scan.names);
  const { defs: d, parents: p } = scan;
  // One object per scope, shared by the definitions it holds (SymbolDef.parent).
  const parents: Array<{ name: string; kind: string }> = [];
  for (let j = 0; j < p.length; j += 4) parents.push({ name: decodeName(p[j]! & 0x100 ? names : text, p[j + 1]!, p[j + 2]!), kind: C_KINDS[p[j]! & 0xff]! });
  const out = new Array<SymbolDef>(scan.count);
  for (let i = 0; i < scan.count; i++) {
    const w = i * 8;
    const def: SymbolDef = {
      name: decodeName(d[w]! & 0x100 ? names : text, d[w + 1]!, d[w + 2]!),
      kind: C_KINDS[d[w]! & 0xff]!,
      line: d[w + 3]!,
      endLine: d[w + 4]!,
      at: d[w + 5]!,
    };
    const parent = d[w + 6]! | 0;
    if (parent >= 0) def.parent = parents[parent]!;
    out[i] = def;
  }
  return out;
}
