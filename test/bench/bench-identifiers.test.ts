// The held-out identifiers of the distinct-query latency (identifiers.ts) and the query
// kinds of the many-repositories phase drawn from them (many-repos-queries.ts): what counts
// as an identifier, the draw (the same seed gives the same sets; no identifier is in two
// sets, so a warm-up never sends a timed query), and the queries each kind makes.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { identifierSpecs } from '../../bench/suite/distinct-latency.ts';
import { corpusIdentifiers, drawSets, looksLikeIdentifier, type Identifier } from '../../bench/suite/identifiers.ts';
import { manyReposQueries, repoOf } from '../../bench/suite/many-repos-queries.ts';
import { tempDir } from '../helpers/corpus.ts';

describe('identifiers: what counts as one', () => {
  const table: Array<[string, boolean]> = [
    ['spin_lock_irqsave', true],
    ['readFileSync', true],
    ['kvm_mmu_zap', true],
    ['function', false],
    ['EXPORT_SYMBOL_GPL', false],
    ['CamelCase', true],
    ['________', false],
    ['abcdefgh', false],
  ];
  for (const [name, want] of table) it(name, () => assert.equal(looksLikeIdentifier(name), want));
});

describe('identifiers: read from a corpus', () => {
  const tmp = tempDir('bench-identifiers');
  after(() => tmp.cleanup());
  const write = (rel: string, text: string) => {
    mkdirSync(join(tmp.path, rel, '..'), { recursive: true });
    writeFileSync(join(tmp.path, rel), text);
  };
  write('repo-a/main.c', 'static int parse_header_line(const char *line)\n{\n\treturn count_the_fields(line);\n}\nint count_the_fields(const char *s);\n');
  write('repo-b/app.ts', "import { readFileSync } from 'node:fs';\nexport const loadConfigFile = () => readFileSync('x');\n");
  write('repo-b/README.md', 'not_a_source_file mentioned here\n');
  write('repo-c/huge.c', `int ${'x'.repeat(300_000)};\nint too_large_file_name;\n`);
  write('repo-c/.git/config.c', 'int inside_git_directory;\n');

  it('finds each identifier once, with its first file and whether that file defines it', () => {
    const ids = corpusIdentifiers(tmp.path);
    const byName = new Map(ids.map((i) => [i.name, i]));
    assert.deepEqual([...byName.keys()].sort(), ['count_the_fields', 'loadConfigFile', 'parse_header_line', 'readFileSync']);
    assert.deepEqual(byName.get('parse_header_line'), { name: 'parse_header_line', file: 'repo-a/main.c', defined: true });
    // Declared with a `;`, called: not defined there.
    assert.equal(byName.get('count_the_fields')!.defined, false);
    assert.equal(byName.get('readFileSync')!.file, 'repo-b/app.ts');
  });

  it('leaves out the names it is told to (a query mix)', () => {
    const ids = corpusIdentifiers(tmp.path, { exclude: new Set(['readFileSync', 'count_the_fields']) });
    assert.deepEqual(ids.map((i) => i.name).sort(), ['loadConfigFile', 'parse_header_line']);
  });
});

/** Candidates spread over `repos` repositories, every third one defined, every other one in a .c file. */
function candidates(n: number, repos: number): Identifier[] {
  return Array.from({ length: n }, (_, i) => ({ name: `ident_${i}`, file: `r.${i % repos}/f${i}.${i % 2 === 0 ? 'c' : 'go'}`, defined: i % 3 === 0 }));
}

