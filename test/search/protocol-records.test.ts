// The records every search message declares up front (protocol.ts RECORDS): the objects a
// real search packs (a shard's reply, whose files travel apart, file-codec.ts; a task's
// shards, with or without their membership and symbols files and repository) have exactly
// those key lists (or they would be defined in every message again, silently slower), and
// two threads' packers agree on any object, of a declared shape or not, in both directions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Packr } from 'msgpackr';
import { memberRef, RECORDS, packr, shardRef } from '../../daemon/search/protocol.ts';
import { resultRepo, shapeInto, unshapedFile } from '../../daemon/search/file-json.ts';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

function keyLists(v: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(v)) for (const x of v) keyLists(x, out);
  else if (v && typeof v === 'object' && !(v instanceof Uint8Array)) {
    out.add(Object.keys(v).join(','));
    for (const x of Object.values(v)) keyLists(x, out);
  }
  return out;
}

test("a shard's reply holds only objects of the declared records", async () => {
  const dir = tempDir('records');
  try {
    mkdirSync(dirname(join(dir.path, 'tree', 'src/a.c')), { recursive: true });
    writeFileSync(join(dir.path, 'tree', 'src/a.c'), 'int needle(void) {\n  return needle_count;\n}\n');
    const dataDir = join(dir.path, 'data');
    await indexLocal(join(dir.path, 'tree'), { dataDir, workers: 1 });
    const m = readAllManifests(dataDir)[0]!;
    const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
    const plan = planQuery({ query: 'needle', isRegexEnabled: false, isCaseSensitivityEnabled: false });
    const result = searchShard(shard, { plan, matchers: planTerms(plan).map((t) => new Matcher(t, 'indexed')), limit: 100 });
    const repo = resultRepo(m.repoId, undefined, shard);
    const files = result.hits.map((h) => unshapedFile(h, repo, shard.name(h.doc), 0));
    assert.ok(files.length > 0);
    for (const f of files) shapeInto(f, shard, repo, { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://h' });
    result.hits = [];
    // The files travel apart (file-codec.ts): the packed reply holds none.
    const reply = { status: 'done', result, files: [], repositories: [repo.info], queuedNs: 1 };
    const declared = new Set(RECORDS.map((k) => k.join(',')));
    for (const keys of keyLists(reply, new Set())) assert.ok(declared.has(keys), `undeclared record {${keys}}`);
  } finally {
    dir.cleanup();
  }
});

test("a task's shards hold only objects of the declared records", () => {
  const repo = {
    name: 'r',
    displayName: 'r',
    codeHostType: 'github' as const,
    archived: false,
    fork: false,
    visibility: 'public' as const,
    kind: 'git' as const,
    source: '/r',
  };
  const refs = [
    shardRef('/d/1/g1-0.trawl', [memberRef(0, 1)]),
    shardRef('/d/1/g1-0.trawl', [memberRef(0, 1)], '/d/1/g2-m0.branches'),
    shardRef('/d/1/g1-0.trawl', [memberRef(0, 1, repo)], undefined, '/d/1/g2-y0.symbols'),
    shardRef('/d/1/g1-0.trawl', [memberRef(0, 1, { ...repo, externalWebUrl: 'https://github.com/o/r' })], '/d/1/g3-m0.branches', '/d/1/g2-y0.symbols'),
    shardRef('/d/packs/p1-0.trawl', [memberRef(0, 1, repo), memberRef(3, 7)], undefined, '/d/packs/p2-y0.symbols'),
  ];
  const declared = new Set(RECORDS.map((k) => k.join(',')));
  for (const keys of keyLists(refs, new Set())) assert.ok(declared.has(keys), `undeclared record {${keys}}`);
  assert.deepEqual(packr.unpack(packr.pack(refs[3])), refs[3]);
});

test('two packers built like the threads agree on objects of declared and other shapes, both ways', () => {
  const other = new Packr({ useRecords: true, structures: RECORDS.map((k) => [...k]), maxSharedStructures: RECORDS.length } as ConstructorParameters<
    typeof Packr
  >[0]);
  let seed = 5;
  const r = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const names = ['status', 'result', 'a', 'b', 'json', 'doc', 'ranges', 'planId', 'x', 'shardPath', 'repoId'];
  const value = (depth: number): unknown => {
    const k = r();
    if (depth > 2 || k < 0.3) return Math.floor(r() * 1000);
    if (k < 0.4) return `text${Math.floor(r() * 10)}`;
    if (k < 0.5) return [value(depth + 1), value(depth + 1)];
    if (k < 0.7) {
      const keys = RECORDS[Math.floor(r() * RECORDS.length)]!;
      return Object.fromEntries(keys.map((key) => [key, value(depth + 1)]));
    }
    const o: Record<string, unknown> = {};
    for (let i = 0; i < 1 + Math.floor(r() * 4); i++) o[names[Math.floor(r() * names.length)]!] = value(depth + 1);
    return o;
  };
  for (let i = 0; i < 2000; i++) {
    const v = [value(0), value(0)];
    const [from, to] = i % 2 === 0 ? [packr, other] : [other, packr];
    assert.deepEqual(to.unpack(new Uint8Array(from.pack(v))), v, `message ${i}`);
  }
});
