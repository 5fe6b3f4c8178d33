// Where a symbol's name is spelled in its file: the byte range a `sym:` match highlights.
// Computed at build time for the symbol index (index/symbol-index.ts) and by the oracle
// at search time (search/shard-search.ts), so both use this one rule.

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
  return nameOnLine(content, start, Buffer.from(name, 'utf8'));
}

/**
 * symbolNameRange's start for each definition (NO_NAME_START when null), `names[i]` being
 * definition i's name as stored. One pass over the lines, whatever the order of `lines`.
 */
export function nameStarts(content: Buffer, lines: readonly number[], names: readonly Buffer[]): Uint32Array {
  const out = new Uint32Array(lines.length).fill(NO_NAME_START);
  const order = lines.map((_, i) => i).sort((a, b) => lines[a]! - lines[b]!);
  let line = 1;
  let start = 0; // byte offset of `line`, -1 past the end
  for (const i of order) {
    const want = lines[i]!;
    while (line < want && start !== -1) {
      const nl = content.indexOf(10, start);
      start = nl === -1 ? -1 : nl + 1;
      line++;
    }
    if (start === -1) break;
    const r = nameOnLine(content, start, names[i]!);
    if (r) out[i] = r[0];
  }
  return out;
}

function nameOnLine(content: Buffer, start: number, needle: Buffer): [number, number] | null {
  const nl = content.indexOf(10, start);
  const end = nl === -1 ? content.length : nl;
  let first = -1;
  for (let i = content.indexOf(needle, start); i !== -1 && i + needle.length <= end; i = content.indexOf(needle, i + 1)) {
    if (first === -1) first = i;
    if (!isWord(content[i - 1]) && !isWord(content[i + needle.length])) return [i, i + needle.length];
  }
  return first === -1 ? null : [first, first + needle.length];
}
