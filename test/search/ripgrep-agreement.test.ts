// Agreement with ripgrep on real code: for literal and regex queries, in both case modes,
// and for filter queries with their rg equivalents, trawl and `rg -n` (no ignore files,
// hidden files included) report the same files and the same line numbers. The corpus is the project's own sources and the C++ sources of
// RE2 vendored in node_modules: code we did not write for this test.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCES = ['daemon', 'core/assembly', 'node_modules/re2/vendor/re2/re2', 'node_modules/re2/lib', 'node_modules/msgpackr'];

const CASES: Array<{ query: string; regex: boolean; caseSensitive: boolean }> = [
  { query: 'return', regex: false, caseSensitive: true },
  { query: 'RE2', regex: false, caseSensitive: true },
  { query: 're2', regex: false, caseSensitive: false },
  { query: 'Buffer', regex: false, caseSensitive: false },
  { query: 'const ', regex: false, caseSensitive: true },
  { query: 'StringPiece', regex: false, caseSensitive: true },
  { query: 'todo', regex: false, caseSensitive: false },
  { query: 'if (', regex: false, caseSensitive: true },
  { query: 'utf-8', regex: false, caseSensitive: false },
  { query: 'class [A-Z][A-Za-z]+', regex: true, caseSensitive: true },
  { query: '^#include <[a-z_/]+\\.h>', regex: true, caseSensitive: true },
  { query: 'return [a-z_]+\\(', regex: true, caseSensitive: true },
  { query: 'static (const )?int', regex: true, caseSensitive: false },
  { query: '[0-9]{4,}', regex: true, caseSensitive: true },
  { query: 'new RE2\\(', regex: true, caseSensitive: true },
  // [ \t] rather than \s: in trawl a regex runs over the whole file, and \s also matches
  // "\n" (docs/http-api.md section 11), where rg is line by line.
  { query: '^[ \\t]*//.*TODO', regex: true, caseSensitive: false },
  { query: 'unicode|utf8', regex: true, caseSensitive: false },
  { query: '\\)$', regex: true, caseSensitive: true },
];

const dir = tempDir('rg');
const corpus = join(dir.path, 'corpus');
let searcher: Searcher;
const skipped = new Set<string>();

before(async () => {
  for (const s of SOURCES) {
    assert.ok(existsSync(join(ROOT, s)), `missing corpus source ${s}`);
    cpSync(join(ROOT, s), join(corpus, s), { recursive: true });
  }
  const data = join(dir.path, 'data');
  await indexLocal(corpus, { dataDir: data, workers: 2, shardTargetBytes: 512 * 1024 });
  // Files trawl records as skipped (binary, too large) are not compared.
  for (const m of readAllManifests(data)) {
    for (const e of m.shards) for (const s of Shard.open(join(shardsDir(data, m.repoId), e.file)).meta.skipped) skipped.add(s.path);
  }
  searcher = new Searcher({ dataDir: data, workers: 2 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

function rgLines(query: string, regex: boolean, caseSensitive: boolean): Set<string> {
  return rg([caseSensitive ? '-s' : '-i', ...(regex ? [] : ['-F']), '-e', query]);
}

/** `rg -n` with extra arguments, as a set of "path:line". */
function rg(extra: string[], files?: string[]): Set<string> {
  const args = ['-n', '--null', '--no-heading', '--with-filename', '--no-ignore', '--hidden', '--no-messages', '--color', 'never'];
  args.push(...extra, ...(files ?? ['.']));
  const r = spawnSync('rg', args, { cwd: corpus, encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.ok(r.status === 0 || r.status === 1, `rg failed: ${r.stderr}`);
  const out = new Set<string>();
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    const nul = line.indexOf('\0');
    const path = line.slice(0, nul).replace(/^\.\//, '');
    if (skipped.has(path)) continue;
    out.add(`${path}:${line.slice(nul + 1, line.indexOf(':', nul + 1))}`);
  }
  return out;
}

/** `rg -l`: the files with a match. */
function rgFiles(extra: string[]): string[] {
  const r = spawnSync('rg', ['-l', '--no-ignore', '--hidden', '--no-messages', ...extra, '.'], { cwd: corpus, encoding: 'utf8', maxBuffer: 64 << 20 });
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((p) => p.replace(/^\.\//, ''))
    .filter((p) => !skipped.has(p));
}

async function trawlLines(query: string, regex: boolean, caseSensitive: boolean): Promise<Set<string>> {
  const res = await searcher.search({ query, matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: regex, isCaseSensitivityEnabled: caseSensitive });
  assert.equal(res.isSearchExhaustive, true);
  const out = new Set<string>();
  for (const f of res.files) {
    for (const c of f.chunks) for (const r of c.matchRanges) out.add(`${f.fileName.text}:${r.start.lineNumber}`);
  }
  return out;
}

test('rg is installed', () => {
  const r = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  assert.equal(r.status, 0, 'ripgrep is required (scripts/setup.sh installs it)');
});

for (const c of CASES) {
  test(`same files and lines as rg: ${c.regex ? 'regex' : 'literal'} ${JSON.stringify(c.query)} ${c.caseSensitive ? 'case-sensitive' : 'case-insensitive'}`, async () => {
    const expected = rgLines(c.query, c.regex, c.caseSensitive);
    // Quoted: in the query language, spaces separate terms.
    const actual = await trawlLines(`"${c.query.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`, c.regex, c.caseSensitive);
    assert.ok(expected.size > 0, 'the query should match something in the corpus');
    const missing = [...expected].filter((l) => !actual.has(l)).slice(0, 5);
    const extra = [...actual].filter((l) => !expected.has(l)).slice(0, 5);
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
    assert.equal(actual.size, expected.size);
  });
}

// Filter queries and their rg equivalents. file: is a regex over the whole path, so the
// rg globs cover directory names too.
const FILTER_CASES: Array<{ query: string; rg: () => Set<string> }> = [
  { query: 'file:\\.h$ Rune', rg: () => rg(['-i', '-F', '-e', 'Rune', '-g', '*.h']) },
  { query: '-file:test return', rg: () => rg(['-i', '-F', '-e', 'return', '-g', '!*test*', '-g', '!**/*test*/**']) },
  { query: 'lang:TypeScript shard', rg: () => rg(['-i', '-F', '-e', 'shard', '-g', '*.ts']) },
  { query: 'case:yes Buffer', rg: () => rg(['-s', '-F', '-e', 'Buffer']) },
  { query: 'unicode or utf8', rg: () => rg(['-i', '-F', '-e', 'unicode', '-e', 'utf8']) },
  {
    // File-level AND: files with "return" and ("RE2" or "regexp"); lines of all three.
    query: '(RE2 or regexp) return',
    rg: () => {
      const withReturn = new Set(rgFiles(['-i', '-F', '-e', 'return']));
      const files = [...new Set([...rgFiles(['-i', '-F', '-e', 'RE2']), ...rgFiles(['-i', '-F', '-e', 'regexp'])])].filter((f) => withReturn.has(f));
      return files.length === 0 ? new Set() : rg(['-i', '-F', '-e', 'RE2', '-e', 'regexp', '-e', 'return'], files);
    },
  },
];

for (const c of FILTER_CASES) {
  test(`same files and lines as rg: ${c.query}`, async () => {
    const expected = c.rg();
    const actual = await trawlLines(c.query, false, false);
    assert.ok(expected.size > 0, 'the query should match something in the corpus');
    const missing = [...expected].filter((l) => !actual.has(l)).slice(0, 5);
    const extra = [...actual].filter((l) => !expected.has(l)).slice(0, 5);
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
  });
}
