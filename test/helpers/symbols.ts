// What the tests of trawl's symbol scanners (C, device trees, Kconfig) share: definitions
// written as table rows, the rows in the scanners' order, the check of a table against
// ctags, and random inputs that every scanner must read to the end.
import assert from 'node:assert/strict';
import { extractSymbols as ctagsSymbols, sortSymbolDefs, type SymbolDef } from '../../daemon/symbols/ctags.ts';

/**
 * A definition as a table row: "kind name line[-end] [parentKind:parent]". `anonymous`
 * matches the hashed part of anonymous scope names, written as `anonymousAs` (the hashes are
 * ours, not ctags').
 */
export function showDef(d: SymbolDef, anonymous?: RegExp, anonymousAs = ''): string {
  const range = d.endLine !== d.line ? `${d.line}-${d.endLine}` : `${d.line}`;
  const parentName = d.parent && anonymous ? d.parent.name.replace(anonymous, anonymousAs) : d.parent?.name;
  return `${d.kind} ${d.name} ${range}${d.parent ? ` ${d.parent.kind}:${parentName}` : ''}`;
}

/** A table row back as a definition (its name without spaces; the parent's may hold some). */
function parseRow(row: string): SymbolDef {
  const [kind, name, range, ...rest] = row.split(' ');
  const [line, end] = range!.split('-').map(Number);
  const d: SymbolDef = { kind: kind!, name: name!, line: line!, endLine: end ?? line! };
  const parent = rest.join(' ');
  if (parent) d.parent = { kind: parent.slice(0, parent.indexOf(':')), name: parent.slice(parent.indexOf(':') + 1) };
  return d;
}

/** Table rows in the order the scanners give them (symbols/ctags.ts sortSymbolDefs). */
export function inScannerOrder(rows: readonly string[], show: (d: SymbolDef) => string): string[] {
  return sortSymbolDefs(rows.map(parseRow)).map(show);
}

/** A table case: a source, the rows it must give, and why ctags gives something else, if it does. */
export interface ScannerCase {
  name: string;
  src: string;
  want: string[];
  /** Why ctags gives something else; absent: ctags gives exactly `want`. */
  differs?: string;
}

/**
 * Asks ctags for every case: where the table says the two agree, ctags gives what the
 * scanner gives; where it says they differ, ctags does give something else (or the table's
 * reason would be stale).
 */
export function checkAgainstCtags<C extends ScannerCase>(
  cases: readonly C[],
  pathOf: (c: C, i: number) => string,
  scan: (c: C) => string[],
  show: (d: SymbolDef) => string,
): void {
  const r = ctagsSymbols(cases.map((c, i) => ({ path: pathOf(c, i), content: Buffer.from(c.src) })));
  cases.forEach((c, i) => {
    const theirs = r.symbols[i]!.map(show);
    if (c.differs) assert.notDeepEqual(theirs, scan(c), `${c.name}: ctags agrees, though the table says ${c.differs}`);
    else assert.deepEqual(theirs, scan(c), `${c.name}\n${c.src}`);
  });
}

/**
 * `rounds` inputs from a seeded generator, alternately random bytes (up to `maxBytes`) and
 * up to `maxPieces` of `pieces` joined with or without spaces: what a scanner, which has no
 * time-out, must read to its end.
 */
export function* randomInputs(seed: number, pieces: readonly string[], rounds: number, maxBytes = 3000, maxPieces = 300): Generator<Buffer> {
  let s = seed;
  const rnd = (): number => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const b = Buffer.alloc(Math.floor(rnd() * maxBytes));
      for (let i = 0; i < b.length; i++) b[i] = Math.floor(rnd() * 256);
      yield b;
    } else {
      const parts = Array.from({ length: Math.floor(rnd() * maxPieces) }, () => pieces[Math.floor(rnd() * pieces.length)]!);
      yield Buffer.from(parts.join(rnd() < 0.5 ? ' ' : ''));
    }
  }
}
