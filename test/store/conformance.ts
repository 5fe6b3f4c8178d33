// The Store conformance suite (docs/design.md "Seams"): every backend runs it, so the
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
// - OAuth (store.oauth): times are compared as ISO 8601 strings. A token is live while
//   expiresAt > now; prune(before) drops codes and tokens with expiresAt < before (one
//   expiring at `before` stays), then grants left without tokens, then clients created
//   before `before` that (after that) have no grant and no code; a revoked grant stays
//   while it has tokens. listLiveGrants orders by createdAt, newest first. A code and a
//   grant belong to an existing client and user. registerClient counts the clients of
//   `from` created after `since` (createClient's count for no address) and the
//   clients never used (no grant, no code) of everyone; pruneUnusedClients(before) drops
//   the never-used ones created before `before` (one created at `before` stays).
// - Credential lifecycle: a scoped token, code, grant and session name the API key they
//   were made with, which must exist. Live (IdentityStore's comment) is judged with
//   expiresAt > now; a credential whose key is revoked is never listed as live, and a
//   grant whose key is revoked never rotates, even when it was made after the revocation
//   (a race), which a second revokeApiKey then ends. revokeApiKey and endUserCredentials
//   leave dead rows (expired, already revoked or ended) as they were and count what they
//   ended. A refresh (rotateRefreshToken) sets the grant's lastUsedAt. Listings are newest
//   first. pruneSessions(before) drops sessions that expired or ended before `before`.
// - Audit log (store.audit): ids increase and are never reused, also after a prune; list
//   orders by `at` newest first, then by id; `actor` matches the actor's userId or
//   credentialId; an `action` ending in "." is a prefix ("_" is no wildcard); since/until
//   are inclusive ISO 8601 strings; `total` ignores offset and limit; prune(before) drops
//   events with `at` before `before` (one at `before` stays). Absent optional fields are
//   omitted. atomically(fn) commits every write of fn together, or none when fn throws.
// - sharedSecret(name, candidate): the first candidate stored under a name is the secret
//   for good, whoever asks.
// - Single sign-on: a sign-in identity is unique by (issuer, subject), both compared byte
//   by byte, and belongs to an existing user. A browser session names an API key or a
//   sign-in identity, exactly one; one of an identity is live whatever happens to the
//   user's keys. useSignInFlow is true once per state hash (also under concurrent calls),
//   until pruneSignInFlows(before) drops it (one expiring at `before` stays).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { permissionConformance } from './permission-conformance.ts';
import { watchConformance } from './watch-conformance.ts';
import type {
  AuditEventRecord,
  IndexedRef,
  NewAuditEvent,
  NewOAuthToken,
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  RepoFields,
  RepoRecord,
  Store,
} from '../../daemon/store/store.ts';

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
  close(store: Store): Promise<void>;
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
  return { repoId, ...fields(repoName), state: 'new', failures: 0, indexedRefs: [], topics: [] };
}