describe('identifiers: the seeded draw', () => {
  const pool = candidates(500, 20);
  const specs = {
    first: { count: 1 },
    warmup: { count: 50 },
    measured: { count: 200 },
    byRepo: { count: 30, distinctBy: repoOf },
    defined: { count: 30, accept: (c: Identifier) => c.defined },
  };

  it('gives the same sets for the same seed and candidates', () => {
    assert.deepEqual(drawSets(pool, specs, 7), drawSets([...pool], specs, 7));
  });

  it('gives other sets for another seed', () => {
    assert.notDeepEqual(drawSets(pool, specs, 7).measured, drawSets(pool, specs, 8).measured);
  });

  it('puts no candidate in two sets, and each set holds what it asked for', () => {
    const d = drawSets(pool, specs, 7);
    const all = Object.values(d)
      .flat()
      .map((c) => c.name);
    assert.equal(new Set(all).size, all.length);
    assert.equal(d.first.length, 1);
    assert.equal(d.warmup.length, 50);
    assert.equal(d.measured.length, 200);
    assert.equal(d.byRepo.length, 20, 'one per repository: there are 20');
    assert.equal(new Set(d.byRepo.map(repoOf)).size, 20);
    assert.equal(d.defined.length, 30);
    assert.ok(d.defined.every((c) => c.defined));
  });

  it('shrinks the sets of a measurement to the candidates there are', () => {
    const full = identifierSpecs(200, { runs: 100, ms: 500 }, true);
    assert.deepEqual(full, { first: { count: 1 }, warmup: { count: 100 }, measured: { count: 200 }, cold: { count: 201 } });
    const small = identifierSpecs(200, { runs: 100, ms: 500 }, true, 51);
    const total = small.first.count + small.warmup.count + small.measured.count + small.cold.count;
    assert.ok(total <= 51 && small.measured.count >= 1, JSON.stringify(small));
    assert.deepEqual(identifierSpecs(30, { runs: 2, ms: 20 }, false), {
      first: { count: 1 },
      warmup: { count: 10 },
      measured: { count: 30 },
      cold: { count: 0 },
    });
  });
});

describe('many repositories: the query kinds', () => {
  const pool = candidates(2000, 40);
  const { sets, kinds } = manyReposQueries(pool, 95, { count: 200, warmup: { runs: 100, ms: 500 }, cold: true, seed: 11 });
  const kind = (k: string) => kinds.find((x) => x.kind === k)!;
  const text = (k: string) => kind(k).requests.map((r) => ('search' in r ? r.search : r.get));

  it('has every kind, the identifiers `count` of them and the others a quarter as many', () => {
    assert.deepEqual(
      kinds.map((k) => k.kind),
      ['identifier', 'noHit', 'repo', 'lang', 'sym', 'reposPage'],
    );
    assert.deepEqual(text('identifier'), sets.measured);
    assert.equal(sets.measured.length, 200);
    assert.equal(sets.cold.length, 201);
    assert.equal(text('noHit').length, 10);
    assert.equal(text('lang').length, 50);
    assert.equal(text('sym').length, 50);
    assert.equal(text('repo').length, 40, 'one per repository');
  });

  it('makes each kind its query, and no identifier serves two', () => {
    for (const q of text('repo')) assert.match(q, /^repo:\^r\\\.\d+\$ ident_\d+$/);
    for (const q of text('lang')) assert.match(q, /^lang:c ident_\d*[02468]$/, 'from .c files');
    for (const q of text('sym')) assert.equal(Number(q.slice('sym:ident_'.length)) % 3, 0, 'defined ones');
    for (const q of text('noHit')) assert.match(q, /^trawl_nohit_[0-9a-f]{8}$/);
    assert.equal(new Set(text('noHit')).size, 10);
    assert.deepEqual(text('reposPage'), [
      '/api/repos?page=1&perPage=30',
      '/api/repos?page=2&perPage=30',
      '/api/repos?page=3&perPage=30',
      '/api/repos?page=4&perPage=30',
    ]);
    const idents = [
      sets.first,
      ...sets.warmup,
      ...sets.measured,
      ...sets.cold,
      ...['repo', 'lang', 'sym'].flatMap((k) => text(k).map((q) => q.split(/[ :]/).at(-1)!)),
    ];
    assert.equal(new Set(idents).size, idents.length);
  });

  it('gives the peers the same literal, under the repository for repo:, in .c and .h files for lang:c, nothing for sym: and the list', () => {
    const repo = kind('repo');
    for (const [i, p] of repo.peer!.entries()) {
      const [, name, ident] = /^repo:\^(.*)\$ (.*)$/.exec(text('repo')[i]!)!;
      assert.deepEqual(p.peer, { pattern: ident, regex: false, caseSensitive: true, path: name!.replace(/\\/g, '') });
    }
    assert.deepEqual(kind('lang').peer![0]!.peer!.extensions, ['c', 'h']);
    assert.equal(kind('identifier').peer![0]!.peer!.pattern, sets.measured[0]);
    assert.equal(kind('sym').peer, null);
    assert.equal(kind('reposPage').peer, null);
  });

  it('draws the same queries for the same seed', () => {
    assert.deepEqual(manyReposQueries(pool, 95, { count: 200, warmup: { runs: 100, ms: 500 }, cold: true, seed: 11 }).kinds, kinds);
  });
});
