// Glob patterns cannot stall the daemon (docs/security-and-faults.md, row 1, with what was
// measured). Every glob dialect used to compile to a V8 regular expression, which
// backtracks: `**/` repeated, or `*a` repeated then `b` against a run of `a`s, took time
// exponential in the pattern on a deep path. Now they match through
// daemon/glob/matcher.ts, linear in the input. Here:
// - the pathological patterns of every dialect finish within a generous deadline, with the
//   right answer (run in a worker that is terminated on overrun, so the old matcher fails
//   this test rather than hanging it);
// - ordinary patterns get the same answers as the old regular expressions (a seeded
//   differential against test/faults/old-glob-regexps.ts);
// - runs of `**` and `*` collapse; the matcher stays right when its DFA cache gives up;
// - the glob tool's sliced filter yields to the event loop and stops at its budget.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterSliced } from '../../daemon/glob/sliced-filter.ts';
import { collapse, compileTokens, type GlobToken } from '../../daemon/glob/matcher.ts';
import { compileGlob, GlobError, MAX_GLOB_EXPANDED_LENGTH } from '../../daemon/mcp/glob.ts';
import { compileNameGlob, compilePathGlob, compileRefGlob } from '../../daemon/repos/glob.ts';
import { prng } from '../helpers/corpus.ts';
import { runCases, type GlobCase } from './glob-cases.ts';
import { oldMcpGlob, oldNameGlob, oldPathGlob, oldRefGlob } from './old-glob-regexps.ts';

/** Per case; the old matcher took from seconds to hours on each of these. */
const DEADLINE_MS = 2000;

const A63 = 'a'.repeat(63);
const STARS_A = `${'*a'.repeat(12)}b`;
const DEEP = `${Array.from({ length: 30 }, (_, i) => `dir${i}`).join('/')}/file.c`;

const CASES: GlobCase[] = [
  // The two patterns, in the glob tool's dialect.
  { name: 'tool: **/ x10 against a 31-segment path', dialect: 'tool', pattern: `${'**/'.repeat(10)}x.h`, input: DEEP, expected: false },
  { name: 'tool: **/ x10 that matches', dialect: 'tool', pattern: `${'**/'.repeat(10)}file.c`, input: DEEP, expected: true },
  { name: 'tool: **/ x40 and *', dialect: 'tool', pattern: `${'**/'.repeat(40)}*.h`, input: DEEP, expected: false },
  { name: 'tool: **/*/ x15', dialect: 'tool', pattern: `${'**/*/'.repeat(15)}x.h`, input: DEEP, expected: false },
  { name: 'tool: *a x12 + b against 63 a', dialect: 'tool', pattern: STARS_A, input: A63, expected: false },
  { name: 'tool: *a x12 + b that matches', dialect: 'tool', pattern: STARS_A, input: `${A63}b`, expected: true },
  { name: 'tool: *[a] x12 + b (classes)', dialect: 'tool', pattern: `${'*[a]'.repeat(12)}b`, input: A63, expected: false },
  { name: 'tool: *{a,?} x7 + b (128 brace expansions)', dialect: 'tool', pattern: `${'*{a,?}'.repeat(7)}b`, input: A63, expected: false },
  { name: 'tool: *[!b] x10 + b (negated classes)', dialect: 'tool', pattern: `${'*[!b]'.repeat(10)}b`, input: A63, expected: false },
  { name: 'tool: **/ then *a x12 + b', dialect: 'tool', pattern: `**/${STARS_A}`, input: `x/y/${A63}`, expected: false },
  // `branch:` and configured revisions (`*` crosses `/`).
  { name: 'ref: *a x12 + b against 63 a', dialect: 'ref', pattern: STARS_A, input: A63, expected: false },
  { name: 'ref: * x12 / separated', dialect: 'ref', pattern: `${'*/'.repeat(12)}b`, input: 'a/'.repeat(40), expected: false },
  { name: 'ref: *a*a*a matches', dialect: 'ref', pattern: '*a*a*a', input: A63, expected: true },
  // Repository-name globs (excludes), case-insensitive.
  { name: 'path: *a x12 + b against 63 A', dialect: 'path', pattern: STARS_A, input: A63.toUpperCase(), expected: false },
  { name: 'path: **/ x10 against a deep name', dialect: 'path', pattern: `${'**/'.repeat(10)}x`, input: DEEP, expected: false },
  { name: 'path: ** x10 + b', dialect: 'path', pattern: `${'**a'.repeat(10)}b`, input: 'a/'.repeat(40), expected: false },
  { name: 'exclude: filterRepos with **/ x10', dialect: 'exclude', pattern: `${'**/'.repeat(10)}x`, input: DEEP, expected: false },
  { name: 'exclude: filterRepos with *a x12 + b', dialect: 'exclude', pattern: STARS_A, input: `${A63}B`, expected: true },
  // A directory name of a local repository path.
  { name: 'name: *a x12 + b against 63 a', dialect: 'name', pattern: STARS_A, input: A63, expected: false },
];

