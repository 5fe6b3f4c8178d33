// The queries of the many-repositories phase, drawn from the corpus's identifiers
// (identifiers.ts) under one seed, every one distinct and sent once:
//
//   identifier  IDENT                    `count` of them (after a first search and a warm-up on others)
//   noHit       a literal found nowhere  (`trawl_nohit_` and hex digits)
//   repo        repo:^NAME$ IDENT        IDENT from NAME, no repository twice
//   lang        lang:c IDENT             IDENT from a .c or .h file
//   sym         sym:IDENT                IDENT defined as a function where it was found
//   reposPage   GET /api/repos?page=K    distinct pages of 30, spread over the list
//
// and what the peers run for each (none for sym: and for the repository list): the same
// literal, under the repository's directory for repo:, in .c and .h files for lang:c.

import { identifierSpecs, search, type IdentifierSets, type TimedRequest } from './distinct-latency.ts';
import { drawSets, type Identifier } from './identifiers.ts';
import { literalQuery } from './peer-kinds.ts';
import type { BenchQuery } from './queries.ts';
import type { ManyReposKind, Warmup } from './result.ts';
import { seededRandom } from './stats.ts';

/** GET /api/repos's default page size. */
const PER_PAGE = 30;

export interface KindQueries {
  kind: ManyReposKind;
  requests: TimedRequest[];
  /** What the peers run for each request, in the same order; null: the kind has no peer equivalent. */
  peer: BenchQuery[] | null;
}

/** Queries of each kind but `identifier` (which has `count`) and `noHit`. */
export const kindCount = (count: number) => Math.max(5, Math.round(count / 4));
export const noHitCount = (count: number) => Math.max(3, Math.round(count / 20));

/** The repository an identifier was found in: its file's first path segment. */
export const repoOf = (c: Identifier) => c.file.slice(0, c.file.indexOf('/'));

const escapeRegex = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** How many identifiers a draw takes, and under which seed. */
export interface IdentifierDraw {
  /** Timed identifiers (the other kinds take kindCount and noHitCount of it). */
  count: number;
  warmup: Warmup;
  /** Draw a cold pass's identifiers too. */
  cold: boolean;
  seed: number;
}

/** The queries for `repos` repositories whose identifiers are `candidates`. */
export function manyReposQueries(
  candidates: readonly Identifier[],
  repos: number,
  { count, warmup, cold, seed }: IdentifierDraw,
): { sets: IdentifierSets; kinds: KindQueries[] } {
  const n = kindCount(count);
  const drawn = drawSets(
    candidates,
    {
      ...identifierSpecs(count, warmup, cold, candidates.length),
      repo: { count: n, distinctBy: repoOf },
      lang: { count: n, accept: (c: Identifier) => /\.[ch]$/.test(c.file) },
      sym: { count: n, accept: (c: Identifier) => c.defined },
    },
    seed,
  );
  if (drawn.first.length === 0 || drawn.measured.length === 0) throw new Error(`the corpus holds too few identifiers (${candidates.length})`);
  const names = (xs: Identifier[]) => xs.map((x) => x.name);
  const sets: IdentifierSets = { first: drawn.first[0]!.name, warmup: names(drawn.warmup), measured: names(drawn.measured), cold: names(drawn.cold) };

  const random = seededRandom(seed + 1);
  const noHits = Array.from(
    { length: noHitCount(count) },
    () =>
      `trawl_nohit_${Math.floor(random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0')}`,
  );
  const pages = Math.max(1, Math.ceil(repos / PER_PAGE));
  const pageNumbers = [...new Set(Array.from({ length: Math.min(n, pages) }, (_, i) => 1 + Math.floor((i * pages) / Math.min(n, pages))))];

  const kinds: KindQueries[] = [
    { kind: 'identifier', requests: sets.measured.map(search), peer: sets.measured.map((s, i) => literalQuery(`identifier-${i}`, s)) },
    { kind: 'noHit', requests: noHits.map(search), peer: noHits.map((s, i) => literalQuery(`noHit-${i}`, s)) },
    {
      kind: 'repo',
      requests: drawn.repo.map((c) => search(`repo:^${escapeRegex(repoOf(c))}$ ${c.name}`)),
      peer: drawn.repo.map((c, i) => literalQuery(`repo-${i}`, c.name, { path: repoOf(c) })),
    },
    {
      kind: 'lang',
      requests: drawn.lang.map((c) => search(`lang:c ${c.name}`)),
      peer: drawn.lang.map((c, i) => literalQuery(`lang-${i}`, c.name, { extensions: ['c', 'h'] })),
    },
    { kind: 'sym', requests: drawn.sym.map((c) => search(`sym:${c.name}`)), peer: null },
    { kind: 'reposPage', requests: pageNumbers.map((p) => ({ get: `/api/repos?page=${p}&perPage=${PER_PAGE}` })), peer: null },
  ];
  return { sets, kinds };
}
