// The Store conformance suite (ARCHITECTURE.md section 3): every backend runs it, so the
// daemon can rely on the rules below whichever one is configured. A backend's test file
// calls storeConformance once per way of opening it (see sqlite-store.test.ts).
//
// Rules pinned here beyond the interface's own comments, so that backends agree:
// - listRepos orders by repoName in UTF-8 byte order (SQL: BINARY / COLLATE "C"), the order
//   the rest of trawl uses for paths; rows of one name (deleted ones) by repoId.
//   listConnections orders by name, likewise.
// - getRepoByName sees only the live row; getRepo(id) also returns deleted rows.
// - Patches: an absent key keeps the value; an optional field given as undefined is
//   cleared; a required field given as undefined is left alone.
// - updateRepo and updateConnection throw for an unknown id; deleteConnection of an unknown
//   id does nothing. upsertConnection of a known name updates its type and keeps its id.
// - A repository's connectionId must name an existing connection; deleting the connection
//   keeps its repositories (same ids) and clears their connectionId.
// - Returned records are snapshots: changing one changes nothing in the store.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConnectionRecord, IndexedRef, RepoFields, RepoRecord, Store } from '../../daemon/store/store.ts';

export interface ConformanceOptions {
  /**
   * Every open() within one test reaches the same data (a file, a server): default true.
   * False for ':memory:'-style stores, where each open() is a new, empty store; the tests
   * that need two handles on one store (concurrent writers, reopening) are then skipped.
   */
  sharedStorage?: boolean;
}

interface Ctx {
  /** Another handle on the same storage (tracked and closed at the end of the test). */
  open(): Promise<Store>;
  close(store: Store): void;
}

const T1 = '2024-01-02T03:04:05.000Z';
const T2 = '2024-01-02T04:04:05.000Z';
const T3 = '2024-02-01T00:00:00.000Z';
const SHA_A = 'a'.repeat(40);
const SHA_B = '0123456789abcdef0123456789abcdef01234567';

function fields(repoName: string, extra: Partial<RepoFields> = {}): RepoFields {
  return {
    repoName,
    displayName: repoName.slice(repoName.indexOf('/') + 1),
    codeHostType: 'github',
    isFork: false,
    isArchived: false,
    visibility: 'public',
    ...extra,
  };
}

/** The record a fresh upsertRepo(fields(name)) must return. */
function fresh(repoId: number, repoName: string): RepoRecord {
  return { repoId, ...fields(repoName), state: 'new', failures: 0, indexedRefs: [] };
}