test('pathological globs of every dialect finish, with the right answer', async (t) => {
  const timings = await runCases(CASES, DEADLINE_MS);
  for (const r of timings) {
    t.diagnostic(`${r.case.name}: ${r.ms.toFixed(2)} ms`);
    assert.equal(r.matched, r.case.expected, r.case.name);
  }
});

// ------------------------------------------------------------ same answers as before

type Dialect = { name: string; pieces: string[]; alphabet: string[]; now: (p: string) => { test(s: string): boolean }; old: (p: string) => RegExp };

// Characters where the dialects' old regular expressions and the matcher are documented
// to differ are left out: line terminators (the old `.` did not match them, `*` is
// documented as any run of characters) and, for the dialects compiled without the `u`
// flag, characters beyond the BMP (the old `?` matched half of one; now it is one
// character, as documented).
const DIALECTS: Dialect[] = [
  {
    name: 'tool',
    pieces: [
      'a',
      'b',
      '/',
      '.',
      '*',
      '**',
      '**/',
      '/**',
      '?',
      '[ab]',
      '[!a]',
      '[a-c]',
      '[]a]',
      '[a-]',
      '[\\]]',
      '{a,b}',
      '{,b/}',
      '{a,{b,c}d}',
      '\\*',
      '\\',
      '[',
      '{a}',
      'é',
      '😀',
      '-',
      '[z-a]',
    ],
    alphabet: ['a', 'b', 'c', 'd', '/', '.', '*', '[', ']', '{', '}', '-', 'é', '😀', ','],
    now: compileGlob,
    old: oldMcpGlob,
  },
  {
    name: 'ref',
    pieces: ['a', 'b', '/', '*', '**', '.', '?', '[a]', '{a,b}', '(', '+', 'é', '😀', '\\'],
    alphabet: ['a', 'b', '/', '.', '?', '[', ']', '(', '+', 'é', '😀', '\\'],
    now: compileRefGlob,
    old: oldRefGlob,
  },
  {
    name: 'path',
    pieces: ['a', 'B', '/', '*', '**', '**/', '?', '.', '+', 'É', 'é', 'ß', 'ſ', 'K', 'k', '\u212a', '[a]', '(', '$'],
    alphabet: ['a', 'A', 'b', 'B', '/', '.', '+', 'É', 'é', 'ß', 'SS', 'ſ', 's', 'S', 'K', 'k', '\u212a', '[', '(', '$'],
    now: compilePathGlob,
    old: oldPathGlob,
  },
  {
    name: 'name',
    pieces: ['a', 'b', '*', '**', '?', '.', '+', 'A', '[a]', '{', 'é'],
    alphabet: ['a', 'b', 'A', '.', '+', '[', '{', 'é', '-'],
    now: compileNameGlob,
    old: oldNameGlob,
  },
];

