// The query mix: a JSON array of {name, query, regex, caseSensitive, kind}.

import { readFileSync } from 'node:fs';

export const KINDS = ['rare-literal', 'common-literal', 'ci-literal', 'regex-literal', 'regex-no-literal', 'no-hit'] as const;
export type QueryKind = (typeof KINDS)[number];

export interface BenchQuery {
  name: string;
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  kind: QueryKind;
}

export function loadQueries(file: string): BenchQuery[] {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${file}: expected a JSON array of queries`);
  const names = new Set<string>();
  return raw.map((q: Partial<BenchQuery>, i) => {
    const where = `${file}[${i}]`;
    if (typeof q.name !== 'string' || typeof q.query !== 'string' || q.query === '') throw new Error(`${where}: name and query must be non-empty strings`);
    if (typeof q.regex !== 'boolean' || typeof q.caseSensitive !== 'boolean') throw new Error(`${where}: regex and caseSensitive must be booleans`);
    if (!KINDS.includes(q.kind as QueryKind)) throw new Error(`${where}: kind must be one of ${KINDS.join(', ')}`);
    if (names.has(q.name)) throw new Error(`${where}: duplicate name ${q.name}`);
    names.add(q.name);
    return { name: q.name, query: q.query, regex: q.regex, caseSensitive: q.caseSensitive, kind: q.kind as QueryKind };
  });
}
