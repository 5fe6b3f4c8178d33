// The permission sync (daemon/permissions/permission-sync.ts) against the fake of every host
// type that has a permission API (test/hosts/fake-permissions/): the members end up with
// exactly the private repositories the host lets their accounts read, through whichever
// direction the host answers (its readers lists, or what an account can read: with the
// account's own token or an administrator acting for it). Then what changes on the host:
// a reader removed, a repository renamed, a host that fails or rate-limits in the middle
// of a pass, a member with no linked account.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { TokenSeal, tokenOwner } from '../../daemon/auth/sealed-token.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import type { Config } from '../../daemon/config/types.ts';
import { syncPermissions, type PermissionSyncOptions } from '../../daemon/permissions/permission-sync.ts';
import { createCodeHost, type CodeHostOptions } from '../../daemon/repos/hosts/index.ts';
import { silentLogger } from '../../daemon/runtime/logger.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store, UserRecord } from '../../daemon/store/store.ts';
import { tempDir } from '../helpers/corpus.ts';
import { ACCOUNTS, DATASET, NOW_MS, TOKEN, startFake } from '../hosts/fake-hosts.ts';
import type { FakeAccount, FakeHost, FakeRepo } from '../hosts/fake-hosts.ts';
import { PERMISSION_CASES, readsByDefault, TOKEN_ENV, type PermissionCase } from '../hosts/permission-cases.ts';

const T0 = new Date(NOW_MS);
/** The member without a linked account: the data set's last account. */
const UNLINKED = 'erin';

interface World {
  c: PermissionCase;
  fake: FakeHost;
  /** The fake's data set: changing a repository's readers changes the host's answers. */
  repos: FakeRepo[];
  store: Store;
  config: Config;
  seal: TokenSeal;
  members: Map<string, UserRecord>;
  sleeps: number[];
  clock: { now: Date };
  hostOptions: CodeHostOptions;
}

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const f of cleanups.reverse()) await f();
});

const loginOf = (c: PermissionCase, a: FakeAccount): string => c.login?.(a) ?? a.login;

/** A store with the connection's repositories as a repository sync records them, and a member per account (all linked but UNLINKED). */
async function world(c: PermissionCase): Promise<World> {
  const repos = [...DATASET, ...(c.extra ?? [])].map((r) => ({ ...r, ...(r.readers ? { readers: [...r.readers] } : {}) }));
  const fake = await startFake(c.kind, { repos });
  const dir = tempDir('permission-sync');
  const store = openStore(dir.path);
  cleanups.push(
    () => fake.close(),
    async () => {
      await store.close();
      dir.cleanup();
    },
  );
  // The connection as the suite of the hosts builds it (not every case's is one the
  // configuration file's schema would take: fields of other editions are left empty).
  const config = parseConfig(JSON.stringify({ settings: { permissions: 'code-host' } }), `${dir.path}/trawl.json`);
  config.connections = { conn: c.connection(fake.url) };
  const sleeps: number[] = [];
  const hostOptions: CodeHostOptions = {
    env: { [TOKEN_ENV]: TOKEN },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => NOW_MS,
    maxRateLimitWaitMs: 60_000,
  };
  await recordListing(store, config, hostOptions);
  const seal = new TokenSeal(randomBytes(32));
  const members = new Map<string, UserRecord>();
  for (const a of ACCOUNTS) {
    const user = await store.createUser({ email: a.email, name: a.login, role: 'member' }, T0.toISOString());
    members.set(a.login, user);
    if (a.login === UNLINKED) continue;
    await store.permissions.linkAccount(
      {
        userId: user.id,
        connection: 'conn',
        accountId: c.accountId(a),
        login: loginOf(c, a),
        ...(c.ownToken ? { sealedToken: seal.seal(a.token, tokenOwner(user.id, 'conn')) } : {}),
        linkedBy: c.ownToken ? 'sign-in' : 'owner',
      },
      T0.toISOString(),
    );
  }
  return { c, fake, repos, store, config, seal, members, sleeps, clock: { now: T0 }, hostOptions };
}

/** The connection's repositories in the store, as the repository sync leaves them (renamed ones: a new id, the old row deleted). */
async function recordListing(store: Store, config: Config, hostOptions: CodeHostOptions): Promise<void> {
  const connection = await store.upsertConnection('conn', config.connections.conn!.type);
  const listed = await createCodeHost('conn', config.connections.conn!, hostOptions).listRepos();
  const names = new Set(listed.map((r) => r.repoName));
  for (const r of listed) {
    await store.upsertRepo({
      repoName: r.repoName,
      displayName: r.displayName,
      codeHostType: r.codeHostType,
      connectionId: connection.id,
      cloneUrl: r.cloneUrl,
      isFork: r.isFork,
      isArchived: r.isArchived,
      visibility: r.visibility,
    });
  }
  for (const r of await store.listRepos({ connectionId: connection.id })) if (!names.has(r.repoName)) await store.updateRepo(r.repoId, { state: 'deleted' });
}

function options(w: World, extra: Partial<PermissionSyncOptions> = {}): PermissionSyncOptions {
  return { config: w.config, store: w.store, seal: w.seal, log: silentLogger, now: () => w.clock.now, hostOptions: w.hostOptions, ...extra };
}

/** Each member's private repositories of the connection, by name, as the store says they may read them. */
async function permitted(w: World): Promise<Record<string, string[]>> {
  const privateRepos = (await w.store.listRepos()).filter((r) => r.state !== 'deleted' && r.visibility === 'private');
  const out: Record<string, string[]> = {};
  for (const [login, user] of w.members) {
    const ids = new Set(await w.store.permissions.permittedRepos(user.id));
    out[login] = privateRepos
      .filter((r) => ids.has(r.repoId))
      .map((r) => r.repoName)
      .sort();
  }
  return out;
}