test('ordinary globs: the same answers as the regular expressions they replace', () => {
  for (const d of DIALECTS) {
    const rnd = prng(1234);
    let compared = 0;
    for (let n = 0; n < 3000; n++) {
      const pattern = Array.from({ length: 1 + rnd.int(6) }, () => rnd.pick(d.pieces)).join('');
      let now: { test(s: string): boolean } | undefined;
      let old: RegExp | undefined;
      let nowError: unknown;
      let oldError: unknown;
      try {
        now = d.now(pattern);
      } catch (err) {
        nowError = err;
      }
      try {
        old = d.old(pattern);
      } catch (err) {
        oldError = err;
      }
      assert.equal(
        nowError === undefined,
        oldError === undefined,
        `${d.name} ${JSON.stringify(pattern)}: refused by one only (${String(nowError ?? oldError)})`,
      );
      if (nowError !== undefined) {
        if (d.name === 'tool') assert.ok(nowError instanceof GlobError, `${JSON.stringify(pattern)}: ${String(nowError)}`);
        continue;
      }
      // Inputs: random strings, and strings built from the pattern's own text so that
      // matches are common rather than rare.
      const inputs = [pattern, pattern.replace(/\*/g, ''), pattern.replace(/[*?]/g, 'a')];
      for (let k = 0; k < 12; k++) inputs.push(Array.from({ length: rnd.int(9) }, () => rnd.pick(d.alphabet)).join(''));
      for (const input of inputs) {
        assert.equal(now!.test(input), old!.test(input), `${d.name} ${JSON.stringify(pattern)} on ${JSON.stringify(input)}`);
        compared++;
      }
    }
    assert.ok(compared > 30_000, `${d.name}: ${compared} comparisons`);
  }
});

test('the matcher gives up its DFA cache on patterns with too many states, and stays right', () => {
  // `*a` then 14 single characters: the live set remembers where the last 15 `a`s were,
  // 2^15 sets, so the cache fills, starts over twice and then plain NFA steps take over.
  const pattern = `**/*a${'?'.repeat(14)}`;
  const now = compileGlob(pattern);
  const old = oldMcpGlob(pattern);
  const rnd = prng(99);
  let matches = 0;
  for (let n = 0; n < 400; n++) {
    const path = Array.from({ length: 1 + rnd.int(3) }, () => Array.from({ length: 10 + rnd.int(60) }, () => (rnd.chance(0.5) ? 'a' : 'b')).join('')).join('/');
    const expected = old.test(path);
    if (expected) matches++;
    assert.equal(now.test(path), expected, path);
  }
  assert.ok(matches > 50 && matches < 350, `both answers are common: ${matches} of 400 match`);
});

test('runs of ** segments, of stars and of ** inside a segment collapse to one loop', () => {
  const segments: GlobToken = { kind: 'segments' };
  const dirs: GlobToken = { kind: 'dirs' };
  const star: GlobToken = { kind: 'star', slash: false };
  const any: GlobToken = { kind: 'star', slash: true };
  const x: GlobToken = { kind: 'char', cp: 0x78 };
  assert.deepEqual(collapse(Array(10).fill(segments).concat(x)), [segments, x]);
  assert.deepEqual(collapse(Array(10).fill(dirs).concat(x)), [dirs, x]);
  assert.deepEqual(collapse([star, star, x, star, any, star]), [star, x, any]);
  assert.deepEqual(collapse([segments, segments, any]), [any]);
  assert.deepEqual(collapse([any, dirs, star]), [any]);
  // Not collapsed: a star between two characters is not a run.
  assert.deepEqual(collapse([star, x, star]), [star, x, star]);
  // Every dialect compiles through it: repetitions cost nothing.
  assert.equal(compileGlob(`${'**/'.repeat(10)}x`).size, compileGlob('**/x').size);
  assert.equal(compileGlob(`a/****${'*'.repeat(20)}b`).size, compileGlob('a/*b').size);
  assert.equal(compileRefGlob(`${'*'.repeat(30)}x`).size, compileRefGlob('*x').size);
  assert.equal(compilePathGlob(`${'**/'.repeat(10)}x`).size, compilePathGlob('**/x').size);
  assert.equal(compilePathGlob('**/**/**').size, compilePathGlob('**').size);
  // The collapsed matcher answers as the uncollapsed pattern reads.
  const m = compileTokens('**/ x10 x', [Array(10).fill(segments).concat(x)]);
  assert.deepEqual(
    ['x', 'a/b/x', 'a/x/b', '/x', 'a//x'].map((p) => m.test(p)),
    [true, true, false, false, false],
  );
});

