// Parser for RE2 regular-expression syntax, as the `re2` npm package (v1.24) accepts it.
//
// The package does not hand the pattern to RE2 verbatim: it first rewrites a few
// JavaScript-isms (\uXXXX, \u{...}, \cX, \p{Long_Name}, (?<name>, '/'). `translateNodeRe2`
// mirrors that rewrite exactly (quirks included: it is not aware of character classes), and
// `parseRe2` parses the result with RE2's own rules (re2/parse.cc): escapes, classes, POSIX
// and Perl groups, \p groups, inline flags scoped to the enclosing group, repetitions.
//
// The tree is meant for analysis, not matching: Unicode groups (\pL, \p{Greek}) are kept by
// name only, with their membership unknown. Every pattern RE2 accepts parses; patterns RE2
// rejects usually throw Re2SyntaxError, but the caller is expected to validate with RE2.

export type AssertKind = 'beginLine' | 'endLine' | 'beginText' | 'endText' | 'wordBoundary' | 'noWordBoundary';

/** Inclusive code point range. */
export type CodeRange = readonly [number, number];

export type ClassItem =
  /** Explicit character or range, e.g. `a`, `a-z`, `\x{263a}`. */
  | { kind: 'range'; lo: number; hi: number }
  /** Perl (\d \s \w, negated \D \S \W) or POSIX ([:alpha:], [:^alpha:]) group: ASCII ranges known exactly. */
  | { kind: 'group'; name: string; negated: boolean; ranges: readonly CodeRange[] }
  /** Unicode group (\pL, \p{Greek}, \PL, \p{^Greek}): membership not modelled. */
  | { kind: 'unicode'; name: string; negated: boolean };

export type Re2Node =
  | { type: 'empty' }
  | { type: 'literal'; cp: number; foldCase: boolean }
  /** A character class; a standalone \d or \pL is a class with one item. */
  | { type: 'class'; negated: boolean; items: ClassItem[]; foldCase: boolean }
  /** `.`: any character, except "\n" unless dotNL ((?s)). */
  | { type: 'dot'; dotNL: boolean }
  /** `\C`: any single byte. */
  | { type: 'anyByte' }
  | { type: 'assert'; kind: AssertKind }
  | { type: 'concat'; items: Re2Node[] }
  | { type: 'alternate'; items: Re2Node[] }
  /** max === -1: unbounded. */
  | { type: 'repeat'; sub: Re2Node; min: number; max: number; greedy: boolean }
  | { type: 'group'; sub: Re2Node; capture: boolean; name?: string }
  /** A construct not modelled: treated as matching any string (possibly empty). */
  | { type: 'opaque'; reason: string };

export interface Re2ParseOptions {
  /** Global case folding (RE2 `i` flag / case_sensitive=false). */
  foldCase?: boolean;
  /** `^`/`$` match at line boundaries (the `m` flag). Default true. */
  multiLine?: boolean;
  /** `.` matches "\n" (the `s` flag). Default false. */
  dotNL?: boolean;
}

export class Re2SyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'Re2SyntaxError';
  }
}

/** RE2's limit on {n,m} counts. */
const MAX_REPEAT = 1000;
/**
 * RE2's limit on nested groups: deeper is its error "expression nests too deeply". The
 * parser recurses once per group, so without the limit a long run of "(" would exhaust the
 * stack (a thrown RangeError, a 500) instead of being refused.
 */
const MAX_NESTING = 1000;
const MAX_RUNE = 0x10ffff;

const DIGIT: CodeRange[] = [[0x30, 0x39]];
const PERL_GROUPS: Record<string, CodeRange[]> = {
  d: DIGIT,
  s: [
    [0x09, 0x0a],
    [0x0c, 0x0d],
    [0x20, 0x20],
  ],
  w: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
};
const POSIX_GROUPS: Record<string, CodeRange[]> = {
  alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  ascii: [[0x00, 0x7f]],
  blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  digit: DIGIT,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  space: [
    [0x09, 0x0d],
    [0x20, 0x20],
  ],
  upper: [[0x41, 0x5a]],
  word: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
  xdigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
};

