// The house's floors (docs/design.md "Layout"): every import runs down.
//
// FLOORS lists trawl's parts bottom up. A file may import files of its own part and of
// parts on lower floors, nothing else:
// - no import to a higher floor;
// - no import between two parts of the same floor: peers stay independent, so the table
//   alone says which way every import may run (a part that needs a peer moves up a floor,
//   or the shared piece moves down to where its meaning lives);
// - no circle between parts, and none between files (a circle of files in one folder is
//   one job split in two, or two jobs tangled: git.ts and mirror.ts once were).
// Type-only imports count: a type is a dependency of meaning like any other.
//
// Scanned: daemon/ and core/ (the product) and the benchmark suite bench/suite/ (on top of
// it); tests and scripts may import any floor.
// A new folder under daemon/ fails here until it is given a floor. Check it by hand:
// `node --import tsx --test test/architecture/floors.test.ts`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { circles, importsOf, scanImports, sourceFiles, type Import } from './import-scan.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Bottom up. A part is a folder (or a single file) relative to the repository root. */
const FLOORS: ReadonlyArray<Readonly<Record<string, string>>> = [
  // At the bottom: the error every floor throws, where the program and its files are, and
  // how every floor reads a file it wrote (the configuration's floor and the index's alike).
  {
    'daemon/errors.ts': 'ServiceError, the one error type',
    'daemon/install-root.ts': 'where trawl is installed, and whether it runs compiled',
    'daemon/bounded-read.ts': 'reading a file with a size bound, refusing what is not a regular file',
  },
  {
    'daemon/config': 'the configuration file: types, loading, schema',
    core: 'the WebAssembly core and the TypeScript side that owns its memory',
    'daemon/glob': 'glob matching',
    'daemon/runtime': 'logger, lock files, process ownership, worker threads',
  },
  {
    'daemon/repos': 'git access: mirrors, refs, blobs, history, blame, diff; the code hosts',
    'daemon/symbols': 'universal-ctags: symbols of indexed files, outlines of one file',
  },
  // Above repos/: a repository's record holds its code host type, which repos/ defines.
  { 'daemon/store': 'the Store: repositories, users, credentials, OAuth, counters, audit events' },
  { 'daemon/index': 'shards: format, builder, reader, manifests, the indexer' },
  { 'daemon/query': 'parser, AST, regex analysis, n-gram plan' },
  {
    'daemon/search': 'per-shard evaluation, worker pool, merge, ranking, result shapes',
    'daemon/auth': 'identities, credentials, browser sessions, licenses, entitlements',
  },
  // Above auth/: the audit log records identities and counts refused credentials; the
  // limit counts an identity's requests.
  {
    'daemon/audit': 'the audit log (records what auth, oauth and the API do), and the identity changes it records (key issue, member change)',
    'daemon/ratelimit': 'the daily request limit and its counters',
    'daemon/history': 'the history index: every commit of a repository, built by the indexer, searched at any commit',
  },
  // Above audit/: it signs users in through auth/ and records its grants.
  { 'daemon/oauth': 'the OAuth authorization server' },
  {
    'daemon/sync': 'orchestration: syncing connections, the scheduler, local repositories',
    'daemon/permissions': 'orchestration: asking the code hosts who may read what, linking members to their accounts',
    'daemon/maintenance-rounds.ts': "the daemon's minute rounds: retired index files, unused OAuth clients, expired records",
  },
  // Above sync/: a cluster's index jobs run its repository sync; above search/: it fans
  // searches out. Webhooks turn a code host's deliveries into syncs of sync/. Watches search
  // again, as their owners, what a change of the index touched.
  {
    'daemon/cluster': 'a cluster of nodes: membership, placement, replication, jobs, fan-out search',
    'daemon/webhooks': "code hosts' webhook deliveries: verified, read, turned into repository syncs",
    'daemon/watches': 'watches: saved queries checked after each change of the index, their changes delivered',
  },
  { 'daemon/http': 'the HTTP API: server, routes, schemas, OpenAPI' },
  {
    'daemon/mcp': 'the tool server (MCP), answering through the HTTP routes',
    'daemon/web': 'the web UI',
  },
  { 'daemon/daemon.ts': 'the composition root: builds and starts everything' },
  { 'daemon/cli': 'the command line' },
  // A tool beside the product: the command line starts it by path (install-root.ts), never imports it.
  { 'bench/suite': 'trawl bench: starts daemons and measures them' },
];

/** Not source: the core's build output. */
const SKIP = ['core/build'];

const floorOf = new Map<string, number>();
FLOORS.forEach((parts, floor) => {
  for (const part of Object.keys(parts)) floorOf.set(part, floor);
});

/** The part `path` belongs to, undefined when none. */
function partOf(path: string): string | undefined {
  for (const part of floorOf.keys()) if (path === part || path.startsWith(`${part}/`)) return part;
  return undefined;
}

/** The table, one floor a line, for failure messages. */
function table(): string {
  return FLOORS.map((parts, f) => `  ${f}: ${Object.keys(parts).join(', ')}`)
    .reverse()
    .join('\n');
}