/** Optional fields are omitted, never present as undefined or null. */
function assertNoEmptyValues(record: RepoRecord | ConnectionRecord): void {
  for (const [key, value] of Object.entries(record)) {
    assert.ok(value !== undefined && value !== null, `${key} is present as ${String(value)}; it should be omitted`);
  }
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Registers the suite under `describe(name)`. `open` returns a handle on the backend's
 * storage; within one test every call reaches the same data (unless sharedStorage is false).
 * `cleanup`, when given, runs after each test once its stores are closed, and must leave the
 * next test an empty store.
 */
export function storeConformance(
  name: string,
  open: () => Store | Promise<Store>,
  cleanup?: () => void,
  options: ConformanceOptions = {},
): void {
  const shared = options.sharedStorage ?? true;

  function storeTest(
    title: string,
    fn: (store: Store, ctx: Ctx) => void | Promise<void>,
    needs: { sharedStorage?: boolean } = {},
  ): void {
    const skip = needs.sharedStorage === true && !shared ? 'needs two handles on one store' : false;
    test(title, { skip }, async () => {
      const open_: Store[] = [];
      const ctx: Ctx = {
        open: async () => {
          const store = await open();
          open_.push(store);
          return store;
        },
        close: (store) => {
          const i = open_.indexOf(store);
          if (i >= 0) open_.splice(i, 1);
          store.close();
        },
      };
      try {
        await fn(await ctx.open(), ctx);
      } finally {
        for (const store of open_) store.close();
        cleanup?.();
      }
    });
  }

  describe(name, () => {
    // ---- repositories ----

    storeTest('upsertRepo creates a repository: state new, no failures, no refs, optional fields omitted', (store) => {
      const r = store.upsertRepo(fields('github.com/acme/widgets'));
      assert.ok(Number.isSafeInteger(r.repoId) && r.repoId > 0, `repoId ${r.repoId}`);
      assert.deepEqual(r, fresh(r.repoId, 'github.com/acme/widgets'));
      assertNoEmptyValues(r);
      assert.deepEqual(store.getRepo(r.repoId), r);
      assert.deepEqual(store.getRepoByName('github.com/acme/widgets'), r);
      assert.deepEqual(store.listRepos(), [r]);
    });

    storeTest('upsertRepo gives each new name the next, larger id', (store) => {
      const ids = ['github.com/a/1', 'github.com/a/2', 'github.com/a/3'].map((n) => store.upsertRepo(fields(n)).repoId);
      assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `ids ${ids.join(', ')}`);
    });

    storeTest('every field round-trips', (store) => {
      const conn = store.upsertConnection('acme-gitlab', 'gitlab');
      const refs: IndexedRef[] = [
        { name: 'main', kind: 'branch', commit: SHA_A },
        { name: 'v1.2.3', kind: 'tag', commit: SHA_B },
      ];
      const all: RepoFields = {
        repoName: 'gitlab.example.com/group/sub/project',
        displayName: 'group/sub/project',
        codeHostType: 'gitlab',
        connectionId: conn.id,
        cloneUrl: 'https://gitlab.example.com/group/sub/project.git',
        externalWebUrl: 'https://gitlab.example.com/group/sub/project',
        imageUrl: 'https://gitlab.example.com/uploads/avatar.png',
        defaultBranch: 'trunk',
        isFork: true,
        isArchived: true,
        visibility: 'private',
        pushedAt: T1,
        indexedAt: T2,
        state: 'failed',
        lastError: 'clone failed: "auth" \n second line',
        lastErrorAt: T3,
        lastSuccessAt: T2,
        failures: 3,
        nextAttemptAt: T3,
        indexedRefs: refs,
      };
      const created = store.upsertRepo(fields(all.repoName));
      const r = store.upsertRepo(all);
      assert.equal(r.repoId, created.repoId);
      assert.deepEqual(r, { repoId: created.repoId, ...all });
      assert.deepEqual(store.getRepo(r.repoId), r);
      assert.deepEqual(store.getRepoByName(all.repoName), r);
      assert.deepEqual(store.listRepos(), [r]);
    });

    storeTest('upsertRepo of a live name merges the given fields into that row', (store) => {
      const name = 'github.com/acme/merge';
      const first = store.upsertRepo(
        fields(name, { cloneUrl: 'https://a/clone', imageUrl: 'https://a/img', defaultBranch: 'main' }),
      );
      const refs: IndexedRef[] = [{ name: 'main', kind: 'branch', commit: SHA_A }];
      const indexed = store.updateRepo(first.repoId, {
        state: 'indexed',
        indexedAt: T1,
        lastSuccessAt: T1,
        indexedRefs: refs,
      });

      const { cloneUrl: _omitted, ...withoutCloneUrl } = fields(name, {
        displayName: 'Acme Merge',
        isArchived: true,
        imageUrl: undefined, // given as undefined: cleared
        defaultBranch: 'develop',
      });
      const merged = store.upsertRepo(withoutCloneUrl); // cloneUrl absent: kept

      const { imageUrl: _cleared, ...expected } = {
        ...indexed,
        displayName: 'Acme Merge',
        isArchived: true,
        defaultBranch: 'develop',
      };
      assert.deepEqual(merged, expected);
      assert.equal(merged.cloneUrl, 'https://a/clone');
      assert.equal(merged.state, 'indexed', 'state is kept when not given');
      assert.deepEqual(merged.indexedRefs, refs, 'indexedRefs are kept when not given');
      assertNoEmptyValues(merged);
      assert.deepEqual(store.getRepo(first.repoId), merged);
      assert.equal(store.listRepos({ includeDeleted: true }).length, 1);
    });

    storeTest('upsertRepo may set state, failures and indexedRefs of a live row', (store) => {
      const r = store.upsertRepo(fields('github.com/acme/s'));
      const refs: IndexedRef[] = [{ name: 'v1', kind: 'tag', commit: SHA_B }];
      const u = store.upsertRepo(fields('github.com/acme/s', { state: 'failed', failures: 2, indexedRefs: refs }));
      assert.deepEqual(u, { ...r, state: 'failed', failures: 2, indexedRefs: refs });
    });

    storeTest('ids are never reused: a deleted name comes back as a new repository with a new id', (store) => {
      const a = store.upsertRepo(fields('github.com/acme/a'));
      const b = store.upsertRepo(
        fields('github.com/acme/b', { cloneUrl: 'https://b', state: 'failed', failures: 4, lastError: 'x' }),
      );
      const deleted = store.updateRepo(b.repoId, { state: 'deleted' });
      assert.deepEqual(deleted, { ...b, state: 'deleted' });

      // The row stays (getRepo) but no longer answers to its name.
      assert.deepEqual(store.getRepo(b.repoId), deleted);
      assert.equal(store.getRepoByName('github.com/acme/b'), undefined);
      assert.deepEqual(store.listRepos(), [a]);

      // b held the highest id when it was deleted: the next id is still larger.
      const c = store.upsertRepo(fields('github.com/acme/c'));
      assert.ok(c.repoId > b.repoId, `c ${c.repoId} after deleted b ${b.repoId}`);

      const b2 = store.upsertRepo(fields('github.com/acme/b'));
      assert.ok(b2.repoId > c.repoId, `b2 ${b2.repoId}`);
      assert.deepEqual(b2, fresh(b2.repoId, 'github.com/acme/b'), 'nothing carries over from the deleted row');
      assert.deepEqual(store.getRepo(b.repoId), deleted, 'the deleted row is untouched');
      assert.deepEqual(store.getRepoByName('github.com/acme/b'), b2);
      assert.deepEqual(store.listRepos(), [a, b2, c]);
      assert.deepEqual(store.listRepos({ includeDeleted: true }), [a, deleted, b2, c]);

      // Deleted twice over: two deleted rows share the name, and it still comes back.
      const deleted2 = store.updateRepo(b2.repoId, { state: 'deleted' });
      const b3 = store.upsertRepo(fields('github.com/acme/b'));
      assert.ok(b3.repoId > b2.repoId);
      assert.deepEqual(store.listRepos({ includeDeleted: true }), [a, deleted, deleted2, b3, c]);
      assert.deepEqual(
        new Set(store.listRepos({ includeDeleted: true }).map((r) => r.repoId)).size,
        5,
        'all ids distinct',
      );
    });

    storeTest('updateRepo merges a patch; undefined clears optional fields and leaves required ones', (store) => {
      const r = store.upsertRepo(fields('github.com/acme/u', { cloneUrl: 'https://u' }));
      const failed = store.updateRepo(r.repoId, {
        state: 'failed',
        lastError: 'boom',
        lastErrorAt: T1,
        failures: 1,
        nextAttemptAt: T2,
      });
      assert.deepEqual(failed, { ...r, state: 'failed', lastError: 'boom', lastErrorAt: T1, failures: 1, nextAttemptAt: T2 });

      const refs: IndexedRef[] = [{ name: 'main', kind: 'branch', commit: SHA_B }];
      const ok = store.updateRepo(r.repoId, {
        state: 'indexed',
        failures: 0,
        lastError: undefined,
        lastErrorAt: undefined,
        nextAttemptAt: undefined,
        indexedAt: T3,
        lastSuccessAt: T3,
        indexedRefs: refs,
      });
      assert.deepEqual(ok, { ...r, state: 'indexed', indexedAt: T3, lastSuccessAt: T3, indexedRefs: refs });
      assertNoEmptyValues(ok);
      assert.deepEqual(store.getRepo(r.repoId), ok);

      assert.deepEqual(store.updateRepo(r.repoId, { displayName: undefined, isFork: undefined }), ok);
      assert.deepEqual(store.updateRepo(r.repoId, {}), ok);
      const renamed = store.updateRepo(r.repoId, { repoName: 'github.com/acme/renamed', displayName: 'acme/renamed' });
      assert.deepEqual(renamed, { ...ok, repoName: 'github.com/acme/renamed', displayName: 'acme/renamed' });
      assert.deepEqual(store.getRepoByName('github.com/acme/renamed'), renamed);
      assert.equal(store.getRepoByName('github.com/acme/u'), undefined);
    });

    storeTest('unknown ids: updateRepo throws and creates nothing; lookups return undefined', (store) => {
      const r = store.upsertRepo(fields('github.com/acme/known'));
      const unknown = r.repoId + 1000;
      assert.throws(() => store.updateRepo(unknown, { state: 'indexed' }), Error);
      assert.equal(store.getRepo(unknown), undefined);
      assert.equal(store.getRepoByName('github.com/acme/unknown'), undefined);
      assert.deepEqual(store.listRepos({ includeDeleted: true }), [r]);
    });

    storeTest('a live name belongs to one repository: renaming or reviving onto it fails', (store) => {
      const a = store.upsertRepo(fields('github.com/acme/a'));
      const b = store.upsertRepo(fields('github.com/acme/b'));
      assert.throws(() => store.updateRepo(b.repoId, { repoName: a.repoName }));
      assert.deepEqual(store.getRepo(b.repoId), b, 'a failed update changes nothing');

      store.updateRepo(a.repoId, { state: 'deleted' });
      const a2 = store.upsertRepo(fields('github.com/acme/a'));
      assert.throws(() => store.updateRepo(a.repoId, { state: 'new' }), Error, 'the old row cannot come back beside a2');
      assert.deepEqual(store.listRepos(), [a2, b]);
    });

    storeTest('listRepos sorts by repoName in UTF-8 byte order', (store) => {
      const names = [
        'gitlab.com/z/z',
        'github.com/acme/b',
        'github.com/acme/B',
        'github.com/acme/a-b',
        'github.com/acme/a',
        'github.com/acme/a/b',
        'github.com/acme/é',
        'github.com/acme/\u{1F600}', // UTF-16 sorts this before U+FF5A; UTF-8 after
        'github.com/acme/\u{FF5A}',
        'bitbucket.org/x/y',
      ];
      for (const n of names) store.upsertRepo(fields(n));
      const expected = [...names].sort(byteOrder);
      assert.deepEqual(
        store.listRepos().map((r) => r.repoName),
        expected,
      );
    });

    storeTest('listRepos filters by includeDeleted and connectionId', (store) => {
      const c1 = store.upsertConnection('one', 'github');
      const c2 = store.upsertConnection('two', 'gitea');
      const r1 = store.upsertRepo(fields('github.com/o/r1', { connectionId: c1.id }));
      const r2 = store.updateRepo(store.upsertRepo(fields('github.com/o/r2', { connectionId: c1.id })).repoId, {
        state: 'deleted',
      });
      const r3 = store.upsertRepo(fields('gitea.com/o/r3', { connectionId: c2.id, codeHostType: 'gitea' }));
      const r4 = store.upsertRepo(fields('local/r4', { codeHostType: 'genericGitHost' }));

      assert.deepEqual(store.listRepos(), [r3, r1, r4]);
      assert.deepEqual(store.listRepos({}), [r3, r1, r4]);
      assert.deepEqual(store.listRepos({ includeDeleted: false }), [r3, r1, r4]);
      assert.deepEqual(store.listRepos({ includeDeleted: true }), [r3, r1, r2, r4]);
      assert.deepEqual(store.listRepos({ connectionId: c1.id }), [r1]);
      assert.deepEqual(store.listRepos({ connectionId: c1.id, includeDeleted: true }), [r1, r2]);
      assert.deepEqual(store.listRepos({ connectionId: c2.id }), [r3]);
      assert.deepEqual(store.listRepos({ connectionId: Math.max(c1.id, c2.id) + 100 }), []);
    });

    storeTest('indexedRefs round-trip exactly: order, kinds, unusual names, empty', (store) => {
      const r = store.upsertRepo(fields('github.com/acme/refs'));
      const refs: IndexedRef[] = [
        { name: 'zeta', kind: 'branch', commit: SHA_B },
        { name: 'alpha', kind: 'tag', commit: SHA_A },
        { name: 'feature/ünï "quoted" \\ back', kind: 'branch', commit: SHA_A },
      ];
      assert.deepEqual(store.updateRepo(r.repoId, { indexedRefs: refs }).indexedRefs, refs);
      assert.deepEqual(store.getRepo(r.repoId)?.indexedRefs, refs);
      assert.deepEqual(store.listRepos()[0]?.indexedRefs, refs);
      assert.deepEqual(store.updateRepo(r.repoId, { indexedRefs: [] }).indexedRefs, []);
      assert.deepEqual(store.getRepo(r.repoId)?.indexedRefs, []);
    });

    storeTest('returned records are snapshots', (store) => {
      const refs: IndexedRef[] = [{ name: 'main', kind: 'branch', commit: SHA_A }];
      const r = store.upsertRepo(fields('github.com/acme/snap', { indexedRefs: refs }));
      const copy = structuredClone(r);
      r.displayName = 'changed';
      r.indexedRefs.push({ name: 'x', kind: 'tag', commit: SHA_B });
      refs.push({ name: 'y', kind: 'tag', commit: SHA_B });
      assert.deepEqual(store.getRepo(copy.repoId), copy);
      const c = store.upsertConnection('snap', 'github');
      c.connectionType = 'gitlab';
      assert.equal(store.listConnections()[0]?.connectionType, 'github');
    });

    storeTest('a repository cannot point at an unknown connection', (store) => {
      const c = store.upsertConnection('real', 'github');
      assert.throws(() => store.upsertRepo(fields('github.com/acme/x', { connectionId: c.id + 100 })));
      assert.deepEqual(store.listRepos({ includeDeleted: true }), []);
      const r = store.upsertRepo(fields('github.com/acme/x', { connectionId: c.id }));
      assert.throws(() => store.updateRepo(r.repoId, { connectionId: c.id + 100 }));
      assert.deepEqual(store.getRepo(r.repoId), r);
    });

    // ---- connections ----

    storeTest('upsertConnection creates one connection per name, with growing ids', (store) => {
      const a = store.upsertConnection('work', 'github');
      assert.ok(Number.isSafeInteger(a.id) && a.id > 0);
      assert.deepEqual(a, { id: a.id, name: 'work', connectionType: 'github' });
      assertNoEmptyValues(a);
      assert.deepEqual(store.upsertConnection('work', 'github'), a);
      const b = store.upsertConnection('Home', 'gitlab');
      assert.ok(b.id > a.id);
      assert.deepEqual(store.upsertConnection('work', 'github'), a);
      const c = store.upsertConnection('archive', 'git');
      assert.ok(c.id > b.id, 'repeated upserts of known names use up no ids');
      assert.deepEqual(store.listConnections(), [b, c, a], 'sorted by name, byte order');
    });

    storeTest('upsertConnection of a known name takes the new type and keeps id and status', (store) => {
      const a = store.upsertConnection('work', 'github');
      const synced = store.updateConnection(a.id, { lastSyncedAt: T1 });
      const retyped = store.upsertConnection('work', 'gitea');
      assert.deepEqual(retyped, { ...synced, connectionType: 'gitea' });
      assert.deepEqual(store.listConnections(), [retyped]);
    });

    storeTest('updateConnection merges status fields; undefined clears; unknown ids throw', (store) => {
      const a = store.upsertConnection('work', 'github');
      const failed = store.updateConnection(a.id, { lastError: 'HTTP 401', lastErrorAt: T2, lastSyncedAt: T1 });
      assert.deepEqual(failed, { ...a, lastError: 'HTTP 401', lastErrorAt: T2, lastSyncedAt: T1 });
      const ok = store.updateConnection(a.id, { lastError: undefined, lastErrorAt: undefined, lastSyncedAt: T3 });
      assert.deepEqual(ok, { ...a, lastSyncedAt: T3 });
      assertNoEmptyValues(ok);
      assert.deepEqual(store.updateConnection(a.id, { connectionType: undefined }), ok);
      assert.deepEqual(store.listConnections(), [ok]);
      assert.throws(() => store.updateConnection(a.id + 100, { lastSyncedAt: T1 }), Error);
      assert.deepEqual(store.listConnections(), [ok]);
    });

    storeTest('deleteConnection removes it; its repositories keep their ids and lose the link', (store) => {
      const a = store.upsertConnection('a', 'github');
      const b = store.upsertConnection('b', 'gitlab');
      const r1 = store.upsertRepo(fields('github.com/o/1', { connectionId: a.id }));
      const r2 = store.updateRepo(store.upsertRepo(fields('github.com/o/2', { connectionId: a.id })).repoId, {
        state: 'deleted',
      });
      const r3 = store.upsertRepo(fields('gitlab.com/o/3', { connectionId: b.id, codeHostType: 'gitlab' }));

      store.deleteConnection(a.id);
      assert.deepEqual(store.listConnections(), [b]);
      const { connectionId: _1, ...r1After } = r1;
      const { connectionId: _2, ...r2After } = r2;
      assert.deepEqual(store.getRepo(r1.repoId), r1After);
      assert.deepEqual(store.getRepo(r2.repoId), r2After);
      assert.deepEqual(store.getRepo(r3.repoId), r3);
      assert.deepEqual(store.listRepos({ connectionId: a.id, includeDeleted: true }), []);

      store.deleteConnection(a.id); // unknown now: nothing happens
      store.deleteConnection(b.id + 100);
      assert.deepEqual(store.listConnections(), [b]);

      const a2 = store.upsertConnection('a', 'github');
      assert.ok(a2.id > b.id, 'a deleted connection name comes back with a new id');
      assert.throws(() => store.updateConnection(a.id, { lastSyncedAt: T1 }));
    });

    // ---- several handles on one store ----

    storeTest(
      'two stores on the same data see each other and give a name one row and one id',
      async (store, ctx) => {
        const other = await ctx.open();
        const x1 = store.upsertRepo(fields('github.com/acme/x'));
        const x2 = other.upsertRepo(fields('github.com/acme/x', { displayName: 'X' }));
        assert.equal(x2.repoId, x1.repoId);
        assert.deepEqual(store.getRepo(x1.repoId), x2);

        const y = store.upsertRepo(fields('github.com/acme/y'));
        const z = other.upsertRepo(fields('github.com/acme/z'));
        assert.equal(store.upsertRepo(fields('github.com/acme/z')).repoId, z.repoId);
        assert.equal(new Set([x1.repoId, y.repoId, z.repoId]).size, 3);
        assert.deepEqual(store.listRepos(), other.listRepos());
        assert.equal(store.listRepos().length, 3);

        // A deletion through one handle frees the name for the other.
        other.updateRepo(y.repoId, { state: 'deleted' });
        const y2 = store.upsertRepo(fields('github.com/acme/y'));
        assert.ok(y2.repoId > z.repoId);

        const c1 = store.upsertConnection('shared', 'github');
        const c2 = other.upsertConnection('shared', 'github');
        assert.equal(c2.id, c1.id);
        assert.deepEqual(other.listConnections(), [c1]);
      },
      { sharedStorage: true },
    );

    storeTest(
      'reopening keeps everything, and ids keep growing past every id ever given',
      async (store, ctx) => {
        const conn = store.upsertConnection('work', 'github');
        store.updateConnection(conn.id, { lastSyncedAt: T1 });
        store.upsertRepo(
          fields('github.com/acme/kept', {
            connectionId: conn.id,
            indexedRefs: [{ name: 'main', kind: 'branch', commit: SHA_A }],
            isFork: true,
          }),
        );
        const last = store.upsertRepo(fields('github.com/acme/last'));
        store.updateRepo(last.repoId, { state: 'deleted', lastError: 'gone' });
        const repos = store.listRepos({ includeDeleted: true });
        const connections = store.listConnections();
        ctx.close(store);

        for (let round = 0; round < 2; round++) {
          const again = await ctx.open();
          assert.deepEqual(again.listRepos({ includeDeleted: true }), repos);
          assert.deepEqual(again.listConnections(), connections);
          ctx.close(again);
        }

        const final = await ctx.open();
        const next = final.upsertRepo(fields('github.com/acme/last'));
        assert.ok(next.repoId > last.repoId, 'the deleted highest id is not handed out again');
        const c = final.upsertConnection('other', 'gitlab');
        assert.ok(c.id > conn.id);
      },
      { sharedStorage: true },
    );

    // ---- users and API keys ----

    storeTest('users: create, find by id and by email (case-insensitive), list by email, conflicts', (store) => {
      const b = store.createUser({ email: 'bea@example.com', name: 'Bea', role: 'member' }, T1);
      const a = store.createUser({ email: 'Al@Example.com', name: 'Al', role: 'owner' }, T2);
      assert.match(b.id, /^usr_[0-9a-f]{24}$/);
      assert.notEqual(a.id, b.id);
      assert.deepEqual(b, { id: b.id, email: 'bea@example.com', name: 'Bea', role: 'member', createdAt: T1, updatedAt: T1 });
      assertNoEmptyValues(b as never);
      assert.deepEqual(store.getUser(b.id), b);
      assert.deepEqual(store.getUserByEmail('BEA@example.COM'), b);
      assert.equal(store.getUserByEmail('nobody@example.com'), undefined);
      assert.deepEqual(store.listUsers().map((u) => u.email), ['Al@Example.com', 'bea@example.com']);
      assert.throws(() => store.createUser({ email: 'bea@EXAMPLE.com', name: 'Other', role: 'member' }, T3), (e: Error) => e.name === 'StoreConflictError');
      assert.equal(store.listUsers().length, 2);
    });

    storeTest('users: patches set and clear optional fields; activity alone leaves updatedAt', (store) => {
      const u = store.createUser({ email: 'c@example.com', name: 'C', role: 'member' }, T1);
      const s1 = store.updateUser(u.id, { suspendedAt: T2, dailyLimit: 50, role: 'owner' }, T2);
      assert.deepEqual(s1, { ...u, role: 'owner', suspendedAt: T2, dailyLimit: 50, updatedAt: T2 });
      const active = store.updateUser(u.id, { lastActivityAt: T3 }, T3);
      assert.equal(active.updatedAt, T2);
      assert.equal(active.lastActivityAt, T3);
      const cleared = store.updateUser(u.id, { suspendedAt: null, dailyLimit: null }, T3);
      assert.equal(cleared.suspendedAt, undefined);
      assert.equal(cleared.dailyLimit, undefined);
      assertNoEmptyValues(cleared as never);
      assert.throws(() => store.updateUser('usr_000000000000000000000000', { name: 'x' }, T3));
    });

    storeTest('API keys: stored by hash, listed per user, revoked once, touched', (store) => {
      const u = store.createUser({ email: 'k@example.com', name: 'K', role: 'member' }, T1);
      const k1 = store.createApiKey({ userId: u.id, name: 'ci', hash: 'h1'.repeat(32), hint: 'svk_01234567' }, T1);
      const k2 = store.createApiKey({ userId: u.id, name: 'laptop', hash: 'h2'.repeat(32), hint: 'svk_89abcdef' }, T2);
      assert.match(k1.id, /^key_[0-9a-f]{24}$/);
      assert.deepEqual(k1, { id: k1.id, userId: u.id, name: 'ci', hint: 'svk_01234567', createdAt: T1 });
      assert.ok(!('hash' in k1), 'the hash is not handed out');
      assert.deepEqual(store.findApiKey('h2'.repeat(32)), k2);
      assert.equal(store.findApiKey('nope'), undefined);
      assert.deepEqual(store.listApiKeys(u.id).map((k) => k.name), ['ci', 'laptop']);
      store.touchApiKey(k1.id, T2);
      assert.equal(store.findApiKey('h1'.repeat(32))!.lastUsedAt, T2);
      assert.equal(store.revokeApiKey(k1.id, T2)!.revokedAt, T2);
      assert.equal(store.revokeApiKey(k1.id, T3)!.revokedAt, T2, 'revoked once');
      assert.equal(store.revokeApiKey('key_000000000000000000000000', T3), undefined);
      assert.equal(store.findApiKey('h1'.repeat(32))!.revokedAt, T2, 'a revoked key is still found, as revoked');
      assert.throws(() => store.createApiKey({ userId: 'usr_000000000000000000000000', name: 'x', hash: 'h3', hint: 'svk_' }, T3), 'a key belongs to an existing user');
    });

    storeTest('scoped tokens: stored by hash with their repositories, revoked once', (store) => {
      const u = store.createUser({ email: 't@example.com', name: 'T', role: 'member' }, T1);
      const t = store.createScopedToken({ userId: u.id, hash: 'th', repoIds: [3, 1, 2], expiresAt: T2 }, T1);
      assert.match(t.id, /^sat_[0-9a-f]{24}$/);
      assert.deepEqual(t, { id: t.id, userId: u.id, repoIds: [3, 1, 2], createdAt: T1, expiresAt: T2 });
      assert.deepEqual(store.findScopedToken('th'), t);
      assert.deepEqual(store.getScopedToken(t.id), t);
      assert.equal(store.findScopedToken('other'), undefined);
      assert.equal(store.revokeScopedToken(t.id, T2)!.revokedAt, T2);
      assert.equal(store.revokeScopedToken(t.id, T3)!.revokedAt, T2);
      assert.equal(store.revokeScopedToken('sat_000000000000000000000000', T3), undefined);
    });

    storeTest('the installed license: none, then one, replaced by the next', (store) => {
      assert.equal(store.getLicense(), undefined);
      store.putLicense('{"payload":"a","signature":"b"}');
      assert.equal(store.getLicense(), '{"payload":"a","signature":"b"}');
      store.putLicense('{"payload":"c","signature":"d"}');
      assert.equal(store.getLicense(), '{"payload":"c","signature":"d"}');
    });

    storeTest(
      'users and keys survive reopening',
      async (store, ctx) => {
        const u = store.createUser({ email: 'p@example.com', name: 'P', role: 'owner' }, T1);
        const k = store.createApiKey({ userId: u.id, name: 'n', hash: 'hp', hint: 'svk_aaaaaaaa' }, T1);
        ctx.close(store);
        const again = await ctx.open();
        assert.deepEqual(again.getUser(u.id), u);
        assert.deepEqual(again.findApiKey('hp'), k);
      },
      { sharedStorage: true },
    );
  });
}
