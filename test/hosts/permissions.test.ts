// The shared suite of the code hosts' permission APIs (HostPermissions): the same cases
// against the permission fake of every host type (fake-permissions/), from one data set:
// DATASET's private repositories name their readers, ACCOUNTS are the people. Each host
// type's case (permission-cases.ts) says what its host can answer at all.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { CodeHostOptions, HostAccount, HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { ACCOUNTS, DATASET, NOW_MS, TOKEN, startFake } from './fake-hosts.ts';
import type { FakeAccount, FakeHost, FakeRepo } from './fake-hosts.ts';
import { PERMISSION_CASES, TOKEN_ENV, type PermissionCase } from './permission-cases.ts';

const fakes: FakeHost[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

interface Harness {
  fake: FakeHost;
  sleeps: number[];
  permissions: HostPermissions;
}

async function harness(c: PermissionCase, connection?: (url: string) => Connection): Promise<Harness> {
  const fake = await startFake(c.kind, { repos: [...DATASET, ...(c.extra ?? [])] });
  fakes.push(fake);
  const sleeps: number[] = [];
  const options: CodeHostOptions = {
    env: { [TOKEN_ENV]: TOKEN },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    now: () => NOW_MS,
    maxRateLimitWaitMs: 60_000,
  };
  const host = createCodeHost('conn', (connection ?? c.connection)(fake.url), options);
  assert.ok(host.permissions, `${c.kind} has a permission API`);
  return { fake, sleeps, permissions: host.permissions };
}

async function rejection(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HostError, `expected a HostError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

const privates = (c: PermissionCase): FakeRepo[] => [...DATASET, ...(c.extra ?? [])].filter((r) => r.private === true && !r.hidden);
const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const loginsOf = (accounts: HostAccount[]): string[] => sorted(accounts.map((a) => a.login));
/** The host's login of an account of the data set. */
const loginOf = (c: PermissionCase, a: FakeAccount): string => c.login?.(a) ?? a.login;
const byLogin = (c: PermissionCase, login: string): FakeAccount | undefined => ACCOUNTS.find((x) => loginOf(c, x) === login);
/** The host's logins of the data set's readers (FakeAccount.login). */
const hostLogins = (c: PermissionCase, readers: readonly string[]): string[] => sorted(readers.map((l) => loginOf(c, ACCOUNTS.find((x) => x.login === l)!)));

/** The private repositories `who` may read, as the host's repoNames. */
function readableByExpected(c: PermissionCase, url: string, who: FakeAccount): string[] {
  return sorted(
    privates(c)
      .filter((r) => r.readers?.includes(who.login))
      .map((r) => c.repoName(url, r)),
  );
}

/** The private repositories among an account-driven answer (the answer may hold public ones too). */
function privatePart(c: PermissionCase, url: string, names: string[]): string[] {
  const all = new Set(privates(c).map((r) => c.repoName(url, r)));
  return sorted(names.filter((n) => all.has(n)));
}

for (const c of PERMISSION_CASES) {
  describe(`permissions: ${c.kind}`, () => {
    const alice = ACCOUNTS[0]!;
    const bob = ACCOUNTS[1]!;

    test('readers of each private repository: the accounts that may read it, across pages', { skip: !c.readersOf && 'no readers list' }, async () => {
      const h = await harness(c);
      for (const r of privates(c)) {
        const readers = await h.permissions.readersOf(c.display(r));
        assert.ok(readers, `${c.display(r)}: a list`);
        assert.deepEqual(loginsOf(readers), hostLogins(c, r.readers ?? []), c.display(r));
        for (const a of readers) {
          const account = byLogin(c, a.login)!;
          assert.equal(a.id, c.accountId(account), `${a.login}: the host's id`);
          if (c.readerEmails) assert.equal(a.email, account.email);
        }
      }
    });

    test('a host without a readers list says so', { skip: c.readersOf && 'has a readers list' }, async () => {
      const h = await harness(c);
      assert.equal(await h.permissions.readersOf(c.display(privates(c)[0]!)), undefined);
    });

    test("account-driven with the account's own token: its private repositories", { skip: !c.ownToken && 'no own tokens' }, async () => {
      const h = await harness(c);
      for (const who of ACCOUNTS) {
        const names = await h.permissions.readableBy({ account: { id: c.accountId(who), login: loginOf(c, who) }, token: who.token });
        assert.ok(names, who.login);
        assert.equal(new Set(names).size, names.length, 'no duplicates');
        assert.deepEqual(privatePart(c, h.fake.url, names), readableByExpected(c, h.fake.url, who), who.login);
      }
    });

    test("account-driven by the connection's token acting as the account", async () => {
      const h = await harness(c);
      const names = await h.permissions.readableBy({ account: { id: c.accountId(bob), login: loginOf(c, bob) } });
      if (!c.actAs) {
        assert.equal(names, undefined, 'the host cannot act as an account: undefined, never a guess');
        return;
      }
      assert.ok(names);
      assert.deepEqual(privatePart(c, h.fake.url, names), readableByExpected(c, h.fake.url, bob));
    });

    test('an account by login; an unknown login is undefined', async () => {
      const h = await harness(c);
      const a = await h.permissions.accountByLogin(loginOf(c, alice));
      assert.equal(a?.login, loginOf(c, alice));
      assert.equal(a?.id, c.accountId(alice));
      assert.equal(await h.permissions.accountByLogin('nobody-here'), undefined);
    });

    test("a token's account; a token the host refuses is 'unauthorized'", { skip: !c.ownToken && 'no own tokens' }, async () => {
      const h = await harness(c);
      const a = await h.permissions.accountOfToken(alice.token);
      assert.equal(a.login, loginOf(c, alice));
      assert.equal(a.id, c.accountId(alice));
      const err = await rejection(h.permissions.accountOfToken('not-a-token'));
      assert.equal(err.kind, 'unauthorized');
      assert.ok(err.message.includes('rejected the token being linked'), err.message);
      assert.ok(!err.message.includes('not-a-token'), 'the message never holds the token');
      assert.ok(!err.message.includes(TOKEN_ENV), "nor the connection's variable, which is not at fault");
    });

    test("a refused own token is 'unauthorized' and names the account, never the token or the connection's variable", async () => {
      const h = await harness(c);
      const login = loginOf(c, bob);
      const err = await rejection(h.permissions.readableBy({ account: { id: c.accountId(bob), login }, token: 'revoked-token' }));
      assert.equal(err.kind, 'unauthorized');
      assert.ok(err.message.includes(`rejected the own token of account "${login}"`), err.message);
      assert.ok(!err.message.includes('revoked-token'), 'the message never holds the token');
      assert.ok(!err.message.includes(TOKEN_ENV), "nor the connection's variable, which is not at fault");
    });

    test('a rate limit in the middle of a list is waited out and the list completes', async () => {
      const h = await harness(c);
      const ask = () =>
        c.readersOf
          ? h.permissions.readersOf(c.display(privates(c)[0]!)).then((x) => loginsOf(x ?? []))
          : h.permissions.readableBy({ account: { id: c.accountId(bob), login: loginOf(c, bob) }, token: bob.token }).then((x) => sorted(x ?? []));
      const before = h.fake.requests.length;
      const quiet = await ask();
      const perList = h.fake.requests.length - before;
      assert.ok(perList >= 2, `the list takes several pages (${perList} requests)`);
      // The first request of the list is answered, the second refused for 7 seconds.
      h.fake.faults.push({ kind: 'rate-limit', seconds: 7, after: 1 });
      const requests = h.fake.requests.length;
      assert.deepEqual(await ask(), quiet);
      assert.equal(h.fake.requests.length - requests, perList + 1, 'one request more: the refused one, asked again');
      assert.ok(h.sleeps.length > 0, 'it waited');
    });

    test('a host that keeps failing: HostError, no partial answer', async () => {
      const h = await harness(c);
      for (let i = 0; i < 10; i++) h.fake.faults.push({ kind: 'status', status: 500 });
      const err = await rejection(
        c.readersOf
          ? h.permissions.readersOf(c.display(privates(c)[0]!))
          : h.permissions.readableBy({ account: { id: c.accountId(bob), login: loginOf(c, bob) }, token: bob.token }),
      );
      assert.notEqual(err.kind, 'rate-limited');
    });
  });
}
