// Intersection and union of ascending u32 sets (posting lists of doc ids).
// Inputs are strictly ascending arrays; outputs are strictly ascending too.

/**
 * When one list is at least this many times longer than the other, walking the short
 * list and galloping (exponential then binary search) through the long one costs
 * O(small * log(large / small)) instead of O(small + large).
 */
const SKEW: u32 = 32;

// @ts-ignore: decorator
@inline
function at(p: usize, i: u32): u32 {
  return load<u32>(p + (<usize>i << 2));
}

/** First index i in [lo, hi) with b[i] >= x, or hi. */
// @ts-ignore: decorator
@inline
function lowerBound(b: usize, lo: u32, hi: u32, x: u32): u32 {
  while (lo < hi) {
    const mid = lo + ((hi - lo) >> 1);
    if (at(b, mid) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * First index i in [from, n) with b[i] >= x, or n. Probes from+1, from+2, from+4, ... until
 * it passes x, then binary-searches the last doubling interval, so the cost depends on
 * the distance travelled rather than on n.
 */
function gallop(b: usize, from: u32, n: u32, x: u32): u32 {
  if (from >= n || at(b, from) >= x) return from;
  let prev = from; // invariant: b[prev] < x
  let step: u32 = 1;
  while (true) {
    const next = prev + step;
    if (next >= n || next < prev) return lowerBound(b, prev + 1, n, x);
    if (at(b, next) >= x) return lowerBound(b, prev + 1, next, x);
    prev = next;
    step <<= 1;
  }
}

/** out = a ∩ b; returns its length. out needs min(na, nb) entries. */
export function intersect(a: usize, na: u32, b: usize, nb: u32, out: usize): u32 {
  if (na > nb) {
    const tp = a; a = b; b = tp;
    const tn = na; na = nb; nb = tn;
  }
  if (na == 0) return 0;
  let k: u32 = 0;
  if (nb / na >= SKEW) {
    let j: u32 = 0;
    for (let i: u32 = 0; i < na; i++) {
      const x = at(a, i);
      j = gallop(b, j, nb, x);
      if (j >= nb) break;
      if (at(b, j) == x) {
        store<u32>(out + (<usize>k << 2), x);
        k++;
        j++;
      }
    }
    return k;
  }
  // Balanced sizes: branch-free merge (the comparison outcomes are unpredictable).
  let i: u32 = 0;
  let j: u32 = 0;
  while (i < na && j < nb) {
    const x = at(a, i);
    const y = at(b, j);
    store<u32>(out + (<usize>k << 2), x);
    k += <u32>(x == y);
    i += <u32>(x <= y);
    j += <u32>(y <= x);
  }
  return k;
}

/** out = a ∪ b; returns its length. out needs na + nb entries. */
export function union(a: usize, na: u32, b: usize, nb: u32, out: usize): u32 {
  if (na > nb) {
    const tp = a; a = b; b = tp;
    const tn = na; na = nb; nb = tn;
  }
  let k: u32 = 0;
  let j: u32 = 0;
  if (na != 0 && nb / na >= SKEW) {
    // Skewed: copy the runs of the long list between consecutive short-list elements
    // with memory.copy instead of comparing element by element.
    for (let i: u32 = 0; i < na; i++) {
      const x = at(a, i);
      const p = gallop(b, j, nb, x);
      const run = p - j;
      memory.copy(out + (<usize>k << 2), b + (<usize>j << 2), <usize>run << 2);
      k += run;
      store<u32>(out + (<usize>k << 2), x);
      k++;
      j = p < nb && at(b, p) == x ? p + 1 : p;
    }
  } else {
    let i: u32 = 0;
    while (i < na && j < nb) {
      const x = at(a, i);
      const y = at(b, j);
      store<u32>(out + (<usize>k << 2), x < y ? x : y);
      k++;
      i += <u32>(x <= y);
      j += <u32>(y <= x);
    }
    const restA = na - i;
    memory.copy(out + (<usize>k << 2), a + (<usize>i << 2), <usize>restA << 2);
    k += restA;
  }
  const restB = nb - j;
  memory.copy(out + (<usize>k << 2), b + (<usize>j << 2), <usize>restB << 2);
  k += restB;
  return k;
}
