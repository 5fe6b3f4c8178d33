// The one glob matcher of trawl: the one glob parser (syntax.ts) turns every glob (the glob
// tool's paths; `branch:` filters and configured revisions, repository-name excludes and
// local repository paths) into the tokens below, and it matches through here. A match
// costs O(input length × pattern size) in the worst case, whatever the pattern, and
// O(input length) for ordinary patterns.
//
// Why not a regular expression: V8's engine backtracks, and a glob is an easy way to write
// a backtracking bomb (`**/` ten times, `*a*a*a…b`): the compiled RegExp took time
// exponential in the pattern on a deep path, on the thread that serves every request
// (docs/security-and-faults.md, row 1, has what was measured).
//
// Why a hand-written automaton rather than RE2 (linear too, and a dependency): a glob's
// rules are about `/`, and here they are states rather than a second language to escape
// into: "a class never matches `/`" is one comparison, where RE2 (no lookahead) would need
// every class rewritten as ranges around `/`; `**/` is four instructions. No native call
// per input either (the glob tool tests every path of a repository, ~10^5 calls), and the
// linear bound is visible below rather than borrowed.
//
// How: the alternatives' tokens compile to a Thompson NFA (a few instructions per token,
// so the NFA is linear in the pattern). A match runs the NFA's *set* of live states over
// the input's code points: a step visits each instruction at most once, so no input can
// cost more than length × size. The sets met are cached as DFA states with their
// transitions (a lazy DFA, as RE2 does), so an ordinary pattern costs one map lookup per
// character; the cache is bounded and starts over when full, which costs time, never
// correctness.

/** One piece of a compiled glob. Classes and `'/'`-free pieces never match `/`. */
export type GlobToken =
  /** This code point (compared case-folded when the glob folds case). */
  | { kind: 'char'; cp: number }
  /** Any one character; `/` too only when `slash`. */
  | { kind: 'one'; slash: boolean }
  /** One character in (or, `negated`, not in) the inclusive ranges [lo0, hi0, lo1, hi1, …]; never `/`. */
  | { kind: 'class'; ranges: readonly number[]; negated: boolean }
  /** Any run of characters, empty included; `/` too only when `slash`. */
  | { kind: 'star'; slash: boolean }
  /** `(?:[^/]+/)*`: zero or more whole non-empty segments, each with its `/`. */
  | { kind: 'segments' }
  /** `(?:.*\/)?`: nothing, or any run of characters that ends with `/`. */
  | { kind: 'dirs' };

export interface GlobOptions {
  /** Compare `char` tokens case-insensitively (as JavaScript's `i` flag without `u` does). */
  foldCase?: boolean;
}

/** A compiled glob: `test` says whether the whole input matches. */
export interface GlobMatcher {
  readonly pattern: string;
  /** Instructions of the automaton: a character of input costs at most a visit of each. */
  readonly size: number;
  test(input: string): boolean;
}

const SLASH = 0x2f;

// Instructions. Consuming ones go to `out` on a matching character; SPLIT goes to both
// `out` and `out2` without consuming; MATCH accepts.
const CHAR = 0;
const ONE_NOSLASH = 1;
const ONE_ANY = 2;
const CLASS = 3;
const SPLIT = 4;
const MATCH = 5;

/**
 * What the DFA cache of one matcher may hold before it starts over, in cells of about 8
 * bytes (1 MiB): a state is its ASCII table and its set, a non-ASCII transition a few.
 */
const MAX_DFA_CELLS = 1 << 17;
/**
 * Cache restarts after which a matcher runs the plain NFA: its sets are too many to cache,
 * and a step costs less than interning a new state every character (as RE2 gives up its DFA).
 */
const MAX_RESETS = 2;

interface DState {
  /** Sorted instruction indices: consuming instructions and MATCH, closed over SPLIT. */
  readonly pcs: Int32Array;
  readonly accept: boolean;
  /** Transitions on ASCII characters (most of any path), then on the others. */
  readonly ascii: Array<DState | null>;
  readonly next: Map<number, DState>;
}

/**
 * The matcher of a glob given as alternatives of tokens (a match of any one is a match).
 * `pattern` is only for messages. Adjacent stars and segment runs are collapsed first:
 * `**` `/**` runs cost one loop, not one per repetition.
 */
export function compileTokens(pattern: string, alternatives: readonly (readonly GlobToken[])[], options: GlobOptions = {}): GlobMatcher {
  return new Automaton(pattern, alternatives.map(collapse), options.foldCase === true);
}

/**
 * Adjacent tokens that together match what one of them matches alone: a run of stars is
 * one star (a crossing one if any crosses `/`), a run of `segments` or of `dirs` is one,
 * and a `/`-crossing star swallows `segments`/`dirs` next to it.
 */
export function collapse(tokens: readonly GlobToken[]): GlobToken[] {
  const out: GlobToken[] = [];
  for (const t of tokens) {
    const prev = out[out.length - 1];
    if (prev !== undefined) {
      const merged = merge(prev, t);
      if (merged !== undefined) {
        out[out.length - 1] = merged;
        continue;
      }
    }
    out.push(t);
  }
  return out;
}

