// The doc-groups section (shard format version 9): a shard whose content postings are
// numbered by group rather than by document. A group is a maximal run of adjacent
// documents with the same path in one repository of the shard: in a history shard, the
// versions of one file, which hold nearly the same trigrams, so that a list naming each
// version of each file would repeat the same run of versions in every trigram's list. A
// group's posting stands for all its versions: its trigrams are the union of theirs, its
// follow byte and segment masks the OR of theirs (core/postings-builder.ts, grouped). That
// is a superset of each version's, so the candidates (a group's versions) are still
// decided against each version's own bytes.
//
// # Layout
//
// Empty (0 bytes): the postings are by document, as in version 8 and before. Otherwise
// G + 1 little-endian u32: each group's first document, ascending, starting at 0, then the
// document count; group g is the documents [first[g], first[g + 1]).
//
// Worked example: documents 0-2 are versions of a.c, 3 of b.c, 4-5 of c.c: the section
// holds 0 3 4 6 (16 bytes); a content posting 1 stands for document 3, a posting 2 for
// documents 4 and 5.

import { SectionDamage } from './section-checks.ts';

/** The section of the groups whose first documents are `firsts` (ascending, from 0), of `docCount` documents; none: empty (by document). */
export function encodeDocGroups(firsts: readonly number[], docCount: number): Uint8Array {
  // (A shard without documents has no group: by document or by group, its postings are none.)
  if (firsts.length === 0) return new Uint8Array(0);
  const out = new Uint32Array(firsts.length + 1);
  out.set(firsts);
  out[firsts.length] = docCount;
  return new Uint8Array(out.buffer);
}

/** A doc-groups section, read in place. */
export class DocGroups {
  /** first[g]: group g's first document; first[count]: the document count. */
  private readonly first: Uint32Array;
  readonly count: number;
  /** Each document's group (made at first use). */
  private groupOf: Uint32Array | undefined;

  /** Throws SectionDamage when the section is not ascending firsts from 0 to `docCount`. */
  constructor(section: Buffer, docCount: number) {
    if (section.length % 4 !== 0 || section.length < 8 || section.byteOffset % 4 !== 0)
      throw new SectionDamage('doc-groups section is truncated or misaligned');
    const first = new Uint32Array(section.buffer, section.byteOffset, section.length / 4);
    const g = first.length - 1;
    if (first[0] !== 0 || first[g] !== docCount) throw new SectionDamage('doc-groups section does not cover the documents');
    for (let i = 1; i <= g; i++) if (first[i]! <= first[i - 1]!) throw new SectionDamage('doc-groups section is not ascending');
    this.first = first;
    this.count = g;
  }

  /** The group holding document `doc`. */
  of(doc: number): number {
    if (this.groupOf === undefined) {
      const out = new Uint32Array(this.first[this.count]!);
      for (let g = 0; g < this.count; g++) out.fill(g, this.first[g]!, this.first[g + 1]!);
      this.groupOf = out;
    }
    return this.groupOf[doc]!;
  }

  /** The documents of ascending `groups`, ascending. */
  docs(groups: Uint32Array): Uint32Array {
    const first = this.first;
    let n = 0;
    for (let i = 0; i < groups.length; i++) n += first[groups[i]! + 1]! - first[groups[i]!]!;
    const out = new Uint32Array(n);
    let k = 0;
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i]!;
      for (let d = first[g]!, end = first[g + 1]!; d < end; d++) out[k++] = d;
    }
    return out;
  }

  /** Documents in group `g`. */
  size(g: number): number {
    return this.first[g + 1]! - this.first[g]!;
  }

  /** The largest of the lengths (`lengthOf`) of group `g`'s documents: its segment masks are that wide. */
  maxOf(g: number, lengthOf: (doc: number) => number): number {
    let max = 0;
    for (let d = this.first[g]!, end = this.first[g + 1]!; d < end; d++) max = Math.max(max, lengthOf(d));
    return max;
  }
}