/**
 * What the host lets each member read among the connection's repositories the listing calls
 * private (the case's rule, readsByDefault unless the host has its own); UNLINKED only
 * when the host's readers lists carry verified emails, and then only what a list names.
 */
async function expected(w: World): Promise<Record<string, string[]>> {
  const listed = new Set((await w.store.listRepos()).filter((r) => r.state !== 'deleted' && r.visibility === 'private').map((r) => r.repoName));
  const reads = w.c.reads ?? readsByDefault;
  const out: Record<string, string[]> = {};
  for (const login of w.members.keys()) {
    const reachable = login !== UNLINKED || (w.c.readersOf && w.c.readerEmails);
    out[login] = reachable
      ? w.repos
          .filter((r) => !r.hidden && reads(r, login, w.repos))
          .map((r) => w.c.repoName(w.fake.url, r))
          .filter((n) => listed.has(n))
          .sort()
      : [];
  }
  return out;
}

for (const c of PERMISSION_CASES) {
  describe(`permission sync: ${c.kind}`, () => {
    test('every member gets exactly what the host lets their account read; the unlinked member only through a verified email', async () => {
      const w = await world(c);
      const report = await syncPermissions(options(w));
      const conn = report.connections[0]!;
      assert.equal(conn.error, undefined);
      assert.equal(conn.repositories.unsupported, !c.readersOf, 'repository-driven where the host lists readers');
      assert.equal(conn.repositories.failed + conn.accounts.failed, 0);
      assert.deepEqual(await permitted(w), await expected(w));
      const unlinkedReads = (await expected(w))[UNLINKED]!.length > 0;
      assert.equal(conn.linkedByEmail > 0, unlinkedReads, 'the unlinked member is linked by verified email exactly when a readers list names them');
      // Nothing is due again right away: the next pass asks nothing.
      const again = await syncPermissions(options(w));
      assert.equal(again.connections[0]!.repositories.synced + again.connections[0]!.accounts.synced, 0);
    });

    test('a reader removed on the host loses the repository at the next sync; one added gains it', async () => {
      const w = await world(c);
      await syncPermissions(options(w));
      const web = w.repos.find((r) => r.owner === 'acme' && r.name === 'web')!;
      web.readers = ['alice', 'carol', 'dave', 'jdoe'];
      // Not due yet: nothing changes until the interval has (nearly) passed.
      w.clock.now = new Date(NOW_MS + 60_000);
      await syncPermissions(options(w));
      const before = await permitted(w);
      assert.ok(before.bob!.includes(c.repoName(w.fake.url, web)), 'within the interval, the last answer stands');
      w.clock.now = new Date(NOW_MS + w.config.settings.permissionSyncIntervalMs);
      await syncPermissions(options(w));
      const now = await permitted(w);
      assert.deepEqual(now, await expected(w));
      assert.ok(!now.bob!.includes(c.repoName(w.fake.url, web)), 'bob removed');
      assert.ok(now.jdoe!.includes(c.repoName(w.fake.url, web)), 'jdoe added');
    });

    test('a repository renamed on the host: its readers follow it to its new name', async () => {
      const w = await world(c);
      await syncPermissions(options(w));
      const web = w.repos.find((r) => r.owner === 'acme' && r.name === 'web')!;
      web.name = 'webapp';
      await recordListing(w.store, w.config, w.hostOptions);
      await syncPermissions(options(w, { force: true }));
      const now = await permitted(w);
      assert.deepEqual(now, await expected(w));
      assert.ok(now.alice!.includes(c.repoName(w.fake.url, web)), 'alice reads it under its new name');
    });

    test('a host that fails in the middle of a pass: failures recorded, what was found before stays; the next pass completes', async () => {
      const w = await world(c);
      await syncPermissions(options(w));
      const good = await permitted(w);
      for (let i = 0; i < 200; i++) w.fake.faults.push({ kind: 'status', status: 500, after: i === 0 ? 1 : 0 });
      const failed = await syncPermissions(options(w, { force: true }));
      const conn = failed.connections[0]!;
      assert.ok(conn.repositories.failed + conn.accounts.failed > 0, 'failures counted');
      assert.deepEqual(await permitted(w), good, 'nothing dropped, nothing added');
      const states = [...(await w.store.permissions.repoSyncStates()), ...(await w.store.permissions.accountSyncStates())];
      assert.ok(
        states.some((s) => s.error !== undefined),
        'the failure is recorded on its subject',
      );
      w.fake.faults.length = 0;
      const recovered = await syncPermissions(options(w));
      assert.equal(recovered.connections[0]!.repositories.failed + recovered.connections[0]!.accounts.failed, 0);
      assert.ok(recovered.connections[0]!.repositories.synced + recovered.connections[0]!.accounts.synced > 0, 'the failed subjects are due at once');
      assert.deepEqual(await permitted(w), await expected(w));
    });

    test('a host that rate-limits in the middle of a pass is waited out and the pass completes', async () => {
      const w = await world(c);
      w.fake.faults.push({ kind: 'rate-limit', seconds: 5, after: 2 });
      const report = await syncPermissions(options(w));
      assert.equal(report.connections[0]!.repositories.failed + report.connections[0]!.accounts.failed, 0);
      assert.ok(w.sleeps.length > 0, 'it waited');
      assert.deepEqual(await permitted(w), await expected(w));
    });
  });
}
