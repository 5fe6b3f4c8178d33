// Random requests of the query language for the differential tests (search vs the
// brute-force oracle, and a compound-shard index vs one shard per repository): terms in
// both modes, filters, negation, OR, parentheses, case: settings, random limits and
// context. Seeded: the same seed gives the same requests.

import type { SearchRequest, SearchResponse } from '../../daemon/search/types.ts';
import { WORDS, type prng } from './corpus.ts';

function randomCase(r: ReturnType<typeof prng>, s: string): string {
  return [...s].map((c) => (r.chance(0.3) ? (r.chance(0.5) ? c.toUpperCase() : c.toLowerCase()) : c)).join('');
}

function randomLiteral(r: ReturnType<typeof prng>): string {
  const w = r.pick(WORDS);
  switch (r.int(6)) {
    case 0:
      return w;
    case 1:
      return randomCase(r, w);
    case 2:
      return [...w].slice(0, 1 + r.int([...w].length)).join(''); // a prefix, often short
    case 3:
      return `${w} ${r.pick(WORDS)}`;
    case 4:
      return `zz${w}qq`; // usually absent
    default:
      return [...w].slice(r.int([...w].length)).join('') || w;
  }
}

const REGEX_SHAPES: Array<(r: ReturnType<typeof prng>) => string> = [
  (r) => esc(r.pick(WORDS)),
  (r) => `${esc(r.pick(WORDS))}\\s*${esc(r.pick(WORDS))}`,
  (r) => `(${esc(r.pick(WORDS))}|${esc(r.pick(WORDS))})`,
  (r) => `^\\s*${esc(r.pick(WORDS))}`,
  (r) => `${esc(r.pick(WORDS))}$`,
  (r) => `[a-z]+_${esc(r.pick(['lock', 'bar', 'operations', 'irqsave']))}`,
  (r) => `\\b${esc(r.pick(WORDS))}\\b`,
  () => '[0-9]{2,}',
  () => '[A-Z]{3}',
  (r) => `${esc(r.pick(WORDS))}.*${esc(r.pick(WORDS))}`,
  (r) => `(?i)${esc(r.pick(WORDS))}`,
  (r) => `${esc(r.pick(WORDS))}[^a-z]`,
  (_r) => `k.y|s.m`,
  () => 'x*',
  () => '^$',
  (r) => `${esc(r.pick(WORDS))}\\n`,
  (_r) => `caf[eé]|[ÉE]LAN`,
  (r) => `${esc(r.pick(WORDS))}(\\s+${esc(r.pick(WORDS))})+`,
  // Required literals (regex-required.ts): a cased word behind classes, in every branch of
  // an alternation, after an optional or a repeated group, next to a case-folded part.
  (r) => `[A-Za-z_]+${esc(r.pick(['Bar', 'Kernel', 'KERNEL', 'Size', 'ÉLAN', 'Straße', 'Key']))}`,
  (r) => {
    const w = esc(r.pick(WORDS));
    return `([a-z]+${w}|${w}[0-9 ])`;
  },
  (r) => `(${esc(r.pick(WORDS))}){0,3}${esc(r.pick(WORDS))}`,
  (r) => `(${esc(r.pick(WORDS))}\\s?)+x?`,
  (r) => `(?i:${esc(r.pick(WORDS))})${esc(r.pick(WORDS))}`,
  (r) => `${esc(r.pick(WORDS))}(_${esc(r.pick(WORDS))})?\\(`,
  // Class sequences (regex-sequence.ts): a whole pattern the core's scan matches alone, and
  // sequences that only pick the lines RE2 reads.
  () => '[0-9]{3}',
  () => '(?i)[a-f0-9]{2}[_x][0-9]{2}',
  () => '\\b[0-9]{6}\\b',
  () => '[A-Z]_[0-9]{4}[a-z]*',
  (r) => `${esc(r.pick(WORDS))}[0-9]{2}`,
];

type R = ReturnType<typeof prng>;