test('the glob tool refuses patterns whose braces expand past the bound', () => {
  // 2^8 expansions of ~16 characters: over the total bound though under the count bound.
  const wide = '{a,b}'.repeat(8) + 'x'.repeat(12);
  assert.ok(256 * 20 > MAX_GLOB_EXPANDED_LENGTH, `${MAX_GLOB_EXPANDED_LENGTH}`);
  assert.throws(
    () => compileGlob(wide),
    (err: unknown) => err instanceof GlobError && /expand to more than \d+ characters/.test(err.message),
  );
  assert.doesNotThrow(() => compileGlob('{a,b}'.repeat(8)));
  // Deeply nested braces: refused or compiled, quickly, either way.
  const t0 = performance.now();
  assert.throws(() => compileGlob(`${'{a,'.repeat(300)}b${'}'.repeat(300)}`), GlobError);
  assert.doesNotThrow(() => compileGlob(`${'{'.repeat(500)}a,b${'}'.repeat(500)}`));
  const ms = performance.now() - t0;
  assert.ok(ms < DEADLINE_MS, `nested braces took ${ms.toFixed(0)} ms`);
});

// ------------------------------------------------------------ the sliced filter

/** Spins for `ms` (a costly match). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('the sliced filter lets the event loop run between slices', async (t) => {
  let ticks = 0;
  let running = true;
  const tick = () => {
    ticks++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const items = Array.from({ length: 60 }, (_, i) => i);
  const t0 = performance.now();
  const r = await filterSliced(items, (i) => (spin(1), i % 3 === 0), { sliceMs: 5, totalMs: 10_000 });
  running = false;
  t.diagnostic(`60 items of 1 ms in ${(performance.now() - t0).toFixed(0)} ms; the event loop ran ${ticks} times meanwhile`);
  assert.deepEqual(r, { done: true, kept: items.filter((i) => i % 3 === 0) });
  // ~60 ms of work in 5 ms slices: about a dozen turns of the loop; none when unsliced.
  assert.ok(ticks >= 5, `the event loop ran ${ticks} times`);
});

test('the sliced filter stops at its budget, and when its signal fires', async () => {
  const items = Array.from({ length: 1000 }, (_, i) => i);
  const r = await filterSliced(items, () => (spin(1), true), { sliceMs: 5, totalMs: 40 });
  assert.equal(r.done, false);
  if (!r.done) {
    assert.ok(r.checked >= 1 && r.checked < 200, `checked ${r.checked}`);
    assert.equal(r.kept.length, r.checked);
    assert.ok(r.spentMs >= 40, `spent ${r.spentMs} ms`);
  }
  const stop = new AbortController();
  const aborted = filterSliced(items, () => (spin(1), true), { sliceMs: 5, totalMs: 10_000, signal: stop.signal });
  setImmediate(() => stop.abort());
  const a = await aborted;
  assert.equal(a.done, false);
  if (!a.done) assert.ok(a.checked < 100, `checked ${a.checked} after the abort`);
  // Nothing to do, or all of it within one slice: done at once.
  assert.deepEqual(await filterSliced([], () => true, { sliceMs: 5, totalMs: 0 }), { done: true, kept: [] });
  assert.deepEqual(await filterSliced([1, 2], (i) => i > 1, { sliceMs: 5, totalMs: 0 }), { done: true, kept: [2] });
});
