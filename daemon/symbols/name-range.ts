// Where a symbol's name is spelled in its file: the byte range a `sym:` match highlights.
// Computed at build time for the symbol index (index/symbol-index.ts) and by the oracle
// at search time (search/examine-doc.ts), so both use this one rule.

/** A byte of an identifier: ASCII letter, digit, underscore, or any non-ASCII byte. */
export function isWord(b: number | undefined): boolean {
  return b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b >= 0x80);
}

/** `nameStarts` value of a definition whose line does not spell its name. */
export const NO_NAME_START = 0xffffffff;

/**
 * Where a symbol's name is on its definition line: the first occurrence as a whole word,
 * else the first occurrence; null when the line does not contain it (ctags reports some
 * macro-generated definitions on lines that do not spell the name).
 */
export function symbolNameRange(content: Buffer, line: number, name: string): [number, number] | null {
  let start = 0;
  for (let l = 1; l < line; l++) {
    const nl = content.indexOf(10, start);
    if (nl === -1) return null;
    start = nl + 1;
  }
  return nameOnLine(content, start, name);
}

/**
 * symbolNameRange's start for each definition (NO_NAME_START when null), `names[i]` being
 * definition i's name as stored. One pass over the lines, whatever the order of `lines`.
 */
export function nameStarts(content: Buffer, lines: readonly number[], names: readonly string[], hints?: ReadonlyArray<number | undefined>): Uint32Array {
  const out = new Uint32Array(lines.length).fill(NO_NAME_START);
  // Where the parser read the name (c-definitions.ts): the rule's answer is the first
  // whole-word occurrence between the line's start and there, found without counting lines.
  // The others (no hint, or not the name there) by the rule, line by line.
  let rest: number[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const h = hints?.[i];
    if (h !== undefined) {
      const at = firstWholeWordBefore(content, h, names[i]!);
      if (at >= 0) {
        out[i] = at;
        continue;
      }
    }
    (rest ??= []).push(i);
  }
  if (rest === undefined) return out;
  rest.sort((a, b) => lines[a]! - lines[b]!);
  let line = 1;
  let start = 0; // byte offset of `line`, -1 past the end
  for (const i of rest) {
    const want = lines[i]!;
    // A plain loop: a call per line (indexOf) costs more than the bytes it skips.
    let p = start;
    while (line < want && p !== -1) {
      while (p < content.length && content[p] !== 10) p++;
      p = p < content.length ? p + 1 : -1;
      line++;
    }
    start = p;
    if (start === -1) break;
    const r = nameOnLine(content, start, names[i]!);
    if (r) out[i] = r[0];
  }
  return out;
}

function nameOnLine(content: Buffer, start: number, name: string): [number, number] | null {
  const nl = content.indexOf(10, start);
  const end = nl === -1 ? content.length : nl;
  const len = Buffer.byteLength(name, 'utf8');
  // Searched within the line: a name the line does not spell (a macro-made definition)
  // would otherwise be looked for through the rest of the file.
  const line = content.subarray(start, end);
  let first = -1;
  for (let i = line.indexOf(name, 0, 'utf8'); i !== -1; i = line.indexOf(name, i + 1, 'utf8')) {
    const at = start + i;
    if (first === -1) first = at;
    if (!isWord(content[at - 1]) && !isWord(content[at + len])) return [at, at + len];
  }
  return first === -1 ? null : [first, first + len];
}

/**
 * The first whole-word occurrence of the ASCII `name` on the line of `at`, where the bytes
 * are `name` as a whole word; -1 when they are not (or the name is not ASCII): the caller
 * then applies the rule line by line.
 */
function firstWholeWordBefore(content: Buffer, at: number, name: string): number {
  const len = name.length;
  if (at + len > content.length) return -1;
  for (let k = 0; k < len; k++) {
    const c = name.charCodeAt(k);
    if (c >= 0x80 || content[at + k] !== c) return -1;
  }
  return wholeWordStart(content, at, len);
}

/**
 * nameStarts' answer for a definition whose name is content[at, at + len) (ASCII, where a
 * scanner read it), or -1 when those bytes are not a whole word there (then the line rule
 * decides): the earliest whole-word occurrence of the name on the line, found in one pass
 * back to the line's start.
 */
export function wholeWordStart(content: Uint8Array, at: number, len: number): number {
  if (at + len > content.length || isWord(content[at - 1]) || isWord(content[at + len])) return -1;
  const c0 = content[at]!;
  let first = at;
  for (let p = at - 1; p >= 0; p--) {
    const b = content[p]!;
    if (b === 10) break;
    if (b !== c0 || isWord(content[p - 1]) || isWord(content[p + len])) continue;
    let k = 1;
    while (k < len && content[p + k] === content[at + k]) k++;
    if (k === len) first = p;
  }
  return first;
}