/** A term as the query language spells it: quoted when it would not parse as one word. */
function spell(text: string): string {
  if (/^[^\s"()-][^\s"]*$/.test(text) && text !== 'or' && !/^[a-z]+:/.test(text) && !/[()]/.test(text)) return text;
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Repository filters: the differential tests' repositories are alpha, beta and others of such names. */
const REPO_FILTERS = ['repo:alpha', 'repo:beta', 'r:^b', '-repo:alpha', 'repo:^gamma$', 'repo:a$'];

const SYMBOL_PATTERNS = ['^main', '^main$', 'foo', 'Kernel', '_lock', 'bar$', 'x', '^k', 'ke', 'e.*r', '^[a-z]+_', '\\w+', 'lock$', '^Foo', '[Kk]ernel'];
const FILE_FILTERS = ['\\.c$', '\\.h$', 'src/', 'test', 'README', 'ünïcode', '^[a-z]+\\.txt$', '\\.(go|py)$'];
const LANGS = ['C', 'Go', 'TypeScript', 'Python', 'Markdown', 'Text', 'JavaScript'];

/** A random query of the language, at most `depth` levels of nesting. */
function randomQuery(r: R, regex: boolean, depth: number): string {
  const atom = (): string => {
    switch (r.int(11)) {
      // Every way the symbol index finds names: prefix search, exact and anchored byte
      // comparisons, trigram blocks, a short literal's scan, RE2 over every name; negated too.
      case 10:
        return `${r.chance(0.2) ? '-' : ''}sym:${r.pick(SYMBOL_PATTERNS)}`;
      case 0:
        return `file:${r.pick(FILE_FILTERS)}`;
      case 1:
        return `-file:${r.pick(FILE_FILTERS)}`;
      case 2:
        return `lang:${r.pick(LANGS)}`;
      case 3:
        return r.pick(REPO_FILTERS);
      case 4:
        return `-${spell(randomLiteral(r))}`;
      case 5:
        return `regex:${spell(r.pick(REGEX_SHAPES)(r))}`;
      default:
        return spell(regex ? r.pick(REGEX_SHAPES)(r) : randomLiteral(r));
    }
  };
  if (depth === 0 || r.chance(0.4)) return atom();
  const parts = Array.from({ length: 2 + r.int(2) }, () => randomQuery(r, regex, depth - 1));
  const joined = parts.join(r.chance(0.5) ? ' or ' : ' ');
  return r.chance(0.3) ? `${r.chance(0.3) ? '-' : ''}(${joined})` : joined;
}

function esc(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/** What must agree: the response's results, or the error; stats count work, which differs by design. */
export async function outcome(p: Promise<SearchResponse>): Promise<{ files: unknown[] } & Record<string, unknown>> {
  try {
    return comparable(await p);
  } catch (err) {
    return { files: [], error: (err as Error).message };
  }
}

export function comparable(res: SearchResponse): { files: unknown[] } & Record<string, unknown> {
  return {
    files: res.files,
    repositoryInfo: res.repositoryInfo,
    isSearchExhaustive: res.isSearchExhaustive,
    actualMatchCount: res.stats.actualMatchCount,
    fileCount: res.stats.fileCount,
  };
}

/** The request of random query i of a seeded sequence (the differential tests share it). */
export function randomRequest(r: ReturnType<typeof prng>): Required<SearchRequest> {
  const regex = r.chance(0.45);
  const structured = r.chance(0.6);
  let query = structured ? randomQuery(r, regex, 2) : regex ? r.pick(REGEX_SHAPES)(r) : randomLiteral(r);
  if (structured && r.chance(0.15)) query += ` case:${r.pick(['yes', 'no', 'auto'])}`;
  return {
    query,
    matches: r.pick([1, 3, 10, 50, 1000, 100000]),
    contextLines: r.pick([0, 0, 1, 3]),
    whole: r.chance(0.05),
    isRegexEnabled: regex,
    isCaseSensitivityEnabled: r.chance(0.5),
  };
}
