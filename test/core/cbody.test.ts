// The C function body reader (core/assembly/cbody.ts, CBodyReader) against a byte-by-byte
// reference that spells its rules in plain JavaScript (the scanner's loop before the core
// took it): random bodies made of the pieces that matter (braces, parentheses, quotes and
// escapes, both comments, directives at and off a line's start, the three keywords and
// their look-alikes, numbers, non-ASCII identifiers, every kind of whitespace), cut short
// anywhere, read from any position with any state.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CBodyReader, C_BODY_DIRECTIVE, C_BODY_END, C_BODY_EOF, C_BODY_KEYWORD } from '../../core/index.ts';
import { seededRandom } from '../../bench/suite/stats.ts';

const identStart = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x24 || c >= 0x80;
const identPart = (c: number) => identStart(c) || (c >= 0x30 && c <= 0x39);

interface Read {
  why: number;
  pos: number;
  braces: number;
  bol: boolean;
  lines: number;
  depth: number;
  keywordAt?: number;
}

function reference(s: Uint8Array, from: number, bracesIn: number, bolIn: boolean): Read {
  const n = s.length;
  let i = from;
  let braces = bracesIn;
  let bol = bolIn;
  let lines = 0;
  let depth = 0;
  const out = (why: number, keywordAt?: number): Read => ({
    why,
    pos: why === C_BODY_EOF ? n : i,
    braces,
    bol,
    lines,
    depth,
    ...(keywordAt === undefined ? {} : { keywordAt }),
  });
  while (i < n) {
    const c = s[i]!;
    if (c === 10) {
      lines++;
      bol = true;
      i++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13) {
      i++;
      continue;
    }
    if (identStart(c)) {
      const a = i;
      while (i < n && identPart(s[i]!)) i++;
      bol = false;
      const word = Buffer.from(s.subarray(a, i)).toString('latin1');
      if (word === 'struct' || word === 'union' || word === 'enum') return out(C_BODY_KEYWORD, a);
      continue;
    }
    const atBol = bol;
    bol = bol && (c === 12 || c === 11);
    if (c === 0x7b) {
      braces++;
      depth++;
    } else if (c === 0x7d) {
      depth--;
      if (--braces === 0) {
        i++;
        return out(C_BODY_END);
      }
    } else if (c === 0x28) depth++;
    else if (c === 0x29) depth--;
    else if (c === 0x22 || c === 0x27) {
      let j = i + 1;
      while (j < n) {
        const q = s[j]!;
        if (q === c) {
          j++;
          break;
        }
        if (q === 0x5c) {
          if (j + 1 < n && s[j + 1] === 10) lines++;
          j += 2;
          continue;
        }
        if (q === 10) break;
        j++;
      }
      i = Math.min(j, n);
      continue;
    } else if (c === 0x2f && s[i + 1] === 0x2a) {
      const end = Buffer.from(s).indexOf('*/', i + 2);
      const stop = end === -1 ? n : end + 2;
      for (let k = i + 2; k < (end === -1 ? n : end); k++) if (s[k] === 10) lines++;
      i = stop;
      bol = atBol;
      continue;
    } else if (c === 0x2f && s[i + 1] === 0x2f) {
      while (i < n && s[i] !== 10) i++;
      continue;
    } else if (c === 0x23) {
      if (atBol) return out(C_BODY_DIRECTIVE);
    } else if (c >= 0x30 && c <= 0x39) {
      i++;
      while (i < n && (identPart(s[i]!) || s[i] === 0x2e)) i++;
      continue;
    }
    i++;
  }
  return out(C_BODY_EOF);
}

const PIECES = [
  '{',
  '}',
  '(',
  ')',
  ';',
  ' ',
  '\t',
  '\r',
  '\f',
  '\v',
  '\n',
  '\n',
  'x',
  'a_b$',
  'café',
  'é',
  '_9',
  '12',
  '1.5e+3',
  '0x1f',
  '.5',
  'struct',
  'union',
  'enum',
  'structs',
  'xstruct',
  'enum_',
  'unio',
  'Struct',
  'struct{',
  ' enum ',
  '"',
  "'",
  '"a\\"b"',
  "'\\''",
  '"\\\n"',
  '\\',
  '\\\n',
  '/*',
  '*/',
  '/* x\n y */',
  '//',
  '// c\n',
  '#',
  '#if x\n',
  '  #define Y 1\n',
  '/',
  '*',
  '@',
  '\u00ff',
];

test('the core reads a C body as the reference does, stretch after stretch, on random bodies', () => {
  const random = seededRandom(2026);
  let stops = 0;
  for (let round = 0; round < 3000; round++) {
    let text = '';
    const pieces = 1 + Math.floor(random() * (round % 3 === 0 ? 160 : 40));
    for (let k = 0; k < pieces; k++) text += PIECES[Math.floor(random() * PIECES.length)];
    const doc = Buffer.from(text, 'utf8');
    const cut = random() < 0.2 ? doc.subarray(0, Math.floor(random() * doc.length)) : doc;
    const reader = new CBodyReader(cut);
    // Read on after every stop, as the scanner does (it reads directives and keywords itself:
    // here it steps one byte past them).
    let pos = Math.floor(random() * 3);
    let braces = 1 + Math.floor(random() * 2);
    let bol = random() < 0.5;
    for (let step = 0; step < 50; step++) {
      const want = reference(cut, pos, braces, bol);
      const why = reader.read(pos, braces, bol);
      const got: Read = {
        why,
        pos: reader.pos,
        braces: reader.braces,
        bol: reader.bol,
        lines: reader.lines,
        depth: reader.depth,
        ...(why === C_BODY_KEYWORD ? { keywordAt: reader.keywordAt } : {}),
      };
      assert.deepEqual(got, want, `round ${round} step ${step} from ${pos}: ${JSON.stringify(cut.toString('latin1'))}`);
      stops++;
      if (why === C_BODY_END || why === C_BODY_EOF) break;
      pos = why === C_BODY_DIRECTIVE ? reader.pos + 1 : reader.pos;
      braces = reader.braces;
      bol = reader.bol;
    }
  }
  assert.ok(stops > 3000);
});

test('a body read in the core gives its end, its lines and the nesting it changed', () => {
  const doc = Buffer.from('{ int x = f(a, "}"); /* } */\n  struct s { int y; };\n#if 0\n}\n} tail');
  const reader = new CBodyReader(doc);
  assert.equal(reader.read(1, 1, false), C_BODY_KEYWORD);
  assert.equal(doc.toString('latin1', reader.keywordAt, reader.pos), 'struct');
  assert.equal(reader.lines, 1);
  assert.equal(reader.depth, 0);
  assert.equal(reader.read(reader.pos, reader.braces, reader.bol), C_BODY_DIRECTIVE);
  assert.equal(doc[reader.pos], 0x23);
  assert.equal(reader.lines, 1);
  assert.equal(reader.depth, 0); // the struct's `{` and `}`, read here in this test
  assert.equal(reader.braces, 1);
  assert.equal(reader.read(reader.pos + 1, reader.braces, reader.bol), C_BODY_END);
  assert.equal(doc.toString('latin1', reader.pos), '\n} tail');
  assert.equal(reader.braces, 0);
  assert.equal(reader.depth, -1);
});
