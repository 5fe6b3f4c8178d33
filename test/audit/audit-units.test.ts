// The audit log's parts on their own, on an injected clock: the counting of failed
// authentications (one event per address and kind per window, bounded memory, nothing
// lost), the authenticator wrapper that feeds it, and the recorder's rules (a change and
// its event both or neither; a note that cannot be written reported once a minute); and
// the docs naming every action.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { AuthFailures, countingFailures } from '../../daemon/audit/auth-failures.ts';
import { ACTION_NAMES, CREDENTIAL_KINDS, TARGET_TYPES } from '../../daemon/audit/events.ts';
import { AuditLog } from '../../daemon/audit/log.ts';
import { ServiceError } from '../../daemon/errors.ts';
import type { Authenticator, Credentials } from '../../daemon/auth/identity.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { AuditEventRecord, Store } from '../../daemon/store/store.ts';

const T0 = Date.parse('2026-06-01T10:00:00Z');

function setup(options: { windowMs?: number; maxTracked?: number } = {}) {
  let now = T0;
  const store = openSqliteStore(':memory:');
  const log = new AuditLog(store, () => new Date(now));
  const failures = new AuthFailures({ log, now: () => new Date(now), ...options });
  const events = async (): Promise<AuditEventRecord[]> => (await store.audit.list({ offset: 0, limit: 10_000, action: 'auth.failed' })).events.reverse();
  return { store, failures, events, at: (ms: number) => void (now = T0 + ms) };
}

test('failed authentications: one event per address and kind when the window has passed, with the count and times', async () => {
  const { store, failures, events, at } = setup();
  try {
    for (let i = 0; i < 5; i++) {
      at(i * 1000);
      failures.add('198.51.100.7', 'apiKey');
    }
    at(2000);
    failures.add('198.51.100.7', 'scopedToken');
    failures.add('198.51.100.8', 'apiKey');
    at(59_999);
    failures.flush();
    assert.deepEqual(await events(), [], 'no window has passed yet');
    at(60_000);
    failures.flush();
    assert.deepEqual(
      (await events()).map((e) => ({ ...e, id: 0 })),
      [
        {
          id: 0,
          at: new Date(T0).toISOString(),
          action: 'auth.failed',
          outcome: 'failure',
          actor: { credentialKind: 'apiKey' },
          sourceAddress: '198.51.100.7',
          details: { count: 5, lastAt: new Date(T0 + 4000).toISOString(), windowSeconds: 60 },
        },
      ],
      'the first window: five failures in one event, at the first one',
    );
    at(62_000);
    failures.flush();
    assert.deepEqual(
      (await events()).slice(1).map((e) => [e.sourceAddress, e.actor.credentialKind, e.details!.count]),
      [
        ['198.51.100.7', 'scopedToken', 1],
        ['198.51.100.8', 'apiKey', 1],
      ],
    );
    assert.equal(failures.openWindows, 0);
  } finally {
    await store.close();
  }
});

test('a failure after the window closes the old window and opens a new one; flush(true) closes every window', async () => {
  const { store, failures, events, at } = setup();
  try {
    failures.add('2001:db8::1', 'oauth');
    failures.add('2001:db8::1', 'oauth');
    at(61_000);
    failures.add('2001:db8::1', 'oauth');
    assert.deepEqual(
      (await events()).map((e) => e.details!.count),
      [2],
      'the old window, recorded when the next failure came',
    );
    at(62_000);
    failures.add('', 'browserSession');
    failures.flush(true);
    assert.deepEqual(
      (await events()).map((e) => [e.sourceAddress, e.actor.credentialKind, e.details!.count]),
      [
        ['2001:db8::1', 'oauth', 2],
        ['2001:db8::1', 'oauth', 1],
        [undefined, 'browserSession', 1],
      ],
      'an unknown address: no sourceAddress',
    );
    assert.equal(failures.openWindows, 0);
  } finally {
    await store.close();
  }
});

