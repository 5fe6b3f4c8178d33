import { test } from 'node:test';
import assert from 'node:assert/strict';
import RE2 from 're2';
import { requiredSequenceOf } from '../../daemon/query/regex-sequence.ts';
import { parseForAnalysis } from '../../daemon/query/re2-syntax.ts';
import { lineLocalOf } from '../../daemon/query/regex-line-local.ts';
import { regexFlags } from '../../daemon/query/terms.ts';
import { prng } from '../helpers/corpus.ts';

/** The bytes of each class (4 words a class), ranges as "a-z", other bytes as \xNN. */
function describe(words: number[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 4) {
    const bytes: number[] = [];
    for (let b = 0; b < 0x80; b++) if ((words[i + (b >> 5)]! >>> (b & 31)) & 1) bytes.push(b);
    let s = '';
    for (let j = 0; j < bytes.length; ) {
      let e = j;
      while (e + 1 < bytes.length && bytes[e + 1] === bytes[e]! + 1) e++;
      const ch = (b: number): string => (b > 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`);
      s +=
        e - j >= 2
          ? `${ch(bytes[j]!)}-${ch(bytes[e]!)}`
          : bytes
              .slice(j, e + 1)
              .map(ch)
              .join('');
      j = e + 1;
    }
    out.push(s);
  }
  return out;
}

function sequence(pattern: string, ci: boolean): { classes: string[]; whole: boolean } | null {
  const ast = parseForAnalysis(pattern, { caseInsensitive: ci });
  const seq = requiredSequenceOf(ast, lineLocalOf(ast));
  return seq && { classes: describe(seq.classes), whole: seq.whole };
}

const D = '0-9';
const HEX = '0-9a-f';
const times = (s: string, n: number): string[] => new Array(n).fill(s);

// (a) Table: pattern, case-insensitive term, the classes, whether they are the whole pattern.
const TABLE: Array<[pattern: string, ci: boolean, expected: { classes: string[]; whole: boolean } | null]> = [
  ['\\d{10}', false, { classes: times(D, 10), whole: true }],
  ['[A-Z]{6}_[0-9]{2}', false, { classes: [...times('A-Z', 6), '_', D, D], whole: true }],
  ['0x[0-9a-f]{16}', false, { classes: ['0', 'x', ...times(HEX, 16)], whole: true }],
  // Longer than the core scans: the window that rules out most.
  ['0x[0-9a-f]{40}', false, { classes: ['0', 'x', ...times(HEX, 30)], whole: false }],
  // Assertions consume nothing but make the pattern more than its bytes.
  ['\\bfoo\\d{5}\\b', false, { classes: ['f', 'o', 'o', ...times(D, 5)], whole: false }],
  ['^\\d{8}$', false, { classes: times(D, 8), whole: false }],
  // Case folding: a folded class, and 'k' (which folds to U+212A, KELVIN SIGN) is no class.
  ['(?i)[a-f]{6}', false, { classes: times('A-Fa-f', 6), whole: true }],
  ['[a-f]{6}', true, { classes: times('A-Fa-f', 6), whole: true }],
  ['(?i)k\\d{8}', false, { classes: times(D, 8), whole: false }],
  // What matches several byte lengths ends a sequence: '.', negated classes, non-ASCII.
  ['.\\d{8}', false, { classes: times(D, 8), whole: false }],
  ['[^a]\\d{8}', false, { classes: times(D, 8), whole: false }],
  ['é\\d{8}', false, { classes: times(D, 8), whole: false }],
  ['\\pL\\d{8}', false, { classes: times(D, 8), whole: false }],
  // Repetitions and alternations around the runs.
  ['\\d{4}(-\\d{4})+', false, { classes: [...times(D, 4), '-', ...times(D, 4)], whole: false }],
  ['(ab|cd)\\d{6}', false, { classes: ['ac', 'bd', ...times(D, 6)], whole: false }],
  ['(ab|ad)\\d{6}', false, { classes: ['a', 'bd', ...times(D, 6)], whole: true }],
  ['(int|void) \\d{5}', false, { classes: ['io', 'in', 'dt', '\\x20', ...times(D, 5)], whole: false }],
  ['a+\\d{6}', false, { classes: ['a', ...times(D, 6)], whole: false }],
  ['a{0}\\d{3}', false, { classes: times(D, 3), whole: true }],
  ['\\d{7}|\\d{8}', false, { classes: times(D, 7), whole: false }],
  ['[ \\t]\\d{6}', false, { classes: ['\\x09\\x20', ...times(D, 6)], whole: true }],
  // A whole pattern is scanned however little it rules out; a part only when it rules out enough.
  ['\\w{3}', false, { classes: times('0-9A-Z_a-z', 3), whole: true }],
  ['\\w+', false, null],
  ['[a-z]+_[a-z]+', false, null],
  ['\\d{3}|\\d{4}', false, null],
  ['x*', false, null],
  ['(?s).\\d{3}', false, null],
];

test('required class sequences of RE2 patterns (table)', () => {
  for (const [pattern, ci, expected] of TABLE) assert.deepEqual(sequence(pattern, ci), expected, `${pattern}${ci ? ' (ci)' : ''}`);
});

/** Leftmost non-overlapping occurrences of the classes (4 words each) in buf, byte by byte. */
function occurrences(buf: Buffer, words: number[]): number[] {
  const k = words.length / 4;
  const has = (i: number, b: number): boolean => b < 0x80 && ((words[4 * i + (b >> 5)]! >>> (b & 31)) & 1) === 1;
  const out: number[] = [];
  for (let s = 0; s + k <= buf.length; ) {
    let ok = true;
    for (let i = 0; i < k && ok; i++) ok = has(i, buf[s + i]!);
    if (ok) {
      out.push(s);
      s += k;
    } else s++;
  }
  return out;
}

/** Whether buf[start, end) holds the classes in a row. */
function holds(buf: Buffer, start: number, end: number, words: number[]): boolean {
  return occurrencesAll(buf.subarray(start, end), words);
}
const occurrencesAll = (buf: Buffer, words: number[]): boolean => {
  const k = words.length / 4;
  for (let s = 0; s + k <= buf.length; s++) {
    let ok = true;
    for (let i = 0; i < k && ok; i++) {
      const b = buf[s + i]!;
      ok = b < 0x80 && ((words[4 * i + (b >> 5)]! >>> (b & 31)) & 1) === 1;
    }
    if (ok) return true;
  }
  return false;
};

// (b) Soundness: every match RE2 finds holds the sequence, and a whole sequence's
// occurrences are RE2's matches.
test('random patterns and texts: every match holds the sequence; a whole one is the matches', () => {
  const r = prng(20261125);
  const atoms = [
    '\\d',
    '[0-9]',
    '[a-f]',
    '[A-Z]',
    '_',
    'x',
    'K',
    'k',
    's',
    '[ks]',
    '\\w',
    '\\s',
    '[ \\t]',
    '.',
    '[^_]',
    'é',
    '\\b',
    '^',
    '$',
    '(?i:k)',
    '(?i:[a-c])',
  ];
  const piece = (): string => {
    const a = r.pick(atoms);
    switch (r.int(6)) {
      case 0:
        return `${a}{${1 + r.int(4)}}`;
      case 1:
        return `${a}{${r.int(3)},${2 + r.int(3)}}`;
      case 2:
        return `${a}+`;
      case 3:
        return `(${a}${r.pick(atoms)}|${r.pick(atoms)}${r.pick(atoms)})`;
      default:
        return a;
    }
  };
  const alphabet = ['0', '1', '9', 'a', 'f', 'A', 'Z', '_', 'x', 'k', 'K', 's', 'S', '\u212A', '\u017F', ' ', '\t', '\n', 'é', '-', 'q'];
  let checked = 0;
  let wholes = 0;
  for (let i = 0; i < 4000; i++) {
    const pattern = Array.from({ length: 1 + r.int(6) }, piece).join('');
    const ci = r.chance(0.3);
    const ast = parseForAnalysis(pattern, { caseInsensitive: ci });
    const seq = requiredSequenceOf(ast, lineLocalOf(ast));
    if (!seq) continue;
    const re = new RE2(pattern, regexFlags(!ci));
    for (let t = 0; t < 8; t++) {
      const buf = Buffer.from(Array.from({ length: r.int(60) }, () => r.pick(alphabet)).join(''));
      const matches: number[] = [];
      re.lastIndex = 0;
      for (let m = re.exec(buf); m !== null && matches.length < 200; m = re.exec(buf)) {
        const start = m.index;
        const end = start + (m[0] as unknown as Buffer).length;
        matches.push(start, end);
        if (end === start) re.lastIndex = start + 1;
      }
      for (let j = 0; j < matches.length; j += 2)
        assert.ok(
          holds(buf, matches[j]!, matches[j + 1]!, seq.classes),
          `${pattern}${ci ? ' (ci)' : ''}: match ${JSON.stringify(buf.subarray(matches[j]!, matches[j + 1]!).toString())} lacks ${describe(seq.classes).join(' ')}`,
        );
      if (seq.whole) {
        const expected: number[] = occurrences(buf, seq.classes).flatMap((s) => [s, s + seq.classes.length / 4]);
        assert.deepEqual(matches, expected, `${pattern}${ci ? ' (ci)' : ''} is its sequence, on ${JSON.stringify(buf.toString())}`);
      }
      checked++;
    }
    if (seq.whole) wholes++;
  }
  assert.ok(checked > 2000 && wholes > 50, `enough cases with a sequence (${checked} texts, ${wholes} whole patterns)`);
});