const ANYTHING: GlobToken = { kind: 'star', slash: true };

function merge(a: GlobToken, b: GlobToken): GlobToken | undefined {
  if (a.kind === 'star' && b.kind === 'star') return a.slash || b.slash ? ANYTHING : a;
  if (a.kind === 'segments' && b.kind === 'segments') return a;
  if (a.kind === 'dirs' && b.kind === 'dirs') return a;
  const crossing = (t: GlobToken) => t.kind === 'star' && t.slash;
  const runs = (t: GlobToken) => t.kind === 'segments' || t.kind === 'dirs';
  if ((crossing(a) && runs(b)) || (runs(a) && crossing(b))) return ANYTHING;
  return undefined;
}

class Automaton implements GlobMatcher {
  readonly size: number;
  private readonly op: Uint8Array;
  private readonly arg: Int32Array;
  private readonly out: Int32Array;
  private readonly out2: Int32Array;
  private readonly classes: Array<{ ranges: Int32Array; negated: boolean }> = [];
  /** Per instruction: the step number that last added it (a visited mark that needs no clearing). */
  private readonly mark: Uint32Array;
  private stamp = 0;
  private readonly starts: number[] = [];
  /** The start set, and two sets and a stack of instruction indices to work in (each fits every instruction). */
  private readonly startPcs: Int32Array;
  private readonly setA: Int32Array;
  private readonly setB: Int32Array;
  private readonly stack: Int32Array;
  private cache = new Map<string, DState>();
  private cells = 0;
  /** Times the cache started over; at MAX_RESETS the matcher stops caching. */
  private resets = 0;
  private start: DState;

  constructor(
    readonly pattern: string,
    alternatives: readonly (readonly GlobToken[])[],
    private readonly foldCase: boolean,
  ) {
    const code: Array<[op: number, arg: number, out: number, out2: number]> = [];
    for (const tokens of alternatives) {
      this.starts.push(code.length);
      for (const t of tokens) this.emit(code, t);
      code.push([MATCH, 0, 0, 0]);
    }
    const n = code.length;
    this.size = n;
    this.op = new Uint8Array(n);
    this.arg = new Int32Array(n);
    this.out = new Int32Array(n);
    this.out2 = new Int32Array(n);
    code.forEach(([op, arg, out, out2], i) => {
      this.op[i] = op;
      this.arg[i] = arg;
      this.out[i] = out;
      this.out2[i] = out2;
    });
    this.mark = new Uint32Array(n);
    this.setA = new Int32Array(n);
    this.setB = new Int32Array(n);
    // A SPLIT pushes two, and an instruction is expanded once per step: 2n + 1 at most.
    this.stack = new Int32Array(2 * n + 1);
    const stamp = this.nextStamp();
    let size = 0;
    for (const pc of this.starts) size = this.close(pc, this.setA, size, stamp);
    this.startPcs = this.setA.slice(0, size).sort();
    this.start = this.intern(this.startPcs, size);
  }

  /** Appends the instructions of one token; each token's last exit is the next instruction. */
  private emit(code: Array<[number, number, number, number]>, t: GlobToken): void {
    const at = code.length;
    switch (t.kind) {
      case 'char':
        code.push([CHAR, this.fold(t.cp), at + 1, 0]);
        return;
      case 'one':
        code.push([t.slash ? ONE_ANY : ONE_NOSLASH, 0, at + 1, 0]);
        return;
      case 'class':
        this.classes.push({ ranges: Int32Array.from(t.ranges), negated: t.negated });
        code.push([CLASS, this.classes.length - 1, at + 1, 0]);
        return;
      case 'star': // at: loop or leave; at+1: one character, back to the loop
        code.push([SPLIT, 0, at + 1, at + 2], [t.slash ? ONE_ANY : ONE_NOSLASH, 0, at, 0]);
        return;
      case 'segments': // at: a segment or leave; at+1..at+2: its characters; at+3: its `/`
        code.push([SPLIT, 0, at + 1, at + 4], [ONE_NOSLASH, 0, at + 2, 0], [SPLIT, 0, at + 1, at + 3], [CHAR, SLASH, at, 0]);
        return;
      case 'dirs': // at: a run or nothing; at+1..at+2: the run; at+3: its final `/`
        code.push([SPLIT, 0, at + 1, at + 4], [SPLIT, 0, at + 2, at + 3], [ONE_ANY, 0, at + 1, 0], [CHAR, SLASH, at + 4, 0]);
        return;
    }
  }

  test(input: string): boolean {
    if (this.resets >= MAX_RESETS) return this.simulate(input, 0, this.startPcs);
    let state = this.start;
    for (let i = 0; i < input.length; ) {
      if (state.pcs.length === 0) return false;
      let cp = input.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      if (this.foldCase) cp = this.fold(cp);
      const known = cp < 0x80 ? state.ascii[cp] : state.next.get(cp);
      if (known) {
        state = known;
        continue;
      }
      state = this.advance(state, cp);
      if (this.resets >= MAX_RESETS) return this.simulate(input, i, state.pcs);
    }
    return state.accept;
  }