test('memory is bounded: past maxTracked addresses, failures are counted together per kind; no count is lost', async () => {
  const { store, failures, events, at } = setup({ maxTracked: 3 });
  try {
    let sent = 0;
    for (let round = 0; round < 3; round++) {
      for (let a = 0; a < 50; a++) {
        failures.add(`10.0.0.${a}`, a % 2 === 0 ? 'apiKey' : 'scopedToken');
        sent++;
        assert.ok(failures.openWindows <= 3 + 2, `${failures.openWindows} windows open`);
      }
    }
    at(60_000);
    failures.flush();
    const all = await events();
    assert.equal(
      all.reduce((n, e) => n + (e.details!.count as number), 0),
      sent,
      'every failure is counted',
    );
    const apart = all.filter((e) => e.sourceAddress !== undefined);
    assert.deepEqual(
      apart.map((e) => [e.sourceAddress, e.details!.count]),
      [
        ['10.0.0.0', 3],
        ['10.0.0.1', 3],
        ['10.0.0.2', 3],
      ],
      'the first three addresses, counted apart',
    );
    const overflow = all.filter((e) => e.sourceAddress === undefined);
    // Addresses 3..49 per round: 24 odd ones (scoped tokens, whose window opened first), 23 even ones.
    assert.deepEqual(
      overflow.map((e) => [e.actor.credentialKind, e.details!.count, e.details!.overflow]),
      [
        ['scopedToken', 72, true],
        ['apiKey', 69, true],
      ],
    );
    // Closed windows make room: new addresses are counted apart again.
    at(61_000);
    failures.add('10.9.9.9', 'apiKey');
    at(121_000);
    failures.flush();
    assert.equal((await events()).at(-1)!.sourceAddress, '10.9.9.9');
  } finally {
    await store.close();
  }
});

test('a flush costs what it closes: windows still open after the first open one are left', async () => {
  const { store, failures, events, at } = setup();
  try {
    failures.add('a', 'apiKey');
    at(30_000);
    failures.add('b', 'apiKey');
    at(60_000);
    failures.flush();
    assert.deepEqual(
      (await events()).map((e) => e.sourceAddress),
      ['a'],
    );
    assert.equal(failures.openWindows, 1);
  } finally {
    await store.close();
  }
});

test('countingFailures: a 401 for a credential sent from an address is counted, by the kind of credential; nothing else is', async () => {
  const counted: Array<[string, string]> = [];
  const fake = { add: (address: string, kind: string) => void counted.push([address, kind]) } as unknown as AuthFailures;
  let refusal: Error = new ServiceError('NOT_AUTHENTICATED', 'no');
  const inner: Authenticator = {
    async authenticate(c: Credentials) {
      if (c.token === 'good') return { kind: 'apiKey', userId: 'usr_1', canSee: () => true };
      throw refusal;
    },
  };
  const a = countingFailures(inner, fake);
  assert.equal((await a.authenticate({ token: 'good', via: 'bearer', from: '1.2.3.4' })).userId, 'usr_1');
  const cases: Array<[Credentials, string]> = [
    [{ token: 'svk_x', via: 'bearer', from: '1.2.3.4' }, 'apiKey'],
    [{ token: 'anything', via: 'apiKeyHeader', from: '1.2.3.4' }, 'apiKey'],
    [{ token: 'svst_x', via: 'bearer', from: '1.2.3.5' }, 'scopedToken'],
    [{ token: 'svoa_x', via: 'bearer', from: '1.2.3.5' }, 'oauth'],
    [{ session: 'v1.x.y', via: 'session', from: '1.2.3.6' }, 'browserSession'],
  ];
  for (const [c] of cases) await assert.rejects(a.authenticate(c), /no/);
  assert.deepEqual(
    counted,
    cases.map(([c, kind]) => [c.from, kind]),
  );
  counted.length = 0;
  await assert.rejects(a.authenticate({ token: 'svk_x', via: 'bearer' }), /no/, 'no address given: not counted');
  await assert.rejects(a.authenticate({ from: '1.2.3.4' }), /no/, 'nothing sent (anonymous): not counted');
  refusal = new ServiceError('INVALID_CSRF_TOKEN', 'csrf');
  await assert.rejects(a.authenticate({ session: 'v1.x.y', via: 'session', from: '1.2.3.6' }), /csrf/, 'a 403: not counted');
  refusal = new Error('database is locked');
  await assert.rejects(a.authenticate({ token: 'svk_x', via: 'bearer', from: '1.2.3.4' }), /locked/, 'not a refusal: not counted');
  assert.deepEqual(counted, []);
});