/** Long Unicode category names the re2 package rewrites to RE2's short ones. */
const LONG_CATEGORY_NAMES: Record<string, string> = {
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Cased_Letter: 'LC',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Letter: 'L',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Mark: 'M',
  Decimal_Number: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Number: 'N',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Punctuation: 'P',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Symbol: 'S',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Separator: 'Z',
  Control: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
  Other: 'C',
};

/** Replaces lone UTF-16 surrogates by U+FFFD, as the UTF-8 conversion of a JS string does. */
export function toWellFormed(s: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    } else if (!(c >= 0xdc00 && c <= 0xdfff)) {
      continue;
    }
    out += `${s.slice(last, i)}\uFFFD`;
    last = i + 1;
  }
  return last === 0 ? s : out + s.slice(last);
}

function isHexChar(c: string | undefined): boolean {
  return c !== undefined && /^[0-9A-Fa-f]$/.test(c);
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/**
 * The rewrite the re2 package applies to a string pattern before RE2 sees it
 * (node-re2 lib/pattern.cc translateRegExp), without the "(?m)" prefix it adds for the `m`
 * flag (pass multiLine to parseRe2 instead).
 */
export function translateNodeRe2(pattern: string): string {
  const src = toWellFormed(pattern);
  if (src.length === 0) return '(?:)';
  const size = src.length;
  let out = '';
  let i = 0;
  const charAt = (k: number): string => String.fromCodePoint(src.codePointAt(k)!);
  while (i < size) {
    const ch = src[i];
    if (ch === '\\' && i + 1 < size) {
      const next = src[i + 1];
      switch (next) {
        case '\\':
          out += '\\\\';
          i += 2;
          continue;
        case 'c': {
          const c2 = src[i + 2];
          if (i + 2 < size && c2 >= 'A' && c2 <= 'Z') {
            const code = c2.charCodeAt(0) - 0x40;
            out += `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
            i += 3;
            continue;
          }
          out += '\\c';
          i += 2;
          continue;
        }
        case 'u': {
          if (i + 2 < size) {
            const c2 = src[i + 2];
            if (isHexChar(c2)) {
              out += `\\x{${c2}`;
              i += 3;
              for (let j = 0; j < 3 && i < size; ++i, ++j) {
                if (!isHexChar(src[i])) break;
                out += src[i];
              }
              out += '}';
              continue;
            } else if (c2 === '{') {
              out += '\\x';
              i += 2;
              continue;
            }
          }
          out += '\\u';
          i += 2;
          continue;
        }
        case 'p':
        case 'P': {
          if (i + 2 < size && src[i + 2] === '{') {
            let j = i + 3;
            while (j < size && src[j] !== '}') ++j;
            if (j < size) {
              let name = src.slice(i + 3, j);
              if (Object.hasOwn(LONG_CATEGORY_NAMES, name)) name = LONG_CATEGORY_NAMES[name];
              else if (name.length > 7 && name.startsWith('Script=')) name = name.slice(7);
              else if (name.length > 3 && name.startsWith('sc=')) name = name.slice(3);
              out += `\\${next}${utf8Length(name) === 1 ? name : `{${name}}`}`;
              i = j + 1;
              continue;
            }
          }
          out += `\\${next}`;
          i += 2;
          continue;
        }
        default: {
          const c = charAt(i + 1);
          out += `\\${c}`;
          i += 1 + c.length;
          continue;
        }
      }
    } else if (ch === '/') {
      out += '\\/';
      i += 1;
      continue;
    } else if (ch === '(' && i + 2 < size && src[i + 1] === '?' && src[i + 2] === '<') {
      if (i + 3 >= size || (src[i + 3] !== '=' && src[i + 3] !== '!')) {
        out += '(?P<';
        i += 3;
        continue;
      }
    }
    const c = charAt(i);
    out += c;
    i += c.length;
  }
  return out;
}

interface Flags {
  foldCase: boolean;
  oneLine: boolean;
  dotNL: boolean;
  nonGreedy: boolean;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isAlnum = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const hexVal = (c: number): number => (isDigit(c) ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1);

class Parser {
  private readonly cps: number[];
  private pos = 0;
  private flags: Flags;
  private depth = 0;

  constructor(pattern: string, flags: Flags) {
    this.cps = Array.from(toWellFormed(pattern), (ch) => ch.codePointAt(0)!);
    this.flags = flags;
  }

  private fail(message: string): never {
    throw new Re2SyntaxError(message, this.pos);
  }

  private peek(offset = 0): number {
    const c = this.cps[this.pos + offset];
    return c === undefined ? -1 : c;
  }

  private startsWith(s: string): boolean {
    for (let k = 0; k < s.length; k++) if (this.peek(k) !== s.charCodeAt(k)) return false;
    return true;
  }

  parse(): Re2Node {
    const node = this.parseAlternation();
    if (this.pos < this.cps.length) this.fail('unexpected )');
    return node;
  }

  /** Parses up to an unmatched ')' or the end. Flags set by (?i) persist across '|'. */
  private parseAlternation(): Re2Node {
    const branches: Re2Node[] = [];
    let items: Re2Node[] = [];
    let lastWasRepeat = false;
    for (;;) {
      const c = this.peek();
      if (c === -1 || c === 0x29 /* ) */) break;
      if (c === 0x7c /* | */) {
        this.pos++;
        branches.push(makeConcat(items));
        items = [];
        lastWasRepeat = false;
        continue;
      }
      // Repetition operators.
      if (c === 0x2a || c === 0x2b || c === 0x3f) {
        this.pos++;
        const [min, max] = c === 0x2a ? [0, -1] : c === 0x2b ? [1, -1] : [0, 1];
        this.applyRepeat(items, min, max, lastWasRepeat);
        lastWasRepeat = true;
        continue;
      }
      if (c === 0x7b /* { */) {
        const rep = this.maybeRepetition();
        if (rep) {
          this.applyRepeat(items, rep[0], rep[1], lastWasRepeat);
          lastWasRepeat = true;
          continue;
        }
        this.pos++;
        items.push(this.literal(0x7b));
        lastWasRepeat = false;
        continue;
      }
      lastWasRepeat = false;
      if (c === 0x28 /* ( */) {
        if (++this.depth > MAX_NESTING) this.fail('expression nests too deeply');
        const g = this.parseGroup();
        this.depth--;
        if (g) items.push(g);
        continue;
      }
      this.parseAtom(items);
    }
    branches.push(makeConcat(items));
    return branches.length === 1 ? branches[0] : { type: 'alternate', items: branches };
  }

  private applyRepeat(items: Re2Node[], min: number, max: number, lastWasRepeat: boolean): void {
    let greedy = true;
    if (this.peek() === 0x3f) {
      this.pos++;
      greedy = false;
    }
    if (lastWasRepeat) this.fail('bad repetition operator');
    const sub = items.pop();
    if (!sub) this.fail('missing argument to repetition operator');
    if (min > MAX_REPEAT || max > MAX_REPEAT || (max !== -1 && max < min)) this.fail('bad repetition operator');
    items.push({ type: 'repeat', sub, min, max, greedy: this.flags.nonGreedy ? !greedy : greedy });
  }

  /** {n}, {n,}, {n,m} per RE2: no leading zeros; otherwise '{' is a literal. */
  private maybeRepetition(): [number, number] | null {
    let p = this.pos + 1;
    const readInt = (): number | null => {
      const c0 = this.cps[p];
      if (c0 === undefined || !isDigit(c0)) return null;
      if (c0 === 0x30 && this.cps[p + 1] !== undefined && isDigit(this.cps[p + 1])) return null;
      let n = 0;
      while (this.cps[p] !== undefined && isDigit(this.cps[p])) {
        if (n >= 100000000) return null;
        n = n * 10 + (this.cps[p] - 0x30);
        p++;
      }
      return n;
    };
    const lo = readInt();
    if (lo === null) return null;
    let hi = lo;
    if (this.cps[p] === 0x2c /* , */) {
      p++;
      if (this.cps[p] === 0x7d) hi = -1;
      else {
        const h = readInt();
        if (h === null) return null;
        hi = h;
      }
    }
    if (this.cps[p] !== 0x7d) return null;
    this.pos = p + 1;
    return [lo, hi];
  }

  /** '(' ... ')' or a flag setting like (?i). Returns null for a bare flag setting. */
  private parseGroup(): Re2Node | null {
    const saved = { ...this.flags };
    let capture = true;
    let name: string | undefined;
    if (this.peek(1) === 0x3f /* ? */) {
      if (this.startsWith('(?=') || this.startsWith('(?!') || this.startsWith('(?<=') || this.startsWith('(?<!')) {
        this.fail('look-around is not supported');
      }
      if (this.startsWith('(?P<') || this.startsWith('(?<')) {
        const begin = this.pos + (this.peek(2) === 0x50 ? 4 : 3);
        let end = begin;
        while (end < this.cps.length && this.cps[end] !== 0x3e /* > */) end++;
        if (end >= this.cps.length || end === begin) this.fail('invalid named capture group');
        name = String.fromCodePoint(...this.cps.slice(begin, end));
        this.pos = end + 1;
      } else {
        // Flags: (?flags) or (?flags:re)
        this.pos += 2;
        let negated = false;
        let sawFlags = false;
        const nf = { ...this.flags };
        for (;;) {
          const c = this.peek();
          this.pos++;
          if (c === 0x69 /* i */) {
            sawFlags = true;
            nf.foldCase = !negated;
          } else if (c === 0x6d /* m */) {
            sawFlags = true;
            nf.oneLine = negated;
          } else if (c === 0x73 /* s */) {
            sawFlags = true;
            nf.dotNL = !negated;
          } else if (c === 0x55 /* U */) {
            sawFlags = true;
            nf.nonGreedy = !negated;
          } else if (c === 0x2d /* - */) {
            if (negated) this.fail('bad flags');
            negated = true;
            sawFlags = false;
          } else if (c === 0x3a /* : */ || c === 0x29 /* ) */) {
            if (negated && !sawFlags) this.fail('bad flags');
            if (c === 0x29) {
              // Flag setting: lasts until the end of the enclosing group.
              this.flags = nf;
              return null;
            }
            capture = false;
            this.flags = nf;
            break;
          } else {
            this.fail('bad perl operator');
          }
        }
      }
    } else {
      this.pos++;
    }
    const sub = this.parseAlternation();
    if (this.peek() !== 0x29) this.fail('missing )');
    this.pos++;
    this.flags = saved;
    const node: Re2Node = { type: 'group', sub, capture };
    if (name !== undefined) node.name = name;
    return node;
  }

  private literal(cp: number): Re2Node {
    return { type: 'literal', cp, foldCase: this.flags.foldCase };
  }

  private parseAtom(items: Re2Node[]): void {
    const c = this.peek();
    switch (c) {
      case 0x5e /* ^ */:
        this.pos++;
        items.push({ type: 'assert', kind: this.flags.oneLine ? 'beginText' : 'beginLine' });
        return;
      case 0x24 /* $ */:
        this.pos++;
        items.push({ type: 'assert', kind: this.flags.oneLine ? 'endText' : 'endLine' });
        return;
      case 0x2e /* . */:
        this.pos++;
        items.push({ type: 'dot', dotNL: this.flags.dotNL });
        return;
      case 0x5b /* [ */:
        items.push(this.parseClass());
        return;
      case 0x5c /* \ */:
        this.parseBackslash(items);
        return;
      default:
        this.pos++;
        items.push(this.literal(c));
    }
  }

  private parseBackslash(items: Re2Node[]): void {
    const n = this.peek(1);
    switch (n) {
      case 0x62 /* b */:
        this.pos += 2;
        items.push({ type: 'assert', kind: 'wordBoundary' });
        return;
      case 0x42 /* B */:
        this.pos += 2;
        items.push({ type: 'assert', kind: 'noWordBoundary' });
        return;
      case 0x41 /* A */:
        this.pos += 2;
        items.push({ type: 'assert', kind: 'beginText' });
        return;
      case 0x7a /* z */:
        this.pos += 2;
        items.push({ type: 'assert', kind: 'endText' });
        return;
      case 0x43 /* C */:
        this.pos += 2;
        items.push({ type: 'anyByte' });
        return;
      case 0x51 /* Q */:
        {
          this.pos += 2;
          while (this.pos < this.cps.length) {
            if (this.peek() === 0x5c && this.peek(1) === 0x45 /* \E */) {
              this.pos += 2;
              break;
            }
            items.push(this.literal(this.cps[this.pos++]));
          }
          return;
        }
      case 0x70 /* p */:
      case 0x50 /* P */:
        items.push({ type: 'class', negated: false, items: [this.parseUnicodeGroup()], foldCase: this.flags.foldCase });
        return;
    }
    const perl = this.maybePerlGroup();
    if (perl) {
      items.push({ type: 'class', negated: false, items: [perl], foldCase: this.flags.foldCase });
      return;
    }
    items.push(this.literal(this.parseEscape()));
  }

  private maybePerlGroup(): ClassItem | null {
    if (this.peek() !== 0x5c) return null;
    const n = this.peek(1);
    const name = n === -1 ? '' : String.fromCodePoint(n);
    const lower = name.toLowerCase();
    if (!(lower === 'd' || lower === 's' || lower === 'w')) return null;
    this.pos += 2;
    return { kind: 'group', name: `\\${name}`, negated: name !== lower, ranges: PERL_GROUPS[lower] };
  }

  /** \pX, \p{Name}, \PX, \p{^Name}; positioned at the backslash. */
  private parseUnicodeGroup(): ClassItem {
    let negated = this.peek(1) === 0x50;
    this.pos += 2;
    const c = this.peek();
    if (c === -1) this.fail('invalid character class range');
    let name: string;
    if (c !== 0x7b) {
      name = String.fromCodePoint(c);
      this.pos++;
    } else {
      let end = this.pos + 1;
      while (end < this.cps.length && this.cps[end] !== 0x7d) end++;
      if (end >= this.cps.length) this.fail('invalid character class range');
      name = String.fromCodePoint(...this.cps.slice(this.pos + 1, end));
      this.pos = end + 1;
    }
    if (name.startsWith('^')) {
      negated = !negated;
      name = name.slice(1);
    }
    if (name.length === 0) this.fail('invalid character class range');
    return { kind: 'unicode', name, negated };
  }

  /** An escape denoting one character (RE2 ParseEscape); positioned at the backslash. */
  private parseEscape(): number {
    this.pos++;
    if (this.pos >= this.cps.length) this.fail('trailing \\');
    let c = this.cps[this.pos++];
    switch (c) {
      case 0x31:
      case 0x32:
      case 0x33:
      case 0x34:
      case 0x35:
      case 0x36:
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: a digit 1-7 not followed by an octal digit is refused; followed by one, it is read as \0's are, below
      case 0x37: {
        const d = this.peek();
        if (d < 0x30 || d > 0x37) this.fail('invalid escape sequence (backreference)');
      }
      // falls through
      case 0x30: {
        let code = c - 0x30;
        for (let k = 0; k < 2; k++) {
          const d = this.peek();
          if (d < 0x30 || d > 0x37) break;
          code = code * 8 + (d - 0x30);
          this.pos++;
        }
        return code;
      }
      case 0x78 /* x */:
        {
          c = this.peek();
          if (c === -1) this.fail('invalid escape sequence');
          this.pos++;
          if (c === 0x7b) {
            let code = 0;
            let digits = 0;
            for (;;) {
              const d = this.peek();
              if (d === -1) this.fail('invalid escape sequence');
              this.pos++;
              const v = hexVal(d);
              if (v < 0) {
                if (d !== 0x7d || digits === 0) this.fail('invalid escape sequence');
                return code;
              }
              code = code * 16 + v;
              digits++;
              if (code > MAX_RUNE) this.fail('invalid escape sequence');
            }
          }
          const c1 = this.peek();
          if (c1 === -1) this.fail('invalid escape sequence');
          this.pos++;
          const v0 = hexVal(c);
          const v1 = hexVal(c1);
          if (v0 < 0 || v1 < 0) this.fail('invalid escape sequence');
          return v0 * 16 + v1;
        }
      case 0x6e:
        return 0x0a; // \n
      case 0x72:
        return 0x0d; // \r
      case 0x74:
        return 0x09; // \t
      case 0x61:
        return 0x07; // \a
      case 0x66:
        return 0x0c; // \f
      case 0x76:
        return 0x0b; // \v
      default:
        if (c < 0x80 && !isAlnum(c)) return c;
        this.pos--;
        this.fail('invalid escape sequence');
    }
  }

  private parseClass(): Re2Node {
    const start = this.pos;
    this.pos++; // '['
    let negated = false;
    if (this.peek() === 0x5e) {
      negated = true;
      this.pos++;
    }
    const items: ClassItem[] = [];
    let first = true;
    while (this.pos < this.cps.length && (this.peek() !== 0x5d || first)) {
      first = false;
      // [:alnum:] — only when a closing ":]" exists somewhere after.
      if (this.peek() === 0x5b && this.peek(1) === 0x3a) {
        let q = this.pos + 2;
        while (q + 1 < this.cps.length && !(this.cps[q] === 0x3a && this.cps[q + 1] === 0x5d)) q++;
        if (q + 1 < this.cps.length) {
          const full = String.fromCodePoint(...this.cps.slice(this.pos, q + 2));
          const inner = full.slice(2, -2);
          const neg = inner.startsWith('^');
          const gname = neg ? inner.slice(1) : inner;
          if (!Object.hasOwn(POSIX_GROUPS, gname)) this.fail('invalid character class range');
          items.push({ kind: 'group', name: full, negated: neg, ranges: POSIX_GROUPS[gname] });
          this.pos = q + 2;
          continue;
        }
      }
      if (this.peek() === 0x5c && (this.peek(1) === 0x70 || this.peek(1) === 0x50)) {
        items.push(this.parseUnicodeGroup());
        continue;
      }
      const perl = this.maybePerlGroup();
      if (perl) {
        items.push(perl);
        continue;
      }
      const lo = this.classChar();
      let hi = lo;
      if (this.peek() === 0x2d && this.peek(1) !== -1 && this.peek(1) !== 0x5d) {
        this.pos++;
        hi = this.classChar();
        if (hi < lo) this.fail('invalid character class range');
      }
      items.push({ kind: 'range', lo, hi });
    }
    if (this.pos >= this.cps.length) {
      this.pos = start;
      this.fail('missing ]');
    }
    this.pos++; // ']'
    return { type: 'class', negated, items, foldCase: this.flags.foldCase };
  }

  private classChar(): number {
    if (this.pos >= this.cps.length) this.fail('missing ]');
    if (this.peek() === 0x5c) return this.parseEscape();
    return this.cps[this.pos++];
  }
}

function makeConcat(items: Re2Node[]): Re2Node {
  if (items.length === 0) return { type: 'empty' };
  if (items.length === 1) return items[0];
  return { type: 'concat', items };
}

/**
 * Parses an RE2 pattern (already translated with translateNodeRe2 if it came from the re2
 * package's string API). Throws Re2SyntaxError on most invalid patterns.
 */
export function parseRe2(pattern: string, options: Re2ParseOptions = {}): Re2Node {
  const parser = new Parser(pattern, {
    foldCase: options.foldCase === true,
    oneLine: options.multiLine === false,
    dotNL: options.dotNL === true,
    nonGreedy: false,
  });
  return parser.parse();
}

/** Parses a pattern the way `new RE2(pattern, flags)` from the re2 package would see it. */
export function parseNodeRe2Pattern(pattern: string, options: Re2ParseOptions = {}): Re2Node {
  return parseRe2(translateNodeRe2(pattern), options);
}

/**
 * The pattern as the daemon's RE2 compiles it (terms.ts regexFlags: "gm", plus "i" when
 * caseInsensitive), for the prefilter analyses (regex-ngrams.ts, regex-required.ts); null
 * when this parser does not take it (RE2 decides; an analysis then claims nothing, which is
 * always sound).
 */
export function parseForAnalysis(pattern: string, options: { caseInsensitive: boolean }): Re2Node | null {
  try {
    return parseNodeRe2Pattern(pattern, { foldCase: options.caseInsensitive, multiLine: true });
  } catch (err) {
    if (err instanceof Re2SyntaxError) return null;
    throw err;
  }
}