  /**
   * The NFA run without the cache, from set `pcs` at `from`: for patterns whose sets are
   * too many to cache (each step would be a new state), plain steps are cheaper than
   * sorting and interning every set.
   */
  private simulate(input: string, from: number, pcs: Int32Array): boolean {
    let cur = this.setA;
    let next = this.setB;
    cur.set(pcs);
    let size = pcs.length;
    for (let i = from; i < input.length; ) {
      if (size === 0) return false;
      let cp = input.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      if (this.foldCase) cp = this.fold(cp);
      size = this.step(cur, size, cp, next);
      [cur, next] = [next, cur];
    }
    for (let k = 0; k < size; k++) if (this.op[cur[k]!] === MATCH) return true;
    return false;
  }

  /** Writes the set after `cp` from the first `size` of `from` into `to`; its size. */
  private step(from: Int32Array, size: number, cp: number, to: Int32Array): number {
    const stamp = this.nextStamp();
    let n = 0;
    for (let k = 0; k < size; k++) {
      const pc = from[k]!;
      if (this.consumes(pc, cp)) n = this.close(this.out[pc]!, to, n, stamp);
    }
    return n;
  }

  /** The DFA state after `cp` from `state`, computed from the NFA and cached. */
  private advance(state: DState, cp: number): DState {
    if (this.cells >= MAX_DFA_CELLS) {
      // Start the cache over. `state` keeps its transitions until the match ends; the
      // next match starts from a fresh start state, and the old states are dropped.
      this.cache = new Map();
      this.cells = 0;
      this.resets++;
      this.start = this.intern(this.startPcs, this.startPcs.length);
    }
    const next = this.intern(this.setA, this.step(state.pcs, state.pcs.length, cp, this.setA));
    if (cp < 0x80) state.ascii[cp] = next;
    else {
      state.next.set(cp, next);
      this.cells += 4;
    }
    return next;
  }

  /** The DFA state of the first `size` instructions of `set`, from the cache or new. */
  private intern(set: Int32Array, size: number): DState {
    const pcs = set.slice(0, size).sort();
    const key = pcs.join(',');
    let known = this.cache.get(key);
    if (known === undefined) {
      let accept = false;
      for (const pc of pcs) if (this.op[pc] === MATCH) accept = true;
      known = { pcs, accept, ascii: new Array<DState | null>(0x80).fill(null), next: new Map() };
      this.cache.set(key, known);
      this.cells += 0x80 + pcs.length;
    }
    return known;
  }

  /**
   * Adds `pc` and everything SPLIT reaches from it to `set` from index `n`, each
   * instruction once per step (`stamp`); the new size.
   */
  private close(pc: number, set: Int32Array, n: number, stamp: number): number {
    const stack = this.stack;
    let top = 0;
    stack[top++] = pc;
    while (top > 0) {
      const at = stack[--top]!;
      if (this.mark[at] === stamp) continue;
      this.mark[at] = stamp;
      if (this.op[at] === SPLIT) {
        stack[top++] = this.out2[at]!;
        stack[top++] = this.out[at]!;
      } else set[n++] = at;
    }
    return n;
  }

  private nextStamp(): number {
    if (++this.stamp === 0xffffffff) {
      this.mark.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }

  private consumes(pc: number, cp: number): boolean {
    switch (this.op[pc]) {
      case CHAR:
        return this.arg[pc] === cp;
      case ONE_NOSLASH:
        return cp !== SLASH;
      case ONE_ANY:
        return true;
      case CLASS: {
        if (cp === SLASH) return false;
        const { ranges, negated } = this.classes[this.arg[pc]!]!;
        let inside = false;
        for (let r = 0; r < ranges.length; r += 2) {
          if (cp >= ranges[r]! && cp <= ranges[r + 1]!) {
            inside = true;
            break;
          }
        }
        return inside !== negated;
      }
      default:
        return false; // MATCH consumes nothing
    }
  }

  private fold(cp: number): number {
    return this.foldCase ? canonicalize(cp) : cp;
  }
}

/**
 * Case folding as JavaScript's `i` flag without `u` (ECMA-262 Canonicalize): the
 * upper-case form when it is one character, except that nothing outside ASCII folds into
 * ASCII. Characters beyond the BMP do not fold (that flag sees them as two halves).
 */
export function canonicalize(cp: number): number {
  if (cp < 0x80) return cp >= 0x61 && cp <= 0x7a ? cp - 0x20 : cp;
  if (cp > 0xffff) return cp;
  const upper = String.fromCharCode(cp).toUpperCase();
  if (upper.length !== 1) return cp;
  const u = upper.charCodeAt(0);
  return u < 0x80 ? cp : u;
}
