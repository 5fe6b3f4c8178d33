// What a change of a repository's index touched, read from the index itself: the files of
// the state the watches last checked (held open since) against those of the state now. A
// path whose blob id differs on a ref, or that is on the ref in one state only, changed;
// its lines that the old version holds more copies of than the new are removed, those the
// new holds more copies of are added. The bytes compared are the indexed ones, so a file
// the index skipped (binary, too large) is no change to a watch, as it is to its searches.
//
// Counting copies instead of aligning the two versions as a diff does is enough for the
// change filter (watch-filter.ts): a watch's matches in a file depend on which of its lines
// match its terms and how many copies of each there are (match-set.ts: a match is its path,
// its text and which copy it is), never on their order; a line that only moved is neither
// added nor removed, and rules nothing in.

import type { RefFiles, HeldFile } from '../search/held-files.ts';
import type { ChangedText } from '../repos/changed-text.ts';

/**
 * The lines and paths that differ between two states of a repository's files; undefined
 * when its refs are not the same ones, or the versions to compare hold more than `maxBytes`
 * (evaluating every watch then costs less than reading them).
 */
export function changedInIndex(before: RefFiles, after: RefFiles, maxBytes: number): ChangedText | undefined {
  if (before.size !== after.size) return undefined;
  const paths = new Set<string>();
  const lines: Buffer[] = [];
  /** Pairs of versions compared already (a file changed the same way on several refs). */
  const compared = new Set<string>();
  let bytes = 0;
  const compare = (path: string, was: HeldFile | undefined, now: HeldFile | undefined): boolean => {
    paths.add(path);
    const pair = `${was?.oid ?? ''}:${now?.oid ?? ''}`;
    if (compared.has(pair)) return true;
    compared.add(pair);
    const old = was?.read();
    const fresh = now?.read();
    bytes += (old?.length ?? 0) + (fresh?.length ?? 0);
    if (bytes > maxBytes) return false;
    lineChanges(old, fresh, lines);
    return true;
  };
  for (const [ref, files] of after) {
    const prior = before.get(ref);
    if (!prior) return undefined;
    for (const [path, now] of files) {
      const was = prior.get(path);
      if (was?.oid !== now.oid && !compare(path, was, now)) return undefined;
    }
    for (const [path, was] of prior) if (!files.has(path) && !compare(path, was, undefined)) return undefined;
  }
  const text = Buffer.allocUnsafe(lines.reduce((n, l) => n + l.length + 1, 0));
  let at = 0;
  for (const l of lines) {
    at += l.copy(text, at);
    text[at++] = 0x0a;
  }
  return { lines: text, paths: [...paths] };
}

/** Appends to `out` the lines of `old` it holds more copies of than `fresh` does, then those `fresh` holds more of. */
export function lineChanges(old: Buffer | undefined, fresh: Buffer | undefined, out: Buffer[]): void {
  const was = old ? splitLines(old) : [];
  const now = fresh ? splitLines(fresh) : [];
  // (Keyed by their bytes as latin1: one character per byte, so that bytes that are not UTF-8 are told apart.)
  const left = new Map<string, number>();
  for (const l of was) {
    const k = l.toString('latin1');
    left.set(k, (left.get(k) ?? 0) + 1);
  }
  const added: Buffer[] = [];
  for (const l of now) {
    const k = l.toString('latin1');
    const n = left.get(k);
    if (n) left.set(k, n - 1);
    else added.push(l);
  }
  for (const l of was) {
    const k = l.toString('latin1');
    const n = left.get(k);
    if (n) {
      left.set(k, n - 1);
      out.push(l);
    }
  }
  for (const l of added) out.push(l);
}

/** A file's lines, without their "\n" (a last line without one is a line; an empty file has none). */
function splitLines(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  while (start < b.length) {
    let end = b.indexOf(0x0a, start);
    if (end < 0) end = b.length;
    out.push(b.subarray(start, end));
    start = end + 1;
  }
  return out;
}