/** Optional fields are omitted, never present as undefined or null. */
function assertNoEmptyValues(record: object): void {
  for (const [key, value] of Object.entries(record)) {
    assert.ok(value !== undefined && value !== null, `${key} is present as ${String(value)}; it should be omitted`);
  }
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** `t` moved by `minutes` (negative: earlier), as ISO 8601. */
const plus = (t: string, minutes: number): string => new Date(Date.parse(t) + minutes * 60_000).toISOString();
const DAY = 24 * 60;

const REDIRECT = 'http://127.0.0.1:53682/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const NO_GRANT = 'ogr_000000000000000000000000';

function newToken(hash: string, kind: NewOAuthToken['kind'], expiresAt: string): NewOAuthToken {
  return { hash, kind, expiresAt };
}

/** Who a code or grant is for: the client, the user, and the API key the user consented with. */
interface Parties {
  clientId: string;
  userId: string;
  apiKeyId: string;
}

let keyHashes = 0;
/** A new API key of `userId` (a unique hash), created at T1. */
async function newKey(store: Store, userId: string, name = 'k'): Promise<string> {
  return (await store.createApiKey({ userId, name, hash: `key-hash-${++keyHashes}`, hint: 'svk_00000000' }, T1)).id;
}

/** A code of `clientId` for `userId`, created at `now`, good for 5 minutes unless `extra` says otherwise. */
async function newCode(store: Store, hash: string, ids: Parties, now: string, extra: { resource?: string; expiresAt?: string } = {}): Promise<OAuthCodeRecord> {
  return await store.oauth.createCode(
    {
      hash,
      clientId: ids.clientId,
      userId: ids.userId,
      apiKeyId: ids.apiKeyId,
      redirectUri: REDIRECT,
      codeChallenge: CHALLENGE,
      scope: 'search',
      expiresAt: extra.expiresAt ?? plus(now, 5),
      ...(extra.resource !== undefined ? { resource: extra.resource } : {}),
    },
    now,
  );
}

/** A grant made at `now` by exchanging a new code (hash `code-` + the first token's hash) for `tokens`. */
async function newGrant(store: Store, ids: Parties, now: string, tokens: NewOAuthToken[]): Promise<OAuthGrantRecord> {
  const code = await newCode(store, `code-${tokens[0]?.hash ?? now}`, ids, now);
  const result = await store.oauth.redeemCode(code.hash, tokens, now);
  assert.ok(result !== undefined && 'grant' in result, `a fresh code is exchanged: ${JSON.stringify(result)}`);
  return result.grant;
}

/** A user with an API key, and a client, for the OAuth tests. */
async function oauthParties(store: Store, email = 'o@example.com', clientName = 'Agent'): Promise<Parties> {
  const user = await store.createUser({ email, name: email, role: 'member' }, T1);
  const client = await store.oauth.createClient({ name: clientName, redirectUris: [REDIRECT], metadata: { client_name: clientName } }, T1);
  return { userId: user.id, clientId: client.id, apiKeyId: await newKey(store, user.id) };
}

/**
 * Registers the suite under `describe(name)`. `open` returns a handle on the backend's
 * storage; within one test every call reaches the same data (unless sharedStorage is false).
 * `cleanup`, when given, runs after each test once its stores are closed, and must leave the
 * next test an empty store.
 */
export function storeConformance(name: string, open: () => Store | Promise<Store>, cleanup?: () => void, options: ConformanceOptions = {}): void {
  const shared = options.sharedStorage ?? true;

  function storeTest(title: string, fn: (store: Store, ctx: Ctx) => void | Promise<void>, needs: { sharedStorage?: boolean } = {}): void {
    const skip = needs.sharedStorage === true && !shared ? 'needs two handles on one store' : false;
    test(title, { skip }, async () => {
      const open_: Store[] = [];
      const ctx: Ctx = {
        open: async () => {
          const store = await open();
          open_.push(store);
          return store;
        },
        close: async (store) => {
          const i = open_.indexOf(store);
          if (i >= 0) open_.splice(i, 1);
          await store.close();
        },
      };
      try {
        await fn(await ctx.open(), ctx);
      } finally {
        for (const store of open_) await store.close();
        cleanup?.();
      }
    });
  }

  describe(name, () => {
    // ---- repositories ----

    storeTest('upsertRepo creates a repository: state new, no failures, no refs, optional fields omitted', async (store) => {
      const r = await store.upsertRepo(fields('github.com/acme/widgets'));
      assert.ok(Number.isSafeInteger(r.repoId) && r.repoId > 0, `repoId ${r.repoId}`);
      assert.deepEqual(r, fresh(r.repoId, 'github.com/acme/widgets'));
      assertNoEmptyValues(r);
      assert.deepEqual(await store.getRepo(r.repoId), r);
      assert.deepEqual(await store.getRepoByName('github.com/acme/widgets'), r);
      assert.deepEqual(await store.listRepos(), [r]);
    });

    storeTest('upsertRepo gives each new name the next, larger id', async (store) => {
      const ids: number[] = [];
      for (const n of ['github.com/a/1', 'github.com/a/2', 'github.com/a/3']) ids.push((await store.upsertRepo(fields(n))).repoId);
      assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `ids ${ids.join(', ')}`);
    });

    storeTest('every field round-trips', async (store) => {
      const conn = await store.upsertConnection('acme-gitlab', 'gitlab');
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
        topics: ['backend', 'go', 'c++', 'naïve'],
      };
      const created = await store.upsertRepo(fields(all.repoName));
      const r = await store.upsertRepo(all);
      assert.equal(r.repoId, created.repoId);
      assert.deepEqual(r, { repoId: created.repoId, ...all });
      assert.deepEqual(await store.getRepo(r.repoId), r);
      assert.deepEqual(await store.getRepoByName(all.repoName), r);
      assert.deepEqual(await store.listRepos(), [r]);
    });

    storeTest('upsertRepo of a live name merges the given fields into that row', async (store) => {
      const name = 'github.com/acme/merge';
      const first = await store.upsertRepo(fields(name, { cloneUrl: 'https://a/clone', imageUrl: 'https://a/img', defaultBranch: 'main' }));
      const refs: IndexedRef[] = [{ name: 'main', kind: 'branch', commit: SHA_A }];
      const indexed = await store.updateRepo(first.repoId, {
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
      const merged = await store.upsertRepo(withoutCloneUrl); // cloneUrl absent: kept

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
      assert.deepEqual(await store.getRepo(first.repoId), merged);
      assert.equal((await store.listRepos({ includeDeleted: true })).length, 1);
    });

    storeTest('upsertRepo may set state, failures and indexedRefs of a live row', async (store) => {
      const r = await store.upsertRepo(fields('github.com/acme/s'));
      const refs: IndexedRef[] = [{ name: 'v1', kind: 'tag', commit: SHA_B }];
      const u = await store.upsertRepo(fields('github.com/acme/s', { state: 'failed', failures: 2, indexedRefs: refs }));
      assert.deepEqual(u, { ...r, state: 'failed', failures: 2, indexedRefs: refs });
    });

    storeTest('topics: none by default; set by upsertRepo and updateRepo, kept when not given, replaced when given', async (store) => {
      const r = await store.upsertRepo(fields('github.com/acme/t', { topics: ['backend', 'api'] }));
      assert.deepEqual(r.topics, ['backend', 'api']);
      assert.deepEqual((await store.upsertRepo(fields('github.com/acme/t'))).topics, ['backend', 'api'], 'kept when not given');
      assert.deepEqual((await store.upsertRepo(fields('github.com/acme/t', { topics: [] }))).topics, [], 'replaced by none');
      assert.deepEqual((await store.updateRepo(r.repoId, { topics: ['web'] })).topics, ['web']);
      assert.deepEqual((await store.listRepos())[0]?.topics, ['web']);
      assert.deepEqual((await store.upsertRepo(fields('github.com/acme/u'))).topics, []);
    });

    storeTest('ids are never reused: a deleted name comes back as a new repository with a new id', async (store) => {
      const a = await store.upsertRepo(fields('github.com/acme/a'));
      const b = await store.upsertRepo(fields('github.com/acme/b', { cloneUrl: 'https://b', state: 'failed', failures: 4, lastError: 'x' }));
      const deleted = await store.updateRepo(b.repoId, { state: 'deleted' });
      assert.deepEqual(deleted, { ...b, state: 'deleted' });

      // The row stays (getRepo) but no longer answers to its name.
      assert.deepEqual(await store.getRepo(b.repoId), deleted);
      assert.equal(await store.getRepoByName('github.com/acme/b'), undefined);
      assert.deepEqual(await store.listRepos(), [a]);

      // b held the highest id when it was deleted: the next id is still larger.
      const c = await store.upsertRepo(fields('github.com/acme/c'));
      assert.ok(c.repoId > b.repoId, `c ${c.repoId} after deleted b ${b.repoId}`);

      const b2 = await store.upsertRepo(fields('github.com/acme/b'));
      assert.ok(b2.repoId > c.repoId, `b2 ${b2.repoId}`);
      assert.deepEqual(b2, fresh(b2.repoId, 'github.com/acme/b'), 'nothing carries over from the deleted row');
      assert.deepEqual(await store.getRepo(b.repoId), deleted, 'the deleted row is untouched');
      assert.deepEqual(await store.getRepoByName('github.com/acme/b'), b2);
      assert.deepEqual(await store.listRepos(), [a, b2, c]);
      assert.deepEqual(await store.listRepos({ includeDeleted: true }), [a, deleted, b2, c]);

      // Deleted twice over: two deleted rows share the name, and it still comes back.
      const deleted2 = await store.updateRepo(b2.repoId, { state: 'deleted' });
      const b3 = await store.upsertRepo(fields('github.com/acme/b'));
      assert.ok(b3.repoId > b2.repoId);
      assert.deepEqual(await store.listRepos({ includeDeleted: true }), [a, deleted, deleted2, b3, c]);
      assert.deepEqual(new Set((await store.listRepos({ includeDeleted: true })).map((r) => r.repoId)).size, 5, 'all ids distinct');
    });

    storeTest('updateRepo merges a patch; undefined clears optional fields and leaves required ones', async (store) => {
      const r = await store.upsertRepo(fields('github.com/acme/u', { cloneUrl: 'https://u' }));
      const failed = await store.updateRepo(r.repoId, {
        state: 'failed',
        lastError: 'boom',
        lastErrorAt: T1,
        failures: 1,
        nextAttemptAt: T2,
      });
      assert.deepEqual(failed, { ...r, state: 'failed', lastError: 'boom', lastErrorAt: T1, failures: 1, nextAttemptAt: T2 });

      const refs: IndexedRef[] = [{ name: 'main', kind: 'branch', commit: SHA_B }];
      const ok = await store.updateRepo(r.repoId, {
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
      assert.deepEqual(await store.getRepo(r.repoId), ok);

      assert.deepEqual(await store.updateRepo(r.repoId, { displayName: undefined, isFork: undefined }), ok);
      assert.deepEqual(await store.updateRepo(r.repoId, {}), ok);
      const renamed = await store.updateRepo(r.repoId, { repoName: 'github.com/acme/renamed', displayName: 'acme/renamed' });
      assert.deepEqual(renamed, { ...ok, repoName: 'github.com/acme/renamed', displayName: 'acme/renamed' });
      assert.deepEqual(await store.getRepoByName('github.com/acme/renamed'), renamed);
      assert.equal(await store.getRepoByName('github.com/acme/u'), undefined);
    });

    storeTest('unknown ids: updateRepo throws and creates nothing; lookups return undefined', async (store) => {
      const r = await store.upsertRepo(fields('github.com/acme/known'));
      const unknown = r.repoId + 1000;
      await assert.rejects(() => store.updateRepo(unknown, { state: 'indexed' }), Error);
      assert.equal(await store.getRepo(unknown), undefined);
      assert.equal(await store.getRepoByName('github.com/acme/unknown'), undefined);
      assert.deepEqual(await store.listRepos({ includeDeleted: true }), [r]);
    });

    storeTest('a live name belongs to one repository: renaming or reviving onto it fails', async (store) => {
      const a = await store.upsertRepo(fields('github.com/acme/a'));
      const b = await store.upsertRepo(fields('github.com/acme/b'));
      await assert.rejects(() => store.updateRepo(b.repoId, { repoName: a.repoName }));
      assert.deepEqual(await store.getRepo(b.repoId), b, 'a failed update changes nothing');

      await store.updateRepo(a.repoId, { state: 'deleted' });
      const a2 = await store.upsertRepo(fields('github.com/acme/a'));
      await assert.rejects(() => store.updateRepo(a.repoId, { state: 'new' }), Error, 'the old row cannot come back beside a2');
      assert.deepEqual(await store.listRepos(), [a2, b]);
    });

    storeTest('listRepos sorts by repoName in UTF-8 byte order', async (store) => {
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
      for (const n of names) await store.upsertRepo(fields(n));
      const expected = [...names].sort(byteOrder);
      assert.deepEqual(
        (await store.listRepos()).map((r) => r.repoName),
        expected,
      );
    });

    storeTest('listRepos filters by includeDeleted and connectionId', async (store) => {
      const c1 = await store.upsertConnection('one', 'github');
      const c2 = await store.upsertConnection('two', 'gitea');
      const r1 = await store.upsertRepo(fields('github.com/o/r1', { connectionId: c1.id }));
      const r2 = await store.updateRepo((await store.upsertRepo(fields('github.com/o/r2', { connectionId: c1.id }))).repoId, {
        state: 'deleted',
      });
      const r3 = await store.upsertRepo(fields('gitea.com/o/r3', { connectionId: c2.id, codeHostType: 'gitea' }));
      const r4 = await store.upsertRepo(fields('local/r4', { codeHostType: 'genericGitHost' }));

      assert.deepEqual(await store.listRepos(), [r3, r1, r4]);
      assert.deepEqual(await store.listRepos({}), [r3, r1, r4]);
      assert.deepEqual(await store.listRepos({ includeDeleted: false }), [r3, r1, r4]);
      assert.deepEqual(await store.listRepos({ includeDeleted: true }), [r3, r1, r2, r4]);
      assert.deepEqual(await store.listRepos({ connectionId: c1.id }), [r1]);
      assert.deepEqual(await store.listRepos({ connectionId: c1.id, includeDeleted: true }), [r1, r2]);
      assert.deepEqual(await store.listRepos({ connectionId: c2.id }), [r3]);
      assert.deepEqual(await store.listRepos({ connectionId: Math.max(c1.id, c2.id) + 100 }), []);
    });

    storeTest('indexedRefs round-trip exactly: order, kinds, unusual names, empty', async (store) => {
      const r = await store.upsertRepo(fields('github.com/acme/refs'));
      const refs: IndexedRef[] = [
        { name: 'zeta', kind: 'branch', commit: SHA_B },
        { name: 'alpha', kind: 'tag', commit: SHA_A },
        { name: 'feature/ünï "quoted" \\ back', kind: 'branch', commit: SHA_A },
      ];
      assert.deepEqual((await store.updateRepo(r.repoId, { indexedRefs: refs })).indexedRefs, refs);
      assert.deepEqual((await store.getRepo(r.repoId))?.indexedRefs, refs);
      assert.deepEqual((await store.listRepos())[0]?.indexedRefs, refs);
      assert.deepEqual((await store.updateRepo(r.repoId, { indexedRefs: [] })).indexedRefs, []);
      assert.deepEqual((await store.getRepo(r.repoId))?.indexedRefs, []);
    });

    storeTest('returned records are snapshots', async (store) => {
      const refs: IndexedRef[] = [{ name: 'main', kind: 'branch', commit: SHA_A }];
      const r = await store.upsertRepo(fields('github.com/acme/snap', { indexedRefs: refs }));
      const copy = await structuredClone(r);
      r.displayName = 'changed';
      r.indexedRefs.push({ name: 'x', kind: 'tag', commit: SHA_B });
      refs.push({ name: 'y', kind: 'tag', commit: SHA_B });
      assert.deepEqual(await store.getRepo(copy.repoId), copy);
      const c = await store.upsertConnection('snap', 'github');
      c.connectionType = 'gitlab';
      assert.equal((await store.listConnections())[0]?.connectionType, 'github');
    });

    storeTest('a repository cannot point at an unknown connection', async (store) => {
      const c = await store.upsertConnection('real', 'github');
      await assert.rejects(() => store.upsertRepo(fields('github.com/acme/x', { connectionId: c.id + 100 })));
      assert.deepEqual(await store.listRepos({ includeDeleted: true }), []);
      const r = await store.upsertRepo(fields('github.com/acme/x', { connectionId: c.id }));
      await assert.rejects(() => store.updateRepo(r.repoId, { connectionId: c.id + 100 }));
      assert.deepEqual(await store.getRepo(r.repoId), r);
    });

    // ---- connections ----

    storeTest('upsertConnection creates one connection per name, with growing ids', async (store) => {
      const a = await store.upsertConnection('work', 'github');
      assert.ok(Number.isSafeInteger(a.id) && a.id > 0);
      assert.deepEqual(a, { id: a.id, name: 'work', connectionType: 'github' });
      assertNoEmptyValues(a);
      assert.deepEqual(await store.upsertConnection('work', 'github'), a);
      const b = await store.upsertConnection('Home', 'gitlab');
      assert.ok(b.id > a.id);
      assert.deepEqual(await store.upsertConnection('work', 'github'), a);
      const c = await store.upsertConnection('archive', 'git');
      assert.ok(c.id > b.id, 'repeated upserts of known names use up no ids');
      assert.deepEqual(await store.listConnections(), [b, c, a], 'sorted by name, byte order');
    });

    storeTest('upsertConnection of a known name takes the new type and keeps id and status', async (store) => {
      const a = await store.upsertConnection('work', 'github');
      const synced = await store.updateConnection(a.id, { lastSyncedAt: T1 });
      const retyped = await store.upsertConnection('work', 'gitea');
      assert.deepEqual(retyped, { ...synced, connectionType: 'gitea' });
      assert.deepEqual(await store.listConnections(), [retyped]);
    });

    storeTest('updateConnection merges status fields; undefined clears; unknown ids throw', async (store) => {
      const a = await store.upsertConnection('work', 'github');
      const failed = await store.updateConnection(a.id, { lastError: 'HTTP 401', lastErrorAt: T2, lastSyncedAt: T1 });
      assert.deepEqual(failed, { ...a, lastError: 'HTTP 401', lastErrorAt: T2, lastSyncedAt: T1 });
      const ok = await store.updateConnection(a.id, { lastError: undefined, lastErrorAt: undefined, lastSyncedAt: T3 });
      assert.deepEqual(ok, { ...a, lastSyncedAt: T3 });
      assertNoEmptyValues(ok);
      assert.deepEqual(await store.updateConnection(a.id, { connectionType: undefined }), ok);
      assert.deepEqual(await store.listConnections(), [ok]);
      await assert.rejects(() => store.updateConnection(a.id + 100, { lastSyncedAt: T1 }), Error);
      assert.deepEqual(await store.listConnections(), [ok]);
    });

    storeTest('deleteConnection removes it; its repositories keep their ids and lose the link', async (store) => {
      const a = await store.upsertConnection('a', 'github');
      const b = await store.upsertConnection('b', 'gitlab');
      const r1 = await store.upsertRepo(fields('github.com/o/1', { connectionId: a.id }));
      const r2 = await store.updateRepo((await store.upsertRepo(fields('github.com/o/2', { connectionId: a.id }))).repoId, {
        state: 'deleted',
      });
      const r3 = await store.upsertRepo(fields('gitlab.com/o/3', { connectionId: b.id, codeHostType: 'gitlab' }));

      await store.deleteConnection(a.id);
      assert.deepEqual(await store.listConnections(), [b]);
      const { connectionId: _1, ...r1After } = r1;
      const { connectionId: _2, ...r2After } = r2;
      assert.deepEqual(await store.getRepo(r1.repoId), r1After);
      assert.deepEqual(await store.getRepo(r2.repoId), r2After);
      assert.deepEqual(await store.getRepo(r3.repoId), r3);
      assert.deepEqual(await store.listRepos({ connectionId: a.id, includeDeleted: true }), []);

      await store.deleteConnection(a.id); // unknown now: nothing happens
      await store.deleteConnection(b.id + 100);
      assert.deepEqual(await store.listConnections(), [b]);

      const a2 = await store.upsertConnection('a', 'github');
      assert.ok(a2.id > b.id, 'a deleted connection name comes back with a new id');
      await assert.rejects(() => store.updateConnection(a.id, { lastSyncedAt: T1 }));
    });

    // ---- several handles on one store ----

    storeTest(
      'two stores on the same data see each other and give a name one row and one id',
      async (store, ctx) => {
        const other = await ctx.open();
        const x1 = await store.upsertRepo(fields('github.com/acme/x'));
        const x2 = await other.upsertRepo(fields('github.com/acme/x', { displayName: 'X' }));
        assert.equal(x2.repoId, x1.repoId);
        assert.deepEqual(await store.getRepo(x1.repoId), x2);

        const y = await store.upsertRepo(fields('github.com/acme/y'));
        const z = await other.upsertRepo(fields('github.com/acme/z'));
        assert.equal((await store.upsertRepo(fields('github.com/acme/z'))).repoId, z.repoId);
        assert.equal(new Set([x1.repoId, y.repoId, z.repoId]).size, 3);
        assert.deepEqual(await store.listRepos(), await other.listRepos());
        assert.equal((await store.listRepos()).length, 3);

        // A deletion through one handle frees the name for the other.
        await other.updateRepo(y.repoId, { state: 'deleted' });
        const y2 = await store.upsertRepo(fields('github.com/acme/y'));
        assert.ok(y2.repoId > z.repoId);

        const c1 = await store.upsertConnection('shared', 'github');
        const c2 = await other.upsertConnection('shared', 'github');
        assert.equal(c2.id, c1.id);
        assert.deepEqual(await other.listConnections(), [c1]);
      },
      { sharedStorage: true },
    );

    storeTest(
      'reopening keeps everything, and ids keep growing past every id ever given',
      async (store, ctx) => {
        const conn = await store.upsertConnection('work', 'github');
        await store.updateConnection(conn.id, { lastSyncedAt: T1 });
        await store.upsertRepo(
          fields('github.com/acme/kept', {
            connectionId: conn.id,
            indexedRefs: [{ name: 'main', kind: 'branch', commit: SHA_A }],
            isFork: true,
          }),
        );
        const last = await store.upsertRepo(fields('github.com/acme/last'));
        await store.updateRepo(last.repoId, { state: 'deleted', lastError: 'gone' });
        const repos = await store.listRepos({ includeDeleted: true });
        const connections = await store.listConnections();
        await ctx.close(store);

        for (let round = 0; round < 2; round++) {
          const again = await ctx.open();
          assert.deepEqual(await again.listRepos({ includeDeleted: true }), repos);
          assert.deepEqual(await again.listConnections(), connections);
          await ctx.close(again);
        }

        const final = await ctx.open();
        const next = await final.upsertRepo(fields('github.com/acme/last'));
        assert.ok(next.repoId > last.repoId, 'the deleted highest id is not handed out again');
        const c = await final.upsertConnection('other', 'gitlab');
        assert.ok(c.id > conn.id);
      },
      { sharedStorage: true },
    );

    // ---- users and API keys ----

    storeTest('users: create, find by id and by email (case-insensitive), list by email, conflicts', async (store) => {
      const b = await store.createUser({ email: 'bea@example.com', name: 'Bea', role: 'member' }, T1);
      const a = await store.createUser({ email: 'Al@Example.com', name: 'Al', role: 'owner' }, T2);
      assert.match(b.id, /^usr_[0-9a-f]{24}$/);
      assert.notEqual(a.id, b.id);
      assert.deepEqual(b, { id: b.id, email: 'bea@example.com', name: 'Bea', role: 'member', createdAt: T1, updatedAt: T1 });
      assertNoEmptyValues(b as never);
      assert.deepEqual(await store.getUser(b.id), b);
      assert.deepEqual(await store.getUserByEmail('BEA@example.COM'), b);
      assert.equal(await store.getUserByEmail('nobody@example.com'), undefined);
      assert.deepEqual(
        (await store.listUsers()).map((u) => u.email),
        ['Al@Example.com', 'bea@example.com'],
      );
      await assert.rejects(
        () => store.createUser({ email: 'bea@EXAMPLE.com', name: 'Other', role: 'member' }, T3),
        (e: Error) => e.name === 'StoreConflictError',
      );
      assert.equal((await store.listUsers()).length, 2);
    });

    storeTest('users: patches set and clear optional fields; activity alone leaves updatedAt', async (store) => {
      const u = await store.createUser({ email: 'c@example.com', name: 'C', role: 'member' }, T1);
      const s1 = await store.updateUser(u.id, { suspendedAt: T2, dailyLimit: 50, role: 'owner' }, T2);
      assert.deepEqual(s1, { ...u, role: 'owner', suspendedAt: T2, dailyLimit: 50, updatedAt: T2 });
      const active = await store.updateUser(u.id, { lastActivityAt: T3 }, T3);
      assert.equal(active.updatedAt, T2);
      assert.equal(active.lastActivityAt, T3);
      const cleared = await store.updateUser(u.id, { suspendedAt: null, dailyLimit: null }, T3);
      assert.equal(cleared.suspendedAt, undefined);
      assert.equal(cleared.dailyLimit, undefined);
      assertNoEmptyValues(cleared as never);
      await assert.rejects(() => store.updateUser('usr_000000000000000000000000', { name: 'x' }, T3));
    });

    // ---- search contexts and default contexts ----

    storeTest('search contexts: put creates, then replaces (createdAt stays); get, list by name in byte order; definitions round-trip', async (store) => {
      const backend = {
        description: 'Services "and" more\nsecond line',
        include: { repos: ['github.com/acme/api-*', '**/naïve'], connections: ['gh'], topics: ['backend'] },
        exclude: { repos: ['**/legacy-*'], connections: [], topics: [] },
      };
      const made = await store.contexts.put('backend', backend, T1);
      assert.deepEqual(made, { created: true, context: { name: 'backend', definition: backend, createdAt: T1, updatedAt: T1 } });
      await store.contexts.put('Z-upper', {}, T1);
      await store.contexts.put('a.b_c-d', { exclude: { repos: [], connections: [], topics: ['x'] } }, T1);
      assert.deepEqual(
        (await store.contexts.list()).map((c) => c.name),
        ['Z-upper', 'a.b_c-d', 'backend'],
      );
      const replaced = await store.contexts.put('backend', { description: 'new' }, T2);
      assert.deepEqual(replaced, { created: false, context: { name: 'backend', definition: { description: 'new' }, createdAt: T1, updatedAt: T2 } });
      assert.deepEqual(await store.contexts.get('backend'), replaced.context);
      assert.equal(await store.contexts.get('nope'), undefined);
      const got = (await store.contexts.get('backend'))!;
      got.definition.description = 'changed here';
      assert.equal((await store.contexts.get('backend'))!.definition.description, 'new', 'records are snapshots');
    });

    storeTest('default contexts: set, read, replaced, cleared; listed by user; the user must exist', async (store) => {
      const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
      const b = await store.createUser({ email: 'b@example.com', name: 'B', role: 'member' }, T1);
      assert.equal(await store.contexts.defaultOf(a.id), undefined);
      await store.contexts.setDefault(a.id, 'backend', T1);
      await store.contexts.setDefault(b.id, 'from-the-file', T1);
      assert.equal(await store.contexts.defaultOf(a.id), 'backend');
      await store.contexts.setDefault(a.id, 'web', T2);
      assert.equal(await store.contexts.defaultOf(a.id), 'web');
      assert.deepEqual(
        await store.contexts.listDefaults(),
        [
          { userId: a.id, name: 'web' },
          { userId: b.id, name: 'from-the-file' },
        ].sort((x, y) => (x.userId < y.userId ? -1 : 1)),
      );
      await store.contexts.setDefault(a.id, undefined, T3);
      await store.contexts.setDefault(a.id, undefined, T3);
      assert.equal(await store.contexts.defaultOf(a.id), undefined);
      assert.deepEqual(await store.contexts.listDefaults(), [{ userId: b.id, name: 'from-the-file' }]);
      await assert.rejects(() => store.contexts.setDefault('usr_000000000000000000000000', 'web', T3));
    });

    storeTest("deleting a search context clears the defaults that name it, and nobody else's", async (store) => {
      const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
      const b = await store.createUser({ email: 'b@example.com', name: 'B', role: 'member' }, T1);
      const c = await store.createUser({ email: 'c@example.com', name: 'C', role: 'member' }, T1);
      await store.contexts.put('web', {}, T1);
      await store.contexts.put('api', {}, T1);
      await store.contexts.setDefault(a.id, 'web', T1);
      await store.contexts.setDefault(b.id, 'web', T1);
      await store.contexts.setDefault(c.id, 'api', T1);
      assert.deepEqual(await store.contexts.delete('web'), { clearedDefaults: 2 });
      assert.equal(await store.contexts.delete('web'), undefined, 'a second delete finds nothing');
      assert.equal(await store.contexts.get('web'), undefined);
      assert.equal(await store.contexts.defaultOf(a.id), undefined);
      assert.equal(await store.contexts.defaultOf(b.id), undefined);
      assert.equal(await store.contexts.defaultOf(c.id), 'api');
      assert.deepEqual(await store.contexts.delete('api'), { clearedDefaults: 1 });
      assert.deepEqual(await store.contexts.list(), []);
    });

    storeTest(
      'search contexts: one name, one row, whichever handle creates it',
      async (store, ctx) => {
        const other = await ctx.open();
        const results = await Promise.all([store.contexts.put('race', { description: 'one' }, T1), other.contexts.put('race', { description: 'two' }, T1)]);
        assert.deepEqual(results.map((r) => r.created).sort(), [false, true]);
        assert.equal((await store.contexts.list()).length, 1);
      },
      { sharedStorage: true },
    );

    storeTest('API keys: stored by hash, listed per user, revoked once, touched', async (store) => {
      const u = await store.createUser({ email: 'k@example.com', name: 'K', role: 'member' }, T1);
      const k1 = await store.createApiKey({ userId: u.id, name: 'ci', hash: 'h1'.repeat(32), hint: 'svk_01234567' }, T1);
      const k2 = await store.createApiKey({ userId: u.id, name: 'laptop', hash: 'h2'.repeat(32), hint: 'svk_89abcdef' }, T2);
      assert.match(k1.id, /^key_[0-9a-f]{24}$/);
      assert.deepEqual(k1, { id: k1.id, userId: u.id, name: 'ci', hint: 'svk_01234567', createdAt: T1 });
      assert.ok(!('hash' in k1), 'the hash is not handed out');
      assert.deepEqual(await store.findApiKey('h2'.repeat(32)), k2);
      assert.equal(await store.findApiKey('nope'), undefined);
      assert.deepEqual(
        (await store.listApiKeys(u.id)).map((k) => k.name),
        ['ci', 'laptop'],
      );
      await store.touchApiKey(k1.id, T2);
      assert.equal((await store.findApiKey('h1'.repeat(32)))!.lastUsedAt, T2);
      assert.deepEqual(await store.revokeApiKey(k1.id, T2), {
        key: { ...k1, lastUsedAt: T2, revokedAt: T2 },
        ended: { scopedTokens: 0, oauthGrants: 0, sessions: 0 },
      });
      assert.equal((await store.revokeApiKey(k1.id, T3))!.key.revokedAt, T2, 'revoked once');
      assert.equal(await store.revokeApiKey('key_000000000000000000000000', T3), undefined);
      assert.equal((await store.findApiKey('h1'.repeat(32)))!.revokedAt, T2, 'a revoked key is still found, as revoked');
      assert.deepEqual(await store.getApiKey(k2.id), k2, 'by id');
      assert.equal((await store.getApiKey(k1.id))!.revokedAt, T2, 'by id, revoked or not');
      assert.equal(await store.getApiKey('key_000000000000000000000000'), undefined);
      await assert.rejects(
        () => store.createApiKey({ userId: 'usr_000000000000000000000000', name: 'x', hash: 'h3', hint: 'svk_' }, T3),
        'a key belongs to an existing user',
      );
    });

    storeTest('scoped tokens: stored by hash with their repositories, revoked once', async (store) => {
      const u = await store.createUser({ email: 't@example.com', name: 'T', role: 'member' }, T1);
      const apiKeyId = await newKey(store, u.id);
      const t = await store.createScopedToken({ userId: u.id, apiKeyId, hash: 'th', repoIds: [3, 1, 2], expiresAt: T2 }, T1);
      assert.match(t.id, /^sat_[0-9a-f]{24}$/);
      assert.deepEqual(t, { id: t.id, userId: u.id, apiKeyId, repoIds: [3, 1, 2], createdAt: T1, expiresAt: T2 });
      await assert.rejects(
        () => store.createScopedToken({ userId: u.id, apiKeyId: 'key_000000000000000000000000', hash: 'th2', repoIds: [1], expiresAt: T2 }, T1),
        'made with an existing key',
      );
      assert.deepEqual(await store.findScopedToken('th'), t);
      assert.deepEqual(await store.getScopedToken(t.id), t);
      assert.equal(await store.findScopedToken('other'), undefined);
      assert.equal((await store.revokeScopedToken(t.id, T2))!.revokedAt, T2);
      assert.equal((await store.revokeScopedToken(t.id, T3))!.revokedAt, T2);
      assert.equal(await store.revokeScopedToken('sat_000000000000000000000000', T3), undefined);
    });

    storeTest('browser sessions: created, read, touched, ended once, listed while live, pruned', async (store) => {
      const u = await store.createUser({ email: 's@example.com', name: 'S', role: 'member' }, T1);
      const k1 = await newKey(store, u.id);
      const k2 = await newKey(store, u.id);
      const s1 = await store.createSession({ userId: u.id, apiKeyId: k1, expiresAt: plus(T1, 720), userAgent: 'Mozilla/5.0 (X11) Firefox/140.0' }, T1);
      assert.match(s1.id, /^ses_[0-9a-f]{24}$/);
      assert.deepEqual(s1, { id: s1.id, userId: u.id, apiKeyId: k1, userAgent: 'Mozilla/5.0 (X11) Firefox/140.0', createdAt: T1, expiresAt: plus(T1, 720) });
      assert.deepEqual(await store.getSession(s1.id), s1);
      const bare = await store.createSession({ userId: u.id, apiKeyId: k2, expiresAt: plus(T2, 720) }, T2);
      assertNoEmptyValues(bare);
      assert.ok(!('userAgent' in bare));
      const long = await store.createSession({ userId: u.id, apiKeyId: k1, expiresAt: plus(T2, 720), userAgent: 'x'.repeat(1000) }, plus(T2, 1));
      assert.equal(long.userAgent, 'x'.repeat(256), 'a User-Agent is cut to 256 characters');
      assert.equal(await store.getSession('ses_000000000000000000000000'), undefined);
      await assert.rejects(
        () => store.createSession({ userId: u.id, apiKeyId: 'key_000000000000000000000000', expiresAt: T3 }, T1),
        'made with an existing key',
      );
      await assert.rejects(() => store.createSession({ userId: 'usr_000000000000000000000000', apiKeyId: k1, expiresAt: T3 }, T1), 'of an existing user');

      await store.touchSession(s1.id, T2);
      assert.equal((await store.getSession(s1.id))!.lastUsedAt, T2);
      // Live: newest first; then not once ended, expired, or its key revoked.
      const NOW = plus(T2, 5);
      assert.deepEqual(
        (await store.listLiveSessions(u.id, NOW)).map((x) => x.id),
        [long.id, bare.id, s1.id],
      );
      assert.deepEqual(await store.endSession(long.id, NOW), { ...long, endedAt: NOW });
      assert.equal((await store.endSession(long.id, T3))!.endedAt, NOW, 'ended once');
      assert.equal(await store.endSession('ses_000000000000000000000000', T3), undefined);
      assert.deepEqual(
        (await store.listLiveSessions(u.id, NOW)).map((x) => x.id),
        [bare.id, s1.id],
      );
      assert.deepEqual(
        (await store.listLiveSessions(u.id, plus(T1, 720))).map((x) => x.id),
        [bare.id],
        'one expiring at now is not live',
      );
      await store.revokeApiKey(k2, NOW);
      assert.deepEqual(
        (await store.listLiveSessions(u.id, NOW)).map((x) => x.id),
        [s1.id],
      );
      assert.deepEqual(await store.listLiveSessions('usr_000000000000000000000000', NOW), []);

      // Pruning: sessions that expired or ended before `before`; at `before` they stay.
      assert.equal(await store.pruneSessions(NOW), 0, 'bare and long ended at NOW, s1 expires later');
      assert.equal(await store.pruneSessions(plus(T1, 720)), 2, 'bare and long ended before; s1 expires at the cutoff: it stays');
      assert.ok(await store.getSession(s1.id));
      assert.equal(await store.pruneSessions(plus(T1, 721)), 1);
      assert.equal(await store.getSession(s1.id), undefined);
    });

    storeTest('sign-in identities: one per issuer and subject, found by them, touched at each sign-in', async (store) => {
      const u = await store.createUser({ email: 'i@example.com', name: 'I', role: 'member' }, T1);
      const v = await store.createUser({ email: 'j@example.com', name: 'J', role: 'member' }, T1);
      const a = await store.createSignInIdentity(
        { userId: u.id, issuer: 'https://idp.example.com', subject: 'abc', provider: 'corp', email: 'i@example.com' },
        T1,
      );
      assert.match(a.id, /^sso_[0-9a-f]{24}$/);
      assert.deepEqual(a, {
        id: a.id,
        userId: u.id,
        issuer: 'https://idp.example.com',
        subject: 'abc',
        provider: 'corp',
        email: 'i@example.com',
        createdAt: T1,
        lastSignedInAt: T1,
      });
      assert.deepEqual(await store.findSignInIdentity('https://idp.example.com', 'abc'), a);
      assert.deepEqual(await store.getSignInIdentity(a.id), a);
      // Compared exactly: another issuer's subject, a subject in another case, are other accounts.
      assert.equal(await store.findSignInIdentity('https://idp.example.com/', 'abc'), undefined);
      assert.equal(await store.findSignInIdentity('https://idp.example.com', 'ABC'), undefined);
      const b = await store.createSignInIdentity({ userId: u.id, issuer: 'https://github.com', subject: 'abc', provider: 'gh' }, T2);
      assertNoEmptyValues(b);
      assert.ok(!('email' in b));
      await assert.rejects(
        () => store.createSignInIdentity({ userId: v.id, issuer: 'https://idp.example.com', subject: 'abc', provider: 'corp' }, T2),
        (err: Error) => err.name === 'StoreConflictError',
        'an account links to one member',
      );
      await assert.rejects(
        () => store.createSignInIdentity({ userId: 'usr_000000000000000000000000', issuer: 'https://x', subject: '1', provider: 'x' }, T2),
        'of an existing user',
      );
      assert.deepEqual(await store.touchSignInIdentity(a.id, { provider: 'corp-new', email: 'i.new@example.com' }, T3), {
        ...a,
        provider: 'corp-new',
        email: 'i.new@example.com',
        lastSignedInAt: T3,
      });
      const bare = await store.touchSignInIdentity(a.id, { provider: 'corp' }, T3);
      assert.ok(bare && !('email' in bare), 'no email given: none kept');
      assert.equal(await store.touchSignInIdentity('sso_000000000000000000000000', { provider: 'x' }, T3), undefined);
      assert.equal(await store.getSignInIdentity('sso_000000000000000000000000'), undefined);
    });

    storeTest('sign-in flows come back once; pruned once expired', async (store) => {
      assert.equal(await store.useSignInFlow('flow-a', T2), true);
      assert.equal(await store.useSignInFlow('flow-a', T2), false, 'a replay');
      assert.equal(await store.useSignInFlow('flow-a', T3), false, 'whatever its expiry');
      assert.equal(await store.useSignInFlow('flow-b', T3), true);
      assert.equal(await store.pruneSignInFlows(T2), 0, 'one expiring at the cutoff stays');
      assert.equal(await store.pruneSignInFlows(plus(T2, 1)), 1);
      assert.equal(await store.useSignInFlow('flow-b', T3), false, 'not yet expired: still remembered');
      assert.equal(await store.useSignInFlow('flow-a', T3), true, 'forgotten once pruned');
    });

    storeTest(
      'sign-in flows: of concurrent uses of one flow, exactly one succeeds',
      async (store, ctx) => {
        const other = await ctx.open();
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : other).useSignInFlow('raced', T3)));
        assert.equal(results.filter(Boolean).length, 1);
      },
      { sharedStorage: true },
    );

    storeTest('browser sessions of single sign-on name their identity, and end with it, by sign-out everywhere, never by a key', async (store) => {
      const u = await store.createUser({ email: 'p@example.com', name: 'P', role: 'member' }, T1);
      const k = await newKey(store, u.id);
      const idn = await store.createSignInIdentity({ userId: u.id, issuer: 'https://idp.example.com', subject: 'p', provider: 'corp' }, T1);
      const NOW = T2;
      const s = await store.createSession({ userId: u.id, identityId: idn.id, expiresAt: plus(NOW, 30), userAgent: 'UA' }, T1);
      assert.deepEqual(s, { id: s.id, userId: u.id, identityId: idn.id, userAgent: 'UA', createdAt: T1, expiresAt: plus(NOW, 30) });
      assert.ok(!('apiKeyId' in s));
      assert.deepEqual(await store.getSession(s.id), s);
      const withKey = await store.createSession({ userId: u.id, apiKeyId: k, expiresAt: plus(NOW, 30) }, plus(T1, 1));
      assert.ok(!('identityId' in withKey));
      await assert.rejects(
        () => store.createSession({ userId: u.id, identityId: 'sso_000000000000000000000000', expiresAt: T3 }, T1),
        'of an existing identity',
      );
      await assert.rejects(
        () => store.createSession({ userId: u.id, apiKeyId: k, identityId: idn.id, expiresAt: T3 } as never, T1),
        'a key or an identity, not both',
      );
      await assert.rejects(() => store.createSession({ userId: u.id, expiresAt: T3 } as never, T1), 'a key or an identity, not neither');
      assert.deepEqual(
        (await store.listLiveSessions(u.id, NOW)).map((x) => x.id),
        [withKey.id, s.id],
      );
      // Revoking the user's key ends its session, not the one of single sign-on.
      const revoked = (await store.revokeApiKey(k, NOW))!;
      assert.equal(revoked.ended.sessions, 1);
      assert.ok(!('endedAt' in (await store.getSession(s.id))!));
      assert.deepEqual(
        (await store.listLiveSessions(u.id, NOW)).map((x) => x.id),
        [s.id],
      );
      // Sign-out everywhere ends it.
      assert.equal((await store.endUserCredentials(u.id, NOW)).sessions, 1);
      assert.equal((await store.getSession(s.id))!.endedAt, NOW);
      assert.deepEqual(await store.listLiveSessions(u.id, NOW), []);
      assert.equal(await store.pruneSessions(plus(NOW, 1)), 2);
    });

    storeTest('revokeApiKey ends every live credential the key opened, and nothing else, in one step', async (store) => {
      const o = store.oauth;
      const ids = await oauthParties(store, 'u@example.com');
      const u = ids.userId;
      const k1 = ids.apiKeyId;
      const k2 = await newKey(store, u, 'second');
      const v = await oauthParties(store, 'v@example.com', 'Other app');
      const NOW = T2;
      const soon = plus(NOW, 30);
      const token = (apiKeyId: string, userId: string, expiresAt: string, hash: string) =>
        store.createScopedToken({ userId, apiKeyId, hash, repoIds: [1], expiresAt }, T1);
      const session = (apiKeyId: string, userId: string, expiresAt: string) => store.createSession({ userId, apiKeyId, expiresAt }, T1);

      // What k1 opened: live ones, and ones already dead (expired, revoked, ended) that must keep their state.
      const t1 = await token(k1, u, soon, 't1');
      const t1expired = await token(k1, u, plus(NOW, -1), 't1x');
      const t1revoked = await token(k1, u, soon, 't1r');
      await store.revokeScopedToken(t1revoked.id, T1);
      const g1 = await newGrant(store, ids, T1, [newToken('g1-at', 'access', soon), newToken('g1-rt', 'refresh', plus(NOW, 30 * DAY))]);
      const g1dead = await newGrant(store, ids, T1, [newToken('g1d-at', 'access', plus(NOW, -1))]);
      const s1 = await session(k1, u, soon);
      const s1ended = await session(k1, u, soon);
      await store.endSession(s1ended.id, T1);
      const s1expired = await session(k1, u, plus(NOW, -1));
      // What k2 and another user opened: untouched.
      const t2 = await token(k2, u, soon, 't2');
      const g2 = await newGrant(store, { ...ids, apiKeyId: k2 }, T1, [newToken('g2-rt', 'refresh', plus(NOW, 30 * DAY))]);
      const s2 = await session(k2, u, soon);
      const t3 = await token(v.apiKeyId, v.userId, soon, 't3');
      const g3 = await newGrant(store, v, T1, [newToken('g3-at', 'access', soon)]);
      const s3 = await session(v.apiKeyId, v.userId, soon);

      const revoked = (await store.revokeApiKey(k1, NOW))!;
      assert.equal(revoked.key.id, k1);
      assert.equal(revoked.key.revokedAt, NOW);
      assert.deepEqual(revoked.ended, { scopedTokens: 1, oauthGrants: 1, sessions: 1 });
      assert.equal((await store.getScopedToken(t1.id))!.revokedAt, NOW);
      assert.ok(!('revokedAt' in (await store.getScopedToken(t1expired.id))!), 'an expired token is left as it was');
      assert.equal((await store.getScopedToken(t1revoked.id))!.revokedAt, T1, 'a revoked one keeps its time');
      assert.equal((await o.getGrant(g1.id))!.revokedAt, NOW);
      assert.ok(!('revokedAt' in (await o.getGrant(g1dead.id))!), 'a grant with no usable token is left as it was');
      assert.equal((await store.getSession(s1.id))!.endedAt, NOW);
      assert.equal((await store.getSession(s1ended.id))!.endedAt, T1);
      assert.ok(!('endedAt' in (await store.getSession(s1expired.id))!));
      for (const t of [t2, t3]) assert.deepEqual(await store.getScopedToken(t.id), t, "another key's token is untouched");
      for (const g of [g2, g3]) assert.deepEqual(await o.getGrant(g.id), g, "another key's grant is untouched");
      for (const x of [s2, s3]) assert.deepEqual(await store.getSession(x.id), x, "another key's session is untouched");
      assert.equal(await o.rotateRefreshToken('g1-rt', [], NOW), false, "the revoked grant's refresh token does not rotate");

      // Listings: only what the other key opened.
      assert.deepEqual(
        (await store.listLiveScopedTokens(u, NOW)).map((t) => t.id),
        [t2.id],
      );
      assert.deepEqual(
        (await o.listLiveGrants(NOW, u)).map((g) => g.id),
        [g2.id],
      );
      assert.deepEqual(
        (await store.listLiveSessions(u, NOW)).map((x) => x.id),
        [s2.id],
      );

      // Something opened with the key after its revocation (a request that raced it) is not
      // live, cannot rotate, and a second revocation ends it; the first time is kept.
      const late = await token(k1, u, plus(T3, 60), 't-late');
      const lateGrant = await newGrant(store, ids, NOW, [newToken('late-rt', 'refresh', plus(NOW, 30 * DAY))]);
      const lateSession = await session(k1, u, plus(T3, 60));
      assert.equal(lateGrant.apiKeyId, k1);
      assert.deepEqual(
        (await store.listLiveScopedTokens(u, NOW)).map((t) => t.id),
        [t2.id],
        "a revoked key's token is never listed as live",
      );
      assert.deepEqual(
        (await o.listLiveGrants(NOW, u)).map((g) => g.id),
        [g2.id],
        'nor its grant',
      );
      assert.deepEqual(
        (await store.listLiveSessions(u, NOW)).map((x) => x.id),
        [s2.id],
        'nor its session',
      );
      assert.equal(
        await o.rotateRefreshToken('late-rt', [newToken('late-rt2', 'refresh', plus(T3, 60))], T3),
        false,
        'a grant whose key is revoked does not rotate',
      );
      assert.equal(await o.findToken('late-rt2'), undefined);
      const again = (await store.revokeApiKey(k1, T3))!;
      assert.equal(again.key.revokedAt, NOW, 'revoked once');
      assert.deepEqual(again.ended, { scopedTokens: 1, oauthGrants: 1, sessions: 1 });
      assert.equal((await store.getScopedToken(late.id))!.revokedAt, T3);
      assert.equal((await store.getSession(lateSession.id))!.endedAt, T3);
      assert.equal(await store.revokeApiKey('key_000000000000000000000000', T3), undefined);
      assert.equal(await o.rotateRefreshToken('g2-rt', [], T3), true, "the other key's grant still rotates");
    });

    storeTest('endUserCredentials: every live scoped token, grant and session of the user; keys stay; others untouched', async (store) => {
      const o = store.oauth;
      const ids = await oauthParties(store, 'u@example.com');
      const k2 = await newKey(store, ids.userId, 'second');
      const v = await oauthParties(store, 'v@example.com', 'Other app');
      const NOW = T2;
      const soon = plus(NOW, 30);
      const mine = [
        await store.createScopedToken({ userId: ids.userId, apiKeyId: ids.apiKeyId, hash: 'a', repoIds: [1], expiresAt: soon }, T1),
        await store.createScopedToken({ userId: ids.userId, apiKeyId: k2, hash: 'b', repoIds: [1], expiresAt: soon }, T1),
      ];
      const grants = [
        await newGrant(store, ids, T1, [newToken('ga', 'access', soon)]),
        await newGrant(store, { ...ids, apiKeyId: k2 }, T1, [newToken('gb', 'refresh', plus(NOW, DAY))]),
      ];
      const sessions = [
        await store.createSession({ userId: ids.userId, apiKeyId: ids.apiKeyId, expiresAt: soon }, T1),
        await store.createSession({ userId: ids.userId, apiKeyId: k2, expiresAt: soon }, T1),
      ];
      const theirs = await store.createScopedToken({ userId: v.userId, apiKeyId: v.apiKeyId, hash: 'c', repoIds: [1], expiresAt: soon }, T1);
      const theirGrant = await newGrant(store, v, T1, [newToken('gc', 'access', soon)]);
      const theirSession = await store.createSession({ userId: v.userId, apiKeyId: v.apiKeyId, expiresAt: soon }, T1);

      assert.deepEqual(await store.endUserCredentials(ids.userId, NOW), { scopedTokens: 2, oauthGrants: 2, sessions: 2 });
      for (const t of mine) assert.equal((await store.getScopedToken(t.id))!.revokedAt, NOW);
      for (const g of grants) assert.equal((await o.getGrant(g.id))!.revokedAt, NOW);
      for (const x of sessions) assert.equal((await store.getSession(x.id))!.endedAt, NOW);
      assert.ok(
        (await store.listApiKeys(ids.userId)).every((k) => !('revokedAt' in k)),
        'the keys stay',
      );
      assert.deepEqual(await store.getScopedToken(theirs.id), theirs);
      assert.deepEqual(await o.getGrant(theirGrant.id), theirGrant);
      assert.deepEqual(await store.getSession(theirSession.id), theirSession);
      assert.deepEqual(await store.endUserCredentials(ids.userId, T3), { scopedTokens: 0, oauthGrants: 0, sessions: 0 }, 'nothing left');
      assert.deepEqual(await store.endUserCredentials('usr_000000000000000000000000', T3), { scopedTokens: 0, oauthGrants: 0, sessions: 0 });
    });

    storeTest('listLiveScopedTokens and touchGrant', async (store) => {
      const ids = await oauthParties(store);
      const mk = (hash: string, createdAt: string, expiresAt: string) =>
        store.createScopedToken({ userId: ids.userId, apiKeyId: ids.apiKeyId, hash, repoIds: [2, 1], expiresAt }, createdAt);
      const old = await mk('old', T1, plus(T2, 60));
      const newer = await mk('newer', plus(T1, 1), plus(T2, 60));
      await mk('expired', T1, T2);
      await store.revokeScopedToken((await mk('revoked', T1, plus(T2, 60))).id, T1);
      assert.deepEqual(await store.listLiveScopedTokens(ids.userId, T2), [newer, old], 'newest first; expired at now and revoked ones left out');
      assert.deepEqual(await store.listLiveScopedTokens('usr_000000000000000000000000', T2), []);

      const grant = await newGrant(store, ids, T1, [newToken('at', 'access', plus(T2, 60))]);
      await store.oauth.touchGrant(grant.id, T2);
      assert.deepEqual(await store.oauth.getGrant(grant.id), { ...grant, lastUsedAt: T2 });
      await store.oauth.touchGrant('ogr_000000000000000000000000', T2); // nothing to do, no error
    });

    storeTest('the installed license: none, then one, replaced by the next', async (store) => {
      assert.equal(await store.getLicense(), undefined);
      await store.putLicense('{"payload":"a","signature":"b"}');
      assert.equal(await store.getLicense(), '{"payload":"a","signature":"b"}');
      await store.putLicense('{"payload":"c","signature":"d"}');
      assert.equal(await store.getLicense(), '{"payload":"c","signature":"d"}');
    });

    storeTest(
      'users and keys survive reopening',
      async (store, ctx) => {
        const u = await store.createUser({ email: 'p@example.com', name: 'P', role: 'owner' }, T1);
        const k = await store.createApiKey({ userId: u.id, name: 'n', hash: 'hp', hint: 'svk_aaaaaaaa' }, T1);
        await ctx.close(store);
        const again = await ctx.open();
        assert.deepEqual(await again.getUser(u.id), u);
        assert.deepEqual(await again.findApiKey('hp'), k);
      },
      { sharedStorage: true },
    );

    // ---- OAuth ----

    storeTest('OAuth clients: created with an id, read back as registered; no secretHash for a public client; counted', async (store) => {
      const o = store.oauth;
      assert.equal(await o.countClients(), 0);
      const metadata = {
        client_name: 'Agent "1" ü',
        redirect_uris: ['http://127.0.0.1/cb', 'cursor://x/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        nested: { list: [1, 'two', null, { three: 3 }], flag: true },
      };
      const confidential = await o.createClient(
        { secretHash: 'sh'.repeat(32), name: 'Agent "1" ü', redirectUris: ['http://127.0.0.1/cb', 'cursor://x/cb'], metadata },
        T1,
      );
      assert.match(confidential.id, /^oac_[0-9a-f]{24}$/);
      assert.deepEqual(confidential, {
        id: confidential.id,
        secretHash: 'sh'.repeat(32),
        name: 'Agent "1" ü',
        redirectUris: ['http://127.0.0.1/cb', 'cursor://x/cb'],
        metadata,
        createdAt: T1,
      });
      assert.deepEqual(await o.getClient(confidential.id), confidential);

      const pub = await o.createClient({ name: 'Public', redirectUris: [REDIRECT], metadata: {} }, T2);
      assert.deepEqual(pub, { id: pub.id, name: 'Public', redirectUris: [REDIRECT], metadata: {}, createdAt: T2 });
      assert.ok(!('secretHash' in pub), 'no secretHash key for a public client');
      assertNoEmptyValues(pub);
      const pub2 = await o.createClient({ secretHash: undefined, name: 'Public 2', redirectUris: [REDIRECT], metadata: {} }, T2);
      assertNoEmptyValues(pub2);
      assert.deepEqual(await o.getClient(pub.id), pub);
      assertNoEmptyValues((await o.getClient(pub.id))!);

      assert.equal(new Set([confidential.id, pub.id, pub2.id]).size, 3);
      assert.equal(await o.countClients(), 3);
      assert.equal(await o.getClient('oac_000000000000000000000000'), undefined);

      // Snapshots.
      const copy = await structuredClone(confidential);
      confidential.redirectUris.push('https://evil.example/cb');
      (confidential.metadata.nested as { list: unknown[] }).list.push('x');
      assert.deepEqual(await o.getClient(copy.id), copy);
    });

    storeTest('OAuth codes: createCode and peekCode round-trip; resource optional; client and user must exist', async (store) => {
      const o = store.oauth;
      const ids = await oauthParties(store);
      const withResource = await newCode(store, 'code-r', ids, T1, { resource: 'http://127.0.0.1:3000/api/mcp' });
      assert.deepEqual(withResource, {
        hash: 'code-r',
        clientId: ids.clientId,
        userId: ids.userId,
        apiKeyId: ids.apiKeyId,
        redirectUri: REDIRECT,
        codeChallenge: CHALLENGE,
        scope: 'search',
        resource: 'http://127.0.0.1:3000/api/mcp',
        createdAt: T1,
        expiresAt: plus(T1, 5),
      });
      assert.deepEqual(await o.peekCode('code-r'), withResource);

      const plain = await newCode(store, 'code-p', ids, T2);
      assert.deepEqual(plain, {
        hash: 'code-p',
        clientId: ids.clientId,
        userId: ids.userId,
        apiKeyId: ids.apiKeyId,
        redirectUri: REDIRECT,
        codeChallenge: CHALLENGE,
        scope: 'search',
        createdAt: T2,
        expiresAt: plus(T2, 5),
      });
      assertNoEmptyValues(plain);
      assertNoEmptyValues((await o.peekCode('code-p'))!);
      assert.deepEqual(await o.peekCode('code-p'), plain);
      assert.equal(await o.peekCode('code-unknown'), undefined);

      await assert.rejects(() => newCode(store, 'code-x', { ...ids, clientId: 'oac_000000000000000000000000' }, T1), 'a code belongs to an existing client');
      await assert.rejects(() => newCode(store, 'code-y', { ...ids, userId: 'usr_000000000000000000000000' }, T1), 'a code belongs to an existing user');
      await assert.rejects(() => newCode(store, 'code-z', { ...ids, apiKeyId: 'key_000000000000000000000000' }, T1), 'a code names an existing API key');
      await assert.rejects(() => newCode(store, 'code-p', ids, T3), 'a hash is one code');
      assert.deepEqual(await o.peekCode('code-p'), plain);
      assert.equal(await o.peekCode('code-x'), undefined);
    });

    storeTest('redeemCode: the first exchange creates the grant and its tokens and uses the code; later ones get { reused }', async (store) => {
      const o = store.oauth;
      const ids = await oauthParties(store);
      const resource = 'http://127.0.0.1:3000/api/mcp';
      const code = await newCode(store, 'code-1', ids, T1, { resource });
      const access = newToken('at-1', 'access', plus(T2, 60));
      const refresh = newToken('rt-1', 'refresh', plus(T2, 30 * DAY));

      const first = await o.redeemCode('code-1', [access, refresh], T2);
      assert.ok(first !== undefined && 'grant' in first, JSON.stringify(first));
      const grant = first.grant;
      assert.match(grant.id, /^ogr_[0-9a-f]{24}$/);
      assert.deepEqual(
        grant,
        { id: grant.id, clientId: ids.clientId, userId: ids.userId, apiKeyId: ids.apiKeyId, scope: 'search', resource, createdAt: T2 },
        "the grant inherits the code's API key",
      );
      assert.deepEqual(await o.getGrant(grant.id), grant);
      assert.deepEqual(await o.peekCode('code-1'), { ...code, usedAt: T2, grantId: grant.id });
      assert.deepEqual(await o.findToken('at-1'), {
        token: { hash: 'at-1', grantId: grant.id, kind: 'access', createdAt: T2, expiresAt: access.expiresAt },
        grant,
      });
      assert.deepEqual(await o.findToken('rt-1'), {
        token: { hash: 'rt-1', grantId: grant.id, kind: 'refresh', createdAt: T2, expiresAt: refresh.expiresAt },
        grant,
      });
      assertNoEmptyValues((await o.findToken('at-1'))!.token);
      assert.equal(await o.findToken('at-unknown'), undefined);

      const second = await o.redeemCode('code-1', [newToken('at-2', 'access', plus(T3, 60))], T3);
      assert.deepEqual(second, { reused: { ...code, usedAt: T2, grantId: grant.id } }, 'the first use and its grant are kept');
      assert.equal(await o.findToken('at-2'), undefined, 'a reused code mints nothing');
      await o.revokeGrant(grant.id, T3);
      assert.deepEqual(await o.redeemCode('code-1', [], T3), { reused: { ...code, usedAt: T2, grantId: grant.id } }, 'still reused once the grant is revoked');

      assert.equal(await o.redeemCode('code-unknown', [newToken('at-3', 'access', plus(T3, 60))], T3), undefined);
      assert.equal(await o.findToken('at-3'), undefined);

      // Without a resource, the grant has none.
      await newCode(store, 'code-2', ids, T1);
      const other = await o.redeemCode('code-2', [newToken('at-4', 'access', plus(T2, 60))], T2);
      assert.ok(other !== undefined && 'grant' in other);
      assert.notEqual(other.grant.id, grant.id);
      assert.ok(!('resource' in other.grant));
      assertNoEmptyValues(other.grant);
      assert.deepEqual((await o.findToken('at-4'))?.grant, other.grant);
    });

    storeTest(
      'redeemCode through two handles: each code gives exactly one grant',
      async (store, ctx) => {
        const other = await ctx.open();
        const ids = await oauthParties(store);
        const hashes = Array.from({ length: 8 }, (_, i) => `code-${i}`);
        for (const h of hashes) await newCode(store, h, ids, T1);
        // Both handles exchange every code, the first to go alternating between them.
        const results = await Promise.all(
          hashes.flatMap((h, i) =>
            (i % 2 === 0 ? [store, other] : [other, store]).map(async (s, j) => ({
              h,
              j,
              r: await s.oauth.redeemCode(h, [newToken(`${h}-at-${j}`, 'access', plus(T2, 60))], T2),
            })),
          ),
        );
        for (const h of hashes) {
          const mine = results.filter((x) => x.h === h);
          const won = mine.filter((x) => x.r !== undefined && 'grant' in x.r);
          const reused = mine.filter((x) => x.r !== undefined && 'reused' in x.r);
          assert.equal(won.length, 1, `${h}: exactly one exchange creates a grant`);
          assert.equal(reused.length, 1, `${h}: the other is told the code was used`);
          const grant = (won[0]!.r as { grant: OAuthGrantRecord }).grant;
          assert.equal((reused[0]!.r as { reused: OAuthCodeRecord }).reused.grantId, grant.id);
          assert.deepEqual((await other.oauth.findToken(`${h}-at-${won[0]!.j}`))?.grant, grant);
          assert.equal(await store.oauth.findToken(`${h}-at-${reused[0]!.j}`), undefined, `${h}: the loser minted no token`);
        }
        assert.equal((await store.oauth.listLiveGrants(T2)).length, hashes.length);
        assert.deepEqual(await other.oauth.listLiveGrants(T2), await store.oauth.listLiveGrants(T2));
      },
      { sharedStorage: true },
    );

    storeTest('rotateRefreshToken: once per refresh token of a live grant; otherwise false, and nothing changes', async (store) => {
      const o = store.oauth;
      const ids = await oauthParties(store);
      const grant = await newGrant(store, ids, T1, [newToken('at-1', 'access', plus(T1, 60)), newToken('rt-1', 'refresh', plus(T1, 30 * DAY))]);

      const next = [newToken('at-2', 'access', plus(T2, 60)), newToken('rt-2', 'refresh', plus(T2, 30 * DAY))];
      assert.equal(await o.rotateRefreshToken('rt-1', next, T2), true);
      assert.equal((await o.findToken('rt-1'))?.token.rotatedAt, T2);
      const used = { ...grant, lastUsedAt: T2 }; // a refresh is a use of the grant
      assert.deepEqual(await o.findToken('at-2'), {
        token: { hash: 'at-2', grantId: grant.id, kind: 'access', createdAt: T2, expiresAt: plus(T2, 60) },
        grant: used,
      });
      assert.deepEqual(await o.findToken('rt-2'), {
        token: { hash: 'rt-2', grantId: grant.id, kind: 'refresh', createdAt: T2, expiresAt: plus(T2, 30 * DAY) },
        grant: used,
      });

      assert.equal(await o.rotateRefreshToken('rt-1', [newToken('rt-x', 'refresh', plus(T3, 60))], T3), false, 'a refresh token rotates once');
      assert.equal((await o.findToken('rt-1'))?.token.rotatedAt, T2, 'the first rotation time stays');
      assert.equal(await o.findToken('rt-x'), undefined);

      assert.equal(await o.rotateRefreshToken('at-2', [newToken('rt-y', 'refresh', plus(T3, 60))], T3), false, 'an access token does not rotate');
      assert.ok(!('rotatedAt' in (await o.findToken('at-2'))!.token));
      assert.equal(await o.findToken('rt-y'), undefined);

      assert.equal(await o.rotateRefreshToken('rt-unknown', [newToken('rt-z', 'refresh', plus(T3, 60))], T3), false);
      assert.equal(await o.findToken('rt-z'), undefined);

      await o.revokeToken('rt-2', T3);
      assert.equal(await o.rotateRefreshToken('rt-2', [newToken('rt-3', 'refresh', plus(T3, 60))], T3), false, 'a revoked refresh token does not rotate');
      assert.ok(!('rotatedAt' in (await o.findToken('rt-2'))!.token));
      assert.equal(await o.findToken('rt-3'), undefined);

      const revoked = await newGrant(store, ids, T1, [newToken('rt-b', 'refresh', plus(T1, 30 * DAY))]);
      await o.revokeGrant(revoked.id, T2);
      assert.equal(await o.rotateRefreshToken('rt-b', [newToken('rt-b2', 'refresh', plus(T3, 60))], T3), false, 'a token of a revoked grant does not rotate');
      assert.ok(!('rotatedAt' in (await o.findToken('rt-b'))!.token));
      assert.equal(await o.findToken('rt-b2'), undefined);

      // Rotation does not judge expiry (the caller does), and may add nothing.
      const old = await newGrant(store, ids, T1, [newToken('rt-old', 'refresh', plus(T1, 1))]);
      assert.equal(await o.rotateRefreshToken('rt-old', [], T3), true);
      assert.equal((await o.findToken('rt-old'))?.grant.id, old.id);
    });

    storeTest(
      'rotateRefreshToken through two handles: exactly one succeeds',
      async (store, ctx) => {
        const other = await ctx.open();
        const ids = await oauthParties(store);
        await newGrant(store, ids, T1, [newToken('rt-1', 'refresh', plus(T1, 30 * DAY))]);
        const results = await Promise.all(
          [other, store, other, store].map(async (s, i) => s.oauth.rotateRefreshToken('rt-1', [newToken(`rt-next-${i}`, 'refresh', plus(T2, 30 * DAY))], T2)),
        );
        assert.deepEqual(results, [true, false, false, false]);
        assert.ok(await store.oauth.findToken('rt-next-0'));
        for (const i of [1, 2, 3]) assert.equal(await other.oauth.findToken(`rt-next-${i}`), undefined);
      },
      { sharedStorage: true },
    );

    storeTest('revokeGrant and revokeToken: once; a second call keeps the first time', async (store) => {
      const o = store.oauth;
      const ids = await oauthParties(store);
      const grant = await newGrant(store, ids, T1, [newToken('at-1', 'access', plus(T1, 60)), newToken('rt-1', 'refresh', plus(T1, 30 * DAY))]);
      assert.deepEqual(await o.revokeGrant(grant.id, T2), { ...grant, revokedAt: T2 });
      assert.deepEqual(await o.revokeGrant(grant.id, T3), { ...grant, revokedAt: T2 }, 'revoked once');
      assert.equal((await o.getGrant(grant.id))?.revokedAt, T2);
      assert.equal((await o.findToken('at-1'))?.grant.revokedAt, T2, 'its tokens are found with the revoked grant');
      assert.equal((await o.findToken('rt-1'))?.grant.revokedAt, T2);
      assert.equal(await o.revokeGrant(NO_GRANT, T3), undefined);
      assert.equal(await o.getGrant(NO_GRANT), undefined);

      const g2 = await newGrant(store, ids, T1, [newToken('at-2', 'access', plus(T1, 60)), newToken('rt-2', 'refresh', plus(T1, 30 * DAY))]);
      await o.revokeToken('at-2', T2);
      assert.equal((await o.findToken('at-2'))?.token.revokedAt, T2);
      await o.revokeToken('at-2', T3);
      assert.equal((await o.findToken('at-2'))?.token.revokedAt, T2, 'revoked once');
      assert.ok(!('revokedAt' in (await o.findToken('rt-2'))!.token), 'the other token of the grant is untouched');
      assert.deepEqual(await o.getGrant(g2.id), g2, 'and so is the grant');
      await o.revokeToken('at-unknown', T3); // nothing to do, no error
    });

    storeTest('listLiveGrants: grants with a token that is unexpired, unrevoked and unrotated; newest first; per user', async (store) => {
      const o = store.oauth;
      const one = await oauthParties(store, 'one@example.com', 'Agent');
      const twoUser = await store.createUser({ email: 'two@example.com', name: 'Two', role: 'member' }, T1);
      const otherClient = await o.createClient({ name: 'Other app', redirectUris: [REDIRECT], metadata: {} }, T1);
      const two = { userId: twoUser.id, clientId: otherClient.id, apiKeyId: await newKey(store, twoUser.id) };
      const NOW = plus(T1, 120);
      const later = (m: number): string => plus(NOW, m);
      const at = (m: number): string => plus(T1, m); // creation times, one minute apart

      const live = await newGrant(store, one, at(1), [newToken('a-live', 'access', later(60))]);
      const othersLive = await newGrant(store, two, at(2), [newToken('b-live', 'access', later(60))]);
      const revoked = await newGrant(store, one, at(3), [newToken('c-at', 'access', later(60)), newToken('c-rt', 'refresh', later(30 * DAY))]);
      await o.revokeGrant(revoked.id, at(3));
      const expired = await newGrant(store, one, at(4), [newToken('d-at', 'access', later(-1)), newToken('d-rt', 'refresh', later(-1))]); // all expired
      await newGrant(store, one, at(5), [newToken('e-at', 'access', later(60))]);
      await o.revokeToken('e-at', at(5)); // its only token revoked
      await newGrant(store, one, at(6), [newToken('f-rt', 'refresh', later(30 * DAY))]);
      assert.equal(await o.rotateRefreshToken('f-rt', [], at(6)), true); // its only token rotated
      const refreshOnly = await newGrant(store, one, at(7), [newToken('g-at', 'access', later(-1)), newToken('g-rt', 'refresh', later(30 * DAY))]);
      const edge = await newGrant(store, one, at(8), [newToken('h-at', 'access', NOW)]); // expires at NOW: no longer live
      const accessOnly = await newGrant(store, one, at(9), [newToken('i-at', 'access', later(60)), newToken('i-rt', 'refresh', later(30 * DAY))]);
      assert.equal(await o.rotateRefreshToken('i-rt', [], at(9)), true); // refresh rotated, access still live
      const accessOnlyUsed = { ...accessOnly, lastUsedAt: at(9) }; // the refresh was a use

      const named = (g: OAuthGrantRecord, clientName: string): OAuthGrantRecord & { clientName: string } => ({ ...g, clientName });
      assert.deepEqual(await o.listLiveGrants(NOW), [
        named(accessOnlyUsed, 'Agent'),
        named(refreshOnly, 'Agent'),
        named(othersLive, 'Other app'),
        named(live, 'Agent'),
      ]);
      assert.deepEqual(await o.listLiveGrants(NOW, one.userId), [named(accessOnlyUsed, 'Agent'), named(refreshOnly, 'Agent'), named(live, 'Agent')]);
      assert.deepEqual(await o.listLiveGrants(NOW, two.userId), [named(othersLive, 'Other app')]);
      assert.deepEqual(await o.listLiveGrants(NOW, 'usr_000000000000000000000000'), []);
      assert.deepEqual(
        (await o.listLiveGrants(later(61))).map((g) => g.id),
        [refreshOnly.id],
        'once the access tokens expire, only an unrotated refresh token keeps a grant live',
      );
      assert.deepEqual(await o.listLiveGrants(later(31 * DAY)), []);
      assert.deepEqual(
        (await o.listLiveGrants(later(-2))).map((g) => g.id),
        [accessOnly, edge, refreshOnly, expired, othersLive, live].map((g) => g.id),
        'two minutes earlier, the grants whose tokens expire at NOW - 1 and NOW are live too',
      );
    });

    storeTest('registerClient: per-address count in a window, a cap on clients never used; pruneUnusedClients', async (store) => {
      const o = store.oauth;
      const user = await store.createUser({ email: 'r@example.com', name: 'R', role: 'member' }, T1);
      const apiKeyId = await newKey(store, user.id);
      const c = (name: string) => ({ name, redirectUris: [REDIRECT], metadata: { client_name: name } });
      // The window is open at its start: `since` one millisecond before T1 counts T1.
      const limits = (from: string, since: string, perAddress = 2, maxUnused = 100) => ({
        from,
        since: new Date(Date.parse(since) - 1).toISOString(),
        perAddress,
        maxUnused,
      });
      const a1 = await o.registerClient(c('a1'), T1, limits('A', T1));
      assert.ok('client' in a1);
      assert.deepEqual(await o.getClient(a1.client.id), a1.client, 'read back like any client');
      assert.ok(!('registeredFrom' in a1.client), 'who registered is not part of the record');
      const a2 = await o.registerClient(c('a2'), plus(T1, 5), limits('A', T1));
      assert.ok('client' in a2);
      assert.deepEqual(await o.registerClient(c('a3'), plus(T1, 6), limits('A', T1)), { refused: 'address', oldest: T1 });
      assert.ok('client' in (await o.registerClient(c('b1'), plus(T1, 6), limits('B', T1))), 'another address is not affected');
      // The window moves: registrations at or before `since` no longer count.
      assert.ok('client' in (await o.registerClient(c('a3'), plus(T1, 7), { from: 'A', since: T1, perAddress: 2, maxUnused: 100 })));
      assert.deepEqual(await o.registerClient(c('a4'), plus(T1, 8), limits('A', plus(T1, 1))), { refused: 'address', oldest: plus(T1, 5) });
      await o.createClient(c('legacy'), T1); // no address: counts for none
      assert.ok('client' in (await o.registerClient(c('c1'), plus(T1, 8), limits('C', T1, 1))));
      assert.equal(await o.countClients(), 6);

      // The cap counts clients never used, from anyone: a code or a grant takes a client out.
      assert.deepEqual(await o.registerClient(c('d1'), plus(T1, 9), limits('D', T1, 5, 6)), { refused: 'unused' });
      await newCode(store, 'code-a1', { clientId: a1.client.id, userId: user.id, apiKeyId }, plus(T1, 9));
      const d1 = await o.registerClient(c('d1'), plus(T1, 9), limits('D', T1, 5, 6));
      assert.ok('client' in d1, 'a1 is in use now');
      assert.deepEqual(await o.registerClient(c('d2'), plus(T1, 9), limits('D', T1, 5, 6)), { refused: 'unused' });
      assert.equal(await o.countClients(), 7);

      // Pruning: never-used clients created before the cutoff; at the cutoff they stay.
      const a2c = (a2 as { client: OAuthClientRecord }).client;
      await newGrant(store, { clientId: a2c.id, userId: user.id, apiKeyId }, plus(T1, 9), [newToken('a2-rt', 'refresh', plus(T1, 30 * DAY))]);
      assert.equal(await o.pruneUnusedClients(plus(T1, 8)), 3, 'b1, a3 and legacy: created before +8, never used');
      assert.equal(await o.countClients(), 4);
      assert.ok(await o.getClient(a1.client.id), 'a client with a code stays');
      assert.ok(await o.getClient(a2c.id), 'a client with a grant stays');
      assert.ok(await o.getClient(d1.client.id), 'a client registered after the cutoff stays');
      const c1 = await o.registerClient(c('c2'), plus(T1, 9), limits('C', T1, 2));
      assert.ok('client' in c1, 'c1 still counts against C: one left of two');
      assert.deepEqual(await o.registerClient(c('c3'), plus(T1, 9), limits('C', T1, 2)), { refused: 'address', oldest: plus(T1, 8) });
      assert.equal(await o.pruneUnusedClients(plus(T1, 8)), 0);
    });

    storeTest('prune: expired codes and tokens, then grants without tokens, then old clients with nothing left', async (store) => {
      const o = store.oauth;
      const user = await store.createUser({ email: 'p@example.com', name: 'P', role: 'member' }, T1);
      const apiKeyId = await newKey(store, user.id);
      const CUTOFF = T3;
      const client = async (name: string, createdAt = T1): Promise<OAuthClientRecord> =>
        await o.createClient({ name, redirectUris: [REDIRECT], metadata: {} }, createdAt);
      const ids = (c: OAuthClientRecord): Parties => ({ clientId: c.id, userId: user.id, apiKeyId });

      const abandoned = await client('abandoned'); // only an expired, unused code: both go
      await newCode(store, 'code-abandoned', ids(abandoned), T1);
      const kept = await client('kept'); // a grant with a live refresh token: stays, less what expired
      const keptGrant = await newGrant(store, ids(kept), T1, [
        newToken('kept-at', 'access', plus(T1, 60)),
        newToken('kept-rt', 'refresh', plus(CUTOFF, 30 * DAY)),
        newToken('kept-edge', 'access', CUTOFF),
      ]);
      const gone = await client('gone'); // a grant whose tokens all expired: tokens, grant, code and client go
      const goneGrant = await newGrant(store, ids(gone), T1, [newToken('gone-at', 'access', plus(T1, 60)), newToken('gone-rt', 'refresh', plus(T2, 60))]);
      const pending = await client('pending'); // an unexpired code: stays
      await newCode(store, 'code-pending', ids(pending), plus(CUTOFF, -1));
      const fresh_ = await client('fresh', CUTOFF); // registered at the cutoff, not before: stays
      const revokedClient = await client('revoked'); // a revoked grant that still has a token: stays
      const revokedGrant = await newGrant(store, ids(revokedClient), T1, [newToken('rev-rt', 'refresh', plus(CUTOFF, 30 * DAY))]);
      await o.revokeGrant(revokedGrant.id, T2);
      assert.equal(await o.countClients(), 6);

      // Codes: abandoned, kept's, gone's, revoked's (4). Tokens: kept-at, gone-at, gone-rt (3).
      // Grants: gone's (1). Clients: abandoned, gone (2).
      assert.equal(await o.prune(CUTOFF), 10);

      assert.equal(await o.countClients(), 4);
      assert.equal(await o.getClient(abandoned.id), undefined);
      assert.equal(await o.getClient(gone.id), undefined);
      for (const c of [kept, pending, fresh_, revokedClient]) assert.deepEqual(await o.getClient(c.id), c, `${c.name} stays`);

      for (const h of ['code-abandoned', 'code-kept-at', 'code-gone-at', 'code-rev-rt']) assert.equal(await o.peekCode(h), undefined, `${h} went`);
      assert.ok(await o.peekCode('code-pending'), 'the unexpired code stays');

      assert.equal(await o.findToken('kept-at'), undefined);
      assert.deepEqual((await o.findToken('kept-rt'))?.grant, keptGrant);
      assert.ok(await o.findToken('kept-edge'), 'a token expiring at the cutoff stays');
      assert.equal(await o.findToken('gone-at'), undefined);
      assert.equal(await o.findToken('gone-rt'), undefined);
      assert.equal(await o.getGrant(goneGrant.id), undefined);
      assert.deepEqual(await o.getGrant(revokedGrant.id), { ...revokedGrant, revokedAt: T2 }, 'a revoked grant with a token stays');
      assert.ok(await o.findToken('rev-rt'));

      assert.equal(await o.prune(CUTOFF), 0, 'nothing left to prune');
      assert.deepEqual(await o.listLiveGrants(CUTOFF), [{ ...keptGrant, clientName: 'kept' }]);
    });

    // ---- audit log ----

    const event = (at: string, action: string, extra: Partial<NewAuditEvent> = {}): NewAuditEvent => ({
      at,
      action,
      outcome: 'success',
      actor: { credentialKind: 'cli', credentialId: 'root' },
      ...extra,
    });

    storeTest('audit: append assigns increasing ids; every field round-trips; absent ones are omitted', async (store) => {
      const full: NewAuditEvent = {
        at: T1,
        action: 'scoped_token.created',
        outcome: 'failure',
        actor: { userId: 'usr_1', credentialKind: 'apiKey', credentialId: 'key_1' },
        target: { type: 'scoped_token', id: 'sat_1' },
        sourceAddress: '2001:0db8:0000:0000:0000:0000:0000:0001',
        details: { repoIds: [1, 2], repoCount: 2, nested: { a: 'ü "quoted"\n' }, flag: true, none: null },
      };
      const a = await store.audit.append(full);
      assert.ok(Number.isSafeInteger(a.id) && a.id > 0, `id ${a.id}`);
      assert.deepEqual(a, { id: a.id, ...full });
      const bare = await store.audit.append(event(T1, 'auth.failed'));
      assert.ok(bare.id > a.id);
      assert.deepEqual(bare, { id: bare.id, ...event(T1, 'auth.failed') });
      assertNoEmptyValues(bare);
      assertNoEmptyValues(bare.actor);
      assert.deepEqual(await store.audit.list({ offset: 0, limit: 10 }), { events: [bare, a], total: 2 });
    });

    storeTest('audit: newest first by at, then id; paging with offset and limit; total ignores the page', async (store) => {
      const made: AuditEventRecord[] = [];
      for (const at of [T2, T1, T3, T2]) made.push(await store.audit.append(event(at, 'user.added')));
      const order = [made[2]!, made[3]!, made[0]!, made[1]!];
      assert.deepEqual(await store.audit.list({ offset: 0, limit: 100 }), { events: order, total: 4 });
      assert.deepEqual(await store.audit.list({ offset: 1, limit: 2 }), { events: order.slice(1, 3), total: 4 });
      assert.deepEqual(await store.audit.list({ offset: 4, limit: 2 }), { events: [], total: 4 });
    });

    storeTest('audit: filters by actor (user or credential), action (exact or prefix), target and inclusive time bounds', async (store) => {
      const k1 = await store.audit.append(
        event(T1, 'api_key.created', { actor: { userId: 'usr_a', credentialKind: 'apiKey', credentialId: 'key_a' }, target: { type: 'api_key', id: 'key_b' } }),
      );
      const k2 = await store.audit.append(event(T2, 'api_key.revoked', { target: { type: 'api_key', id: 'key_b' } }));
      const s1 = await store.audit.append(
        event(T3, 'scoped_token.created', {
          actor: { userId: 'usr_b', credentialKind: 'apiKey', credentialId: 'key_b' },
          target: { type: 'scoped_token', id: 'sat_1' },
        }),
      );
      const odd = await store.audit.append(event(T3, 'apixkey.created'));
      const ids = async (q: Partial<Parameters<Store['audit']['list']>[0]>) =>
        (await store.audit.list({ offset: 0, limit: 100, ...q })).events.map((e) => e.id);
      assert.deepEqual(await ids({ actor: 'usr_a' }), [k1.id], 'by user id');
      assert.deepEqual(await ids({ actor: 'key_b' }), [s1.id], 'by credential id');
      assert.deepEqual(await ids({ actor: 'root' }), [odd.id, k2.id], 'the CLI account is a credential id');
      assert.deepEqual(await ids({ action: 'api_key.revoked' }), [k2.id]);
      assert.deepEqual(await ids({ action: 'api_key.' }), [k2.id, k1.id], 'a prefix; "_" is not a wildcard');
      assert.deepEqual(await ids({ action: 'api_key' }), [], 'without the dot: exact');
      assert.deepEqual(await ids({ target: 'key_b' }), [k2.id, k1.id]);
      assert.deepEqual(await ids({ since: T2 }), [odd.id, s1.id, k2.id], 'since is inclusive');
      assert.deepEqual(await ids({ until: T2 }), [k2.id, k1.id], 'until is inclusive');
      assert.deepEqual(await ids({ since: T2, until: T2, action: 'api_key.', target: 'key_b', actor: 'root' }), [k2.id], 'filters combine');
      assert.equal((await store.audit.list({ offset: 0, limit: 1, action: 'api_key.' })).total, 2, 'total counts the filtered events');
    });

    storeTest('audit: prune drops events before the cutoff; ids are not reused afterwards', async (store) => {
      const old = await store.audit.append(event(T1, 'user.added'));
      const edge = await store.audit.append(event(T2, 'user.added'));
      const newer = await store.audit.append(event(T3, 'user.added'));
      assert.equal(await store.audit.prune(T2), 1);
      assert.deepEqual((await store.audit.list({ offset: 0, limit: 10 })).events, [newer, edge], 'one at the cutoff stays');
      assert.equal(await store.audit.prune(T2), 0);
      assert.equal(await store.audit.prune(plus(T3, 1)), 2);
      const next = await store.audit.append(event(T1, 'user.added'));
      assert.ok(next.id > newer.id && next.id > old.id, `id ${next.id} after ${newer.id}`);
    });

    storeTest('atomically: the writes of fn are committed together, or none when it throws', async (store) => {
      const kept = await store.atomically(async () => {
        const u = await store.createUser({ email: 'both@example.com', name: 'b', role: 'member' }, T1);
        await store.audit.append(event(T1, 'user.added', { target: { type: 'user', id: u.id } }));
        return u;
      });
      assert.deepEqual(await store.getUser(kept.id), kept);
      assert.equal((await store.audit.list({ offset: 0, limit: 10 })).total, 1);
      await assert.rejects(
        () =>
          store.atomically(async () => {
            const u = await store.createUser({ email: 'neither@example.com', name: 'n', role: 'member' }, T1);
            await store.revokeApiKey((await store.createApiKey({ userId: u.id, name: 'k', hash: 'h-neither', hint: 'svk_0000' }, T1)).id, T2);
            await store.audit.append(event(T1, 'user.added', { target: { type: 'user', id: u.id } }));
            // A store operation that is a transaction of its own joins this one.
            await store.oauth.registerClient({ name: 'c', redirectUris: [REDIRECT], metadata: {} }, T1, { from: 'x', since: T1, perAddress: 5, maxUnused: 5 });
            throw new Error('the event could not be written');
          }),
        /the event could not be written/,
      );
      assert.equal(await store.getUserByEmail('neither@example.com'), undefined, 'no user');
      assert.equal(await store.findApiKey('h-neither'), undefined, 'no key');
      assert.equal(await store.oauth.countClients(), 0, 'no client');
      assert.equal((await store.audit.list({ offset: 0, limit: 10 })).total, 1, 'no event');
      // Nested: the inner call joins the outer transaction.
      await assert.rejects(
        () =>
          store.atomically(async () => {
            await store.atomically(() => store.audit.append(event(T2, 'user.added')));
            throw new Error('outer');
          }),
        /outer/,
      );
      assert.equal((await store.audit.list({ offset: 0, limit: 10 })).total, 1, 'the inner write went with the outer');
    });

    storeTest('atomically: a call from outside the open transaction neither sees its writes nor joins it', async (store) => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const tx = store.atomically(async () => {
        await store.createUser({ email: 'inside@example.com', name: 'i', role: 'member' }, T1);
        entered();
        await gate;
        throw new Error('rolled back');
      });
      await inside;
      // Begun while the transaction is open (a backend may make them wait for its end).
      const seen = store.getUserByEmail('inside@example.com');
      const written = store.createUser({ email: 'outside@example.com', name: 'o', role: 'member' }, T1);
      release();
      await assert.rejects(tx, /rolled back/);
      assert.equal(await seen, undefined, 'the uncommitted user is not seen');
      const outside = await written;
      assert.deepEqual(await store.getUserByEmail('outside@example.com'), outside, 'the write from outside is kept');
      assert.equal(await store.getUserByEmail('inside@example.com'), undefined);
    });

    storeTest('sharedSecret: the first candidate lands and stays; names are separate', async (store) => {
      assert.equal(await store.sharedSecret('server', 'aa11'), 'aa11');
      assert.equal(await store.sharedSecret('server', 'bb22'), 'aa11', 'a later candidate changes nothing');
      assert.equal(await store.sharedSecret('cluster', 'cc33'), 'cc33');
      assert.equal(await store.sharedSecret('server', 'dd44'), 'aa11');
    });

    storeTest(
      'sharedSecret through two handles at once: both get the one that landed',
      async (store, ctx) => {
        const other = await ctx.open();
        const [a, b] = await Promise.all([store.sharedSecret('server', 'from-a'), other.sharedSecret('server', 'from-b')]);
        assert.equal(a, b);
        assert.ok(a === 'from-a' || a === 'from-b', a);
        await ctx.close(store);
        assert.equal(await (await ctx.open()).sharedSecret('server', 'later'), a, 'kept across reopening');
      },
      { sharedStorage: true },
    );

    storeTest(
      'audit events survive reopening',
      async (store, ctx) => {
        const e = await store.audit.append(event(T1, 'license.installed', { target: { type: 'license', id: 'L-1' }, details: { entitlements: ['oauth'] } }));
        await ctx.close(store);
        const again = await ctx.open();
        assert.deepEqual((await again.audit.list({ offset: 0, limit: 10 })).events, [e]);
      },
      { sharedStorage: true },
    );

    storeTest(
      'OAuth state survives reopening',
      async (store, ctx) => {
        const ids = await oauthParties(store);
        const code = await newCode(store, 'code-open', ids, T1);
        const grant = await newGrant(store, ids, T1, [newToken('at-r', 'access', plus(T1, 60))]);
        const client = await store.oauth.getClient(ids.clientId);
        await ctx.close(store);
        const again = await ctx.open();
        assert.deepEqual(await again.oauth.getClient(ids.clientId), client);
        assert.deepEqual(await again.oauth.peekCode('code-open'), code);
        assert.deepEqual((await again.oauth.findToken('at-r'))?.grant, grant);
        assert.deepEqual(await again.oauth.redeemCode('code-at-r', [], T2), { reused: { ...(await again.oauth.peekCode('code-at-r'))! } });
      },
      { sharedStorage: true },
    );

    permissionConformance(storeTest);
    watchConformance(storeTest);
  });
}
