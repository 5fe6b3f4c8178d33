// Real histories for the differential tests against git: public repositories with years of
// commits, merges, renames and tags (hono, ripgrep), as git bundles (NAME.bundle) or
// repositories (NAME/) in the directory the environment variable TRAWL_CORPORA names.
// Without it, or without the one asked for, the tests that need them are skipped, saying so.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { git } from './git.ts';

export type CorpusName = 'hono' | 'ripgrep';

/** Where corpus `name` is (a bundle or a repository), or undefined. */
function corpusSource(name: CorpusName): string | undefined {
  const dir = process.env.TRAWL_CORPORA;
  if (dir === undefined || dir === '') return undefined;
  for (const candidate of [join(dir, `${name}.bundle`), join(dir, name)]) if (existsSync(candidate)) return candidate;
  return undefined;
}

/** The test's skip reason when corpus `name` is not available, else false. */
export function corpusSkip(name: CorpusName): string | false {
  return corpusSource(name) === undefined ? `set TRAWL_CORPORA to a directory holding ${name}.bundle (or a ${name}/ repository) to run this` : false;
}

/** A fresh clone of corpus `name` at `into/name` (its default branch checked out, main); its path. */
export function cloneCorpus(name: CorpusName, into: string): string {
  const source = corpusSource(name);
  if (source === undefined) throw new Error(`corpus ${name} is not available (${corpusSkip(name)})`);
  const path = join(into, name);
  git(into, 'clone', '-q', '--no-hardlinks', source, path);
  return path;
}