test('AuditLog.change: the change and its events are stored together, or neither', async () => {
  const store = openSqliteStore(':memory:');
  try {
    const log = new AuditLog(store, () => new Date(T0));
    const u = await log.change(
      () => store.createUser({ email: 'a@example.com', name: 'a', role: 'member' }, new Date(T0).toISOString()),
      (u) => [
        { action: 'user.added', actor: { credentialKind: 'cli', credentialId: 'root' }, target: { type: 'user', id: u.id } },
        { action: 'user.limit_changed', actor: { credentialKind: 'cli', credentialId: 'root' }, target: { type: 'user', id: u.id }, details: { to: 5 } },
      ],
    );
    assert.deepEqual((await store.audit.list({ offset: 0, limit: 10 })).events.map((e) => [e.action, e.target?.id, e.at, e.outcome]).reverse(), [
      ['user.added', u.id, new Date(T0).toISOString(), 'success'],
      ['user.limit_changed', u.id, new Date(T0).toISOString(), 'success'],
    ]);
    await assert.rejects(() =>
      log.change(
        () => store.createUser({ email: 'b@example.com', name: 'b', role: 'member' }, new Date(T0).toISOString()),
        () => {
          throw new Error('describing failed');
        },
      ),
    );
    assert.equal(await store.getUserByEmail('b@example.com'), undefined, 'the change went with its event');
    const none = await log.change(
      () => store.revokeApiKey('key_unknown', new Date(T0).toISOString()),
      (r) => (r ? { action: 'api_key.revoked', actor: { credentialKind: 'cli' }, target: { type: 'api_key', id: r.key.id } } : undefined),
    );
    assert.equal(none, undefined);
    assert.equal((await store.audit.list({ offset: 0, limit: 10 })).total, 2, 'nothing happened: nothing recorded');
  } finally {
    await store.close();
  }
});

test('AuditLog.note: a write that fails is dropped and reported, at most once a minute; record() throws', async () => {
  let now = T0;
  const reports: string[] = [];
  const broken = {
    audit: {
      append: async () => {
        throw new Error('SQLITE_FULL: database or disk is full');
      },
      list: async () => ({ events: [], total: 0 }),
      prune: async () => 0,
    },
    atomically: <T>(fn: () => Promise<T>) => fn(),
  } as unknown as Pick<Store, 'audit' | 'atomically'>;
  const log = new AuditLog(
    broken,
    () => new Date(now),
    (err, action) => reports.push(`${action}: ${err.message}`),
  );
  const entry = { action: 'session.ended', actor: { credentialKind: 'browserSession' } } as const;
  await log.note(entry);
  await log.note(entry);
  now += 59_999;
  await log.note(entry);
  assert.deepEqual(reports, ['session.ended: SQLITE_FULL: database or disk is full']);
  now += 1;
  await log.note({ ...entry, action: 'auth.failed' });
  assert.equal(reports.length, 2);
  await assert.rejects(() => log.record(entry), /SQLITE_FULL/, 'strict: the caller fails');
});

test('docs/audit-log.md describes every action, credential kind and target type; the README and docs/configuration.md point to it', () => {
  const docs = readFileSync(new URL('../../docs/audit-log.md', import.meta.url), 'utf8');
  const rows = docs.split('\n').filter((l) => l.startsWith('| `'));
  for (const action of ACTION_NAMES)
    assert.ok(
      rows.some((r) => r.split('|')[1]!.includes(`\`${action}\``)),
      `${action} has a row in the table of actions`,
    );
  for (const kind of CREDENTIAL_KINDS) assert.ok(docs.includes(`\`${kind}\``), `credential kind ${kind} is described`);
  for (const type of TARGET_TYPES) assert.ok(docs.includes(`\`${type}\``), `target type ${type} is described`);
  assert.match(docs, /`settings\.audit\.retentionDays` \| `180`/);
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.match(readme, /\]\(docs\/audit-log\.md\)/);
  const configuration = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  assert.match(configuration, /`settings\.audit\.retentionDays` \| `180` \|.*\]\(audit-log\.md\)/);
});
