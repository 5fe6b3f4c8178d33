// Sorting of 24-bit keys stored as u32 (trigram ids).

const SMALL: u32 = 48;

/**
 * Sorts a[0, n) ascending; every value must be < 2^24.
 * tmp: room for n u32 followed by 3 * 256 u32 of histograms (n * 4 + 3072 bytes).
 * Insertion sort for short inputs (query strings), otherwise an LSD radix sort with three
 * 8-bit digits: all three histograms are built in one pass, then three scatter passes
 * (a -> tmp -> a -> tmp) and a final copy back, O(n) with sequential reads.
 */
export function sortU24(a: usize, n: u32, tmp: usize): void {
  if (n <= SMALL) {
    insertionSort(a, n);
    return;
  }
  const hist = tmp + (<usize>n << 2);
  memory.fill(hist, 0, 3 * 256 * 4);
  for (let i: u32 = 0; i < n; i++) {
    const v = load<u32>(a + (<usize>i << 2));
    const h0 = hist + ((<usize>(v & 0xFF)) << 2);
    const h1 = hist + 1024 + ((<usize>((v >> 8) & 0xFF)) << 2);
    const h2 = hist + 2048 + ((<usize>(v >> 16) & 0xFF) << 2);
    store<u32>(h0, load<u32>(h0) + 1);
    store<u32>(h1, load<u32>(h1) + 1);
    store<u32>(h2, load<u32>(h2) + 1);
  }
  // Histograms -> exclusive prefix sums (start positions).
  for (let d: u32 = 0; d < 3; d++) {
    const base = hist + <usize>d * 1024;
    let sum: u32 = 0;
    for (let b: u32 = 0; b < 256; b++) {
      const p = base + (<usize>b << 2);
      const c = load<u32>(p);
      store<u32>(p, sum);
      sum += c;
    }
  }
  scatterPass(a, tmp, n, hist, 0);
  scatterPass(tmp, a, n, hist + 1024, 8);
  scatterPass(a, tmp, n, hist + 2048, 16);
  memory.copy(a, tmp, <usize>n << 2);
}

// @ts-ignore: decorator
@inline
function scatterPass(src: usize, dst: usize, n: u32, pos: usize, shift: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const v = load<u32>(src + (<usize>i << 2));
    const p = pos + ((<usize>((v >> shift) & 0xFF)) << 2);
    const at = load<u32>(p);
    store<u32>(p, at + 1);
    store<u32>(dst + (<usize>at << 2), v);
  }
}

function insertionSort(a: usize, n: u32): void {
  for (let i: u32 = 1; i < n; i++) {
    const v = load<u32>(a + (<usize>i << 2));
    let j = i;
    while (j > 0) {
      const u = load<u32>(a + (<usize>(j - 1) << 2));
      if (u <= v) break;
      store<u32>(a + (<usize>j << 2), u);
      j--;
    }
    store<u32>(a + (<usize>j << 2), v);
  }
}
