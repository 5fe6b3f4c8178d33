// Held-out identifiers: the queries of the distinct-query latency (distinct-latency.ts),
// drawn from the corpus itself rather than from a tuned query mix, so that a figure is
// what a user typing names from the code waits for, not what a mix measured (and tuned
// for) a hundred times over.
//
// An identifier is a name of 8 to 40 characters with an underscore or an inner capital
// (`spin_lock_irqsave`, `readFileSync`), read from the corpus's source files; words
// without either (`function`) are left out, as are names a query mix holds. Files are read
// spread evenly over the tree (at most `maxFiles`, each under MAX_FILE_BYTES), so that a
// draw covers the whole corpus at a bounded cost. Each identifier keeps the first file it
// was seen in (its repository, for `repo:` queries) and whether some line of a C-like
// file defines it there (the name before `(` on a line that starts with a type: for
// `sym:` queries).
//
// The draw is seeded: the candidates are shuffled by a seeded generator and taken in turn,
// each at most once, so the same corpus and seed give the same sets on every machine, and
// the sets are disjoint by construction (a warm-up never sends a measured query).

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { listFiles } from './corpus.ts';
import { spread } from './many-repos.ts';
import { seededRandom } from './stats.ts';

/** Files larger than this are not read for identifiers (generated tables, firmware dumps). */
const MAX_FILE_BYTES = 256 * 1024;

/** Source files read for identifiers. */
const SOURCE_FILE = /\.(c|h|cc|cpp|hpp|go|rs|java|kt|py|rb|ts|tsx|js|jsx|cs|swift|scala|php)$/i;

/** Candidate names: a letter, then letters, digits and underscores; 8 to 40 in all. */
const NAME = /\b[A-Za-z][A-Za-z0-9_]{7,39}\b/g;

/** A line defining a function in C-like code: a type at column 0, the name, then `(`, no `;` at the end. */
const DEFINITION = /^[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w{7,39})\s*\([^;]*$/;

export interface Identifier {
  name: string;
  /** The first file it was seen in, relative to the corpus root. */
  file: string;
  /** Some line of that file defines it as a function (a `sym:` query should find it). */
  defined: boolean;
}

/** Whether a name looks like an identifier of code rather than a word: an underscore, or a capital after a lowercase letter. */
export function looksLikeIdentifier(name: string): boolean {
  return /[a-z]/.test(name) && (name.includes('_') || /[a-z][A-Z]/.test(name)) && !/^_+$/.test(name);
}

/**
 * The identifiers of the corpus at `root` (each once, in the order first seen: files in
 * byte order of their paths), but none of `exclude`.
 */
export function corpusIdentifiers(root: string, options: { maxFiles?: number; exclude?: ReadonlySet<string> } = {}): Identifier[] {
  const files = spread(
    listFiles(root).filter((f) => SOURCE_FILE.test(f)),
    options.maxFiles ?? 4000,
  );
  const seen = new Map<string, Identifier>();
  for (const file of files) {
    const abs = join(root, file);
    if (statSync(abs).size > MAX_FILE_BYTES) continue;
    const text = readFileSync(abs, 'latin1');
    const defined = new Set<string>();
    for (const line of text.split('\n')) {
      const m = DEFINITION.exec(line);
      if (m) defined.add(m[1]!);
    }
    for (const [name] of text.matchAll(NAME)) {
      if (seen.has(name) || options.exclude?.has(name) || !looksLikeIdentifier(name)) continue;
      seen.set(name, { name, file, defined: defined.has(name) });
    }
  }
  return [...seen.values()];
}

/** One set of a draw: how many, which candidates qualify, and a key no two of the set may share (e.g. the repository). */
export interface DrawSpec<T> {
  count: number;
  accept?: (c: T) => boolean;
  distinctBy?: (c: T) => string;
}

/**
 * Seeded disjoint sets from `candidates`: the candidates are shuffled once (Fisher-Yates
 * under `seed`), then each set, in the order of `specs`, takes the next candidates it
 * accepts until it has `count` (fewer when the candidates run out). No candidate is in two sets.
 */
export function drawSets<T, K extends string>(candidates: readonly T[], specs: Record<K, DrawSpec<T>>, seed: number): Record<K, T[]> {
  const pool = [...candidates];
  const random = seededRandom(seed);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  const taken = new Array<boolean>(pool.length).fill(false);
  const out = {} as Record<K, T[]>;
  for (const key of Object.keys(specs) as K[]) {
    const spec = specs[key];
    const set: T[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < pool.length && set.length < spec.count; i++) {
      const c = pool[i]!;
      if (taken[i] || (spec.accept && !spec.accept(c))) continue;
      const k = spec.distinctBy?.(c);
      if (k !== undefined && keys.has(k)) continue;
      if (k !== undefined) keys.add(k);
      taken[i] = true;
      set.push(c);
    }
    out[key] = set;
  }
  return out;
}