/** Why `i` breaks the floors, or undefined when it runs down. */
function violation(i: Import): string | undefined {
  const from = partOf(i.from)!;
  const to = partOf(i.to);
  const at = `${i.from}:${i.line} imports '${i.spec}'`;
  if (to === undefined) return `${at}, which is on no floor (${i.to}): imports stay inside the floors of FLOORS`;
  if (to === from) return undefined;
  const a = floorOf.get(from)!;
  const b = floorOf.get(to)!;
  if (b < a) return undefined;
  const where = b === a ? `its peer ${to}, also on floor ${b}` : `${to} on floor ${b}, above it`;
  const allowed = a === 0 ? 'nothing outside itself' : a === 1 ? 'only from floor 0' : `only from floors 0-${a - 1}`;
  return `${at}: ${from} is on floor ${a} and may import ${allowed}, not ${where}`;
}

function scan(): { files: string[]; imports: Import[] } {
  const files = sourceFiles(ROOT, ['daemon', 'core', 'bench/suite'], SKIP);
  return { files, imports: scanImports(ROOT, files) };
}

test('the scanner sees every form of import, and no commented one', () => {
  const source = [
    "import a from './a.ts';",
    "import type { B } from '../b.ts';",
    'import {',
    '  c,',
    '  type C,',
    "} from './c.ts';",
    "export { d } from './d.ts';",
    "export * from './e.ts';",
    "import './f.ts';",
    "const g = await import('./g.ts');",
    "// const h = await import('./h.ts');",
    "/* const i = await import('./i.ts'); */",
    " * const j = await import('./j.ts');",
    'const k = \'import l from "./l.ts"\';',
    "export const m = new URL('./m.ts', import.meta.url);",
    "import n from 'node:fs';",
  ].join('\n');
  assert.deepEqual(importsOf(source), [
    { spec: './a.ts', line: 1 },
    { spec: '../b.ts', line: 2 },
    { spec: './c.ts', line: 3 },
    { spec: './d.ts', line: 7 },
    { spec: './e.ts', line: 8 },
    { spec: './f.ts', line: 9 },
    { spec: './g.ts', line: 10 },
    { spec: 'node:fs', line: 16 },
  ]);
});

test('circles are found, and only circles', () => {
  const graph = (pairs: string[]) => {
    const g = new Map<string, Set<string>>();
    for (const p of pairs) {
      const [a, b] = p.split('>') as [string, string];
      if (!g.has(a)) g.set(a, new Set());
      g.get(a)!.add(b);
    }
    return g;
  };
  assert.deepEqual(circles(graph(['a>b', 'b>c', 'a>c'])), []);
  assert.deepEqual(circles(graph(['a>b', 'b>c', 'c>a', 'c>d', 'd>e', 'e>d'])), [
    ['d', 'e'],
    ['a', 'b', 'c'],
  ]);
});

test('every scanned file is on a floor, and the scan sees the house', () => {
  const { files, imports } = scan();
  const homeless = files.filter((f) => partOf(f) === undefined);
  assert.deepEqual(homeless, [], `files on no floor: give their folder a floor in FLOORS (${homeless.join(', ')})`);
  // A scan that finds nothing passes everything: it must see what is surely there.
  assert.ok(files.length > 150, `only ${files.length} files scanned`);
  assert.ok(
    imports.some((i) => i.from === 'daemon/cli/main.ts' && i.to === 'daemon/errors.ts'),
    'the scan misses daemon/cli/main.ts importing daemon/errors.ts',
  );
  assert.ok(
    imports.some((i) => i.from.startsWith('core/assembly/')),
    "the scan misses the core's own imports",
  );
  for (const part of floorOf.keys())
    assert.ok(
      files.some((f) => partOf(f) === part),
      `${part} is in FLOORS but holds no source file`,
    );
});

test('every import runs down the floors', () => {
  const wrong = scan()
    .imports.map(violation)
    .filter((v) => v !== undefined);
  assert.equal(
    wrong.length,
    0,
    `${wrong.length} imports run up or sideways:\n${wrong.join('\n')}\n` +
      `Imports run down: move the shared piece down to the lowest floor that gives it meaning, or the importer up. The floors, top down:\n${table()}`,
  );
});

test('no circle between parts', () => {
  const edges = new Map<string, Set<string>>();
  const example = new Map<string, Import>();
  for (const i of scan().imports) {
    const a = partOf(i.from)!;
    const b = partOf(i.to);
    if (b === undefined || a === b) continue;
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a)!.add(b);
    if (!example.has(`${a}>${b}`)) example.set(`${a}>${b}`, i);
  }
  const found = circles(edges).map((c) => {
    const links = [...example.entries()].filter(([k]) => c.includes(k.split('>')[0]!) && c.includes(k.split('>')[1]!));
    return `${c.join(' <-> ')}: ${links.map(([, i]) => `${i.from}:${i.line} imports '${i.spec}'`).join('; ')}`;
  });
  assert.equal(found.length, 0, `parts that import each other (imports run one way, down the floors):\n${found.join('\n')}\nThe floors, top down:\n${table()}`);
});

test('no circle between files', () => {
  const edges = new Map<string, Set<string>>();
  for (const i of scan().imports) {
    if (!edges.has(i.from)) edges.set(i.from, new Set());
    edges.get(i.from)!.add(i.to);
  }
  const found = circles(edges).map((c) => c.join(' <-> '));
  assert.equal(found.length, 0, `files that import each other, directly or around a circle (give the shared piece a file of its own):\n${found.join('\n')}`);
});
