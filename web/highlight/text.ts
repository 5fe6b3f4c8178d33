// Character helpers shared by the lexers (char codes, no regexes: they run per character).

export function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 12;
}

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

export function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Index of the first non-blank character in text[i, to), or `to`. */
export function skipBlanks(text: string, i: number, to: number): number {
  while (i < to && isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** Display width of the indentation text[from, first) with tabs every 8 columns. */
export function indentWidth(text: string, from: number, first: number): number {
  let w = 0;
  for (let i = from; i < first; i++) w = text.charCodeAt(i) === 9 ? (w & ~7) + 8 : w + 1;
  return w;
}

/** Whether text[i, to) is only blanks. */
export function restBlank(text: string, i: number, to: number): boolean {
  return skipBlanks(text, i, to) === to;
}

/**
 * End of a number starting at i (a digit, or '.' before a digit): 0x1F, 0b1010, 0o17,
 * 1_000, 1'000 (C++), 3.14, 1e-9, 0x1p-3, then any suffix of letters and digits (3.14f,
 * 10ULL, 1i64, 5n, 10px). `1..10` stops before the range dots.
 */
export function scanNumber(text: string, i: number, to: number): number {
  let j = i;
  if (text.charCodeAt(j) === 48 && j + 2 <= to) {
    const x = text.charCodeAt(j + 1) | 32;
    if (x === 120 || x === 98 || x === 111) {
      j += 2;
      while (j < to && (isHex(text.charCodeAt(j)) || text.charCodeAt(j) === 95)) j++;
      if (x === 120 && text.charCodeAt(j) === 46) {
        j++; // hex float 0x1.8p3
        while (j < to && isHex(text.charCodeAt(j))) j++;
      }
      if (x === 120 && (text.charCodeAt(j) | 32) === 112) j = exponent(text, j, to);
      return suffix(text, j, to);
    }
  }
  j = digits(text, j, to);
  if (j + 1 < to && text.charCodeAt(j) === 46 && isDigit(text.charCodeAt(j + 1))) j = digits(text, j + 1, to);
  if (j < to && (text.charCodeAt(j) | 32) === 101) j = exponent(text, j, to);
  return suffix(text, j, to);
}

function digits(text: string, j: number, to: number): number {
  while (j < to) {
    const c = text.charCodeAt(j);
    if (isDigit(c) || c === 95) j++;
    // C++14 digit separator: only between two digits, so 'a' after a number stays a char.
    else if (c === 39 && j + 1 < to && isDigit(text.charCodeAt(j + 1)) && isDigit(text.charCodeAt(j - 1))) j++;
    else break;
  }
  return j;
}

/** text[j] is e/E/p/P: the exponent if digits follow (optionally signed), else j unchanged. */
function exponent(text: string, j: number, to: number): number {
  let k = j + 1;
  const s = text.charCodeAt(k);
  if (s === 43 || s === 45) k++;
  return k < to && isDigit(text.charCodeAt(k)) ? digits(text, k, to) : j;
}

function suffix(text: string, j: number, to: number): number {
  while (j < to) {
    const c = text.charCodeAt(j);
    if (isAlpha(c) || isDigit(c) || c === 95) j++;
    else break;
  }
  return j;
}
