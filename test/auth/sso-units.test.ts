// The parts of single sign-on that need no server (daemon/auth/sso/): which member a
// sign-in is (member.ts), the flow's signed cookie and the paths it may return to
// (flow-cookie.ts), the session token of a session of single sign-on (browser-session.ts),
// and the refusals' sentences (refusals.ts). Table tests.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { StoreAuthenticator } from '../../daemon/auth/authenticator.ts';
import { BrowserSessions } from '../../daemon/auth/browser-session.ts';
import { identityRef } from '../../daemon/auth/identity.ts';
import { clearFlowCookie, flowCookie, safeReturnPath, SignInFlows, type SignInFlow } from '../../daemon/auth/sso/flow-cookie.ts';
import { decideMember, memberName, usableEmail, type KnownParties, type MemberDecision } from '../../daemon/auth/sso/member.ts';
import type { SignedInAccount } from '../../daemon/auth/sso/providers.ts';
import { isSignInRefusal, refusalText, SIGN_IN_REFUSALS } from '../../daemon/auth/sso/refusals.ts';
import { ServiceError } from '../../daemon/errors.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { SignInIdentityRecord, UserRecord } from '../../daemon/store/store.ts';
import { tempDir } from '../helpers/corpus.ts';

const T = '2026-11-22T10:00:00.000Z';
const user = (email: string, extra: Partial<UserRecord> = {}): UserRecord => ({
  id: `usr_${email.length.toString(16).padStart(24, '0')}`,
  email,
  name: email,
  role: 'member',
  createdAt: T,
  updatedAt: T,
  ...extra,
});
const identity = (u: UserRecord): SignInIdentityRecord => ({
  id: 'sso_000000000000000000000001',
  userId: u.id,
  issuer: 'https://idp.example.com/',
  subject: 's',
  provider: 'corp',
  createdAt: T,
  lastSignedInAt: T,
});
const account = (extra: Partial<SignedInAccount> = {}): SignedInAccount => ({
  issuer: 'https://idp.example.com/',
  subject: 's',
  email: 'ann@example.com',
  emailVerified: true,
  name: 'Ann',
  ...extra,
});
const rules: { provision: boolean; defaultRole: 'member' | 'owner'; allowedDomains?: string[] } = {
  provision: true,
  defaultRole: 'member',
  allowedDomains: ['example.com'],
};

test('decideMember: by account first, then by verified email, then provisioning within the rules', () => {
  const ann = user('ann@example.com');
  const owner = user('boss@example.com', { role: 'owner' });
  const suspended = user('ann@example.com', { suspendedAt: T });
  const cases: Array<[string, SignedInAccount, KnownParties, Partial<typeof rules>, MemberDecision]> = [
    ['linked: its member', account(), { linked: { identity: identity(ann), user: ann } }, {}, { kind: 'known', user: ann, identity: identity(ann) }],
    [
      'linked: its member, whatever the email now (changed, unverified, absent)',
      account({ email: 'new@else.org', emailVerified: false }),
      { linked: { identity: identity(ann), user: ann } },
      {},
      { kind: 'known', user: ann, identity: identity(ann) },
    ],
    [
      'linked to a suspended member: refused',
      account(),
      { linked: { identity: identity(suspended), user: suspended } },
      {},
      { kind: 'refused', reason: 'suspended', user: suspended },
    ],
    [
      'a verified email of a member: linked to them',
      account({ email: 'boss@example.com' }),
      { byEmail: owner },
      {},
      { kind: 'link', user: owner, email: 'boss@example.com' },
    ],
    [
      "a member's email in other case: the email as a member's",
      account({ email: 'Boss@Example.COM' }),
      { byEmail: owner },
      {},
      { kind: 'link', user: owner, email: 'boss@example.com' },
    ],
    ['a verified email of a suspended member: refused', account(), { byEmail: suspended }, {}, { kind: 'refused', reason: 'suspended', user: suspended }],
    [
      'an unverified email of a member: refused, never linked',
      account({ emailVerified: false }),
      { byEmail: ann },
      {},
      { kind: 'refused', reason: 'unverified_email' },
    ],
    ['no email', account({ email: undefined }) as SignedInAccount, {}, {}, { kind: 'refused', reason: 'no_email' }],
    ['an email that is not one', account({ email: 'not an email' }), {}, {}, { kind: 'refused', reason: 'no_email' }],
    ['an email with a control character', account({ email: 'ann\u202e@example.com' }), {}, {}, { kind: 'refused', reason: 'no_email' }],
    ['unknown, domain allowed: provisioned with the role', account(), {}, {}, { kind: 'provision', email: 'ann@example.com', name: 'Ann', role: 'member' }],
    ['owners by default', account(), {}, { defaultRole: 'owner' }, { kind: 'provision', email: 'ann@example.com', name: 'Ann', role: 'owner' }],
    ['unknown, domain not allowed', account({ email: 'ann@example.org' }), {}, {}, { kind: 'refused', reason: 'domain_not_allowed' }],
    ['a subdomain is another domain', account({ email: 'ann@eu.example.com' }), {}, {}, { kind: 'refused', reason: 'domain_not_allowed' }],
    [
      'any domain without a list',
      account({ email: 'ann@example.org' }),
      {},
      { allowedDomains: undefined },
      { kind: 'provision', email: 'ann@example.org', name: 'Ann', role: 'member' },
    ],
    ['provisioning off', account(), {}, { provision: false }, { kind: 'refused', reason: 'not_a_member' }],
    ['unknown and unverified: refused before provisioning', account({ emailVerified: false }), {}, {}, { kind: 'refused', reason: 'unverified_email' }],
  ];
  for (const [what, a, known, r, expected] of cases) {
    const merged = { ...rules, ...r };
    if (r.allowedDomains === undefined && 'allowedDomains' in r) delete merged.allowedDomains;
    assert.deepEqual(decideMember(a, known, merged), expected, what);
  }
});

test("memberName and usableEmail: a provider's words as a member's", () => {
  const names: Array<[string, string, string]> = [
    ['Ann Example', 'a@x.org', 'Ann Example'],
    ['  Ann \n  Example ', 'a@x.org', 'Ann Example'],
    ['Ann\u202eelpmaxE', 'a@x.org', 'AnnelpmaxE'],
    ['\u0007\u001b', 'ann.e@x.org', 'ann.e'],
    ['', 'ann@x.org', 'ann'],
    ['x'.repeat(150), 'a@x.org', 'x'.repeat(100)],
  ];
  for (const [name, email, expected] of names) assert.equal(memberName(name, email), expected, JSON.stringify(name));
  const emails: Array<[string | undefined, string | undefined]> = [
    ['Ann@Example.COM', 'ann@example.com'],
    [' ann@example.com ', 'ann@example.com'],
    ['ann', undefined],
    ['ann@', undefined],
    ['a b@example.com', undefined],
    ['ann@exa\u0000mple.com', undefined],
    [undefined, undefined],
  ];
  for (const [email, expected] of emails) assert.equal(usableEmail(email), expected, JSON.stringify(email));
});

const SECRET = Buffer.alloc(32, 9);
const STATE = 'S'.repeat(43);
const flow = (extra: Partial<SignInFlow> = {}): SignInFlow => ({
  provider: 'corp',
  state: STATE,
  nonce: 'N'.repeat(43),
  verifier: 'V'.repeat(43),
  returnTo: '/search?q=x',
  expires: Date.parse(T) / 1000 + 600,
  ...extra,
});

test('the flow cookie: sealed and opened, refused when forged, tampered with, of another secret or expired', () => {
  let clock = new Date(T);
  const flows = new SignInFlows(SECRET, () => clock);
  assert.equal(flows.expiry(), Date.parse(T) / 1000 + 600, '10 minutes');
  const sealed = flows.seal(flow());
  assert.deepEqual(flows.open(sealed), flow());
  const { nonce: _n, ...noNonce } = flow();
  assert.deepEqual(flows.open(flows.seal(noNonce)), noNonce, 'a host provider has no nonce');
  const [payload, sig] = sealed.split('.') as [string, string];
  const mac = (p: string) => createHmac('sha256', SECRET).update(`trawl-sign-in\0${p}`, 'utf8').digest('base64url');
  assert.equal(sig, mac(payload), 'the documented HMAC');
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signed = (o: unknown) => `${enc(o)}.${mac(enc(o))}`;
  const claims = { p: 'corp', s: STATE, n: 'N'.repeat(43), v: 'V'.repeat(43), r: '/', e: Date.parse(T) / 1000 + 600 };
  assert.ok(flows.open(signed(claims)), 'the table is built right');
  const refused: Array<[string, string | undefined]> = [
    ['absent', undefined],
    ['empty', ''],
    ['no signature', payload],
    ['signature of another payload', `${enc({ ...claims, p: 'other' })}.${sig}`],
    ['another secret', new SignInFlows(Buffer.alloc(32, 1), () => clock).seal(flow())],
    ['signed, a state too short', signed({ ...claims, s: 'short' })],
    ['signed, no verifier', signed({ ...claims, v: undefined })],
    ['signed, a provider name with a slash', signed({ ...claims, p: 'a/b' })],
    ['signed, a return to another site', signed({ ...claims, r: '//evil.example/' })],
    ['signed, an expiry that is not a number', signed({ ...claims, e: String(claims.e) })],
    ['signed, not an object', signed([1])],
  ];
  for (const [what, value] of refused) assert.equal(flows.open(value), undefined, what);
  clock = new Date(Date.parse(T) + 600_000 - 1);
  assert.ok(flows.open(sealed), 'good until its last millisecond');
  clock = new Date(Date.parse(T) + 600_000);
  assert.equal(flows.open(sealed), undefined, 'expired');
  assert.notEqual(flows.stateHash(STATE), STATE);
  assert.equal(flows.stateHash(STATE), flows.stateHash(STATE));
  assert.match(flowCookie('v', true), /^trawl_sign_in=v; Path=\/auth\/; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/);
  assert.equal(clearFlowCookie(false), 'trawl_sign_in=; Path=/auth/; HttpOnly; SameSite=Lax; Max-Age=0');
});

test('safeReturnPath: only paths of this site', () => {
  const table: Array<[string | undefined, string]> = [
    [undefined, '/'],
    ['', '/'],
    ['/', '/'],
    ['/search?q=a%20b#x', '/search?q=a%20b#x'],
    ['/settings', '/settings'],
    ['//evil.example', '/'],
    ['/\\evil.example', '/'],
    ['https://evil.example/', '/'],
    ['javascript:alert(1)', '/'],
    ['search', '/'],
    ['/a\\b', '/'],
    ['/a\nb', '/'],
    [`/${'x'.repeat(2000)}`, '/'],
  ];
  for (const [input, expected] of table) assert.equal(safeReturnPath(input), expected, JSON.stringify(input));
});

test('a session of single sign-on: its token names the sign-in identity ("i") instead of a key, exactly one of the two', () => {
  const s = new BrowserSessions(SECRET, () => new Date(T));
  const expiresAt = s.expiry();
  const issued = s.sign({ id: 'ses_1', userId: 'usr_1', identityId: 'sso_1', expiresAt });
  const payload = JSON.parse(Buffer.from(issued.token.split('.')[1]!, 'base64url').toString());
  assert.deepEqual(Object.keys(payload).sort(), ['e', 'i', 's', 'u']);
  assert.deepEqual(s.verify(issued.token), { sessionId: 'ses_1', userId: 'usr_1', identityId: 'sso_1', expires: Date.parse(expiresAt) / 1000 });
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const mac = (p: string) => createHmac('sha256', SECRET).update(`trawl-session\0${p}`, 'utf8').digest('base64url');
  const signed = (o: unknown) => `v2.${enc(o)}.${mac(enc(o))}`;
  const e = Date.parse(expiresAt) / 1000;
  assert.ok(s.verify(signed({ u: 'usr_1', i: 'sso_1', s: 'ses_1', e })), 'the table is built right');
  assert.equal(s.verify(signed({ u: 'usr_1', k: 'key_1', i: 'sso_1', s: 'ses_1', e })), undefined, 'both');
  assert.equal(s.verify(signed({ u: 'usr_1', s: 'ses_1', e })), undefined, 'neither');
  assert.equal(s.verify(signed({ u: 'usr_1', i: 'a b', s: 'ses_1', e })), undefined, 'an identity that is not an id');
});

test('every refusal has a sentence, naming the provider where it says one', () => {
  for (const reason of Object.keys(SIGN_IN_REFUSALS)) {
    assert.ok(isSignInRefusal(reason));
    const text = refusalText(reason as keyof typeof SIGN_IN_REFUSALS, 'Corp SSO');
    assert.ok(!text.includes('{provider}'), text);
    assert.match(text, /\.$/);
  }
  assert.match(refusalText('unverified_email', 'Corp SSO'), /^Your email address at Corp SSO is not verified/);
  assert.equal(isSignInRefusal('toString'), false);
  assert.equal(isSignInRefusal('<script>'), false);
});

test('the authenticator: a session of single sign-on acts as its member while its identity is theirs and its issuer configured, on every node', async () => {
  const dir = tempDir('sso-auth');
  const store = openSqliteStore(join(dir.path, 'trawl.db'));
  const clock = new Date(T);
  const sessions = new BrowserSessions(SECRET, () => clock);
  const issuer = 'https://idp.example.com/';
  const authenticator = (issuers: string[]) =>
    new StoreAuthenticator({ store, secret: SECRET, anonymousAccess: false, now: () => clock, sessions, signInIssuers: new Set(issuers) });
  const refused = async (p: Promise<unknown>, what: string) => assert.rejects(p, (err: unknown) => err instanceof ServiceError && err.statusCode === 401, what);
  try {
    const ann = await store.createUser({ email: 'ann@example.com', name: 'Ann', role: 'member' }, T);
    const bob = await store.createUser({ email: 'bob@example.com', name: 'Bob', role: 'member' }, T);
    const identity = await store.createSignInIdentity({ userId: ann.id, issuer, subject: 's', provider: 'corp' }, T);
    const record = await store.createSession({ userId: ann.id, identityId: identity.id, expiresAt: sessions.expiry() }, T);
    const { token, csrfToken } = sessions.sign(record);
    const credentials = { session: token, csrf: csrfToken, via: 'session' as const };

    const who = await authenticator([issuer]).authenticate(credentials);
    assert.equal(who.kind, 'browserSession');
    assert.equal(who.userId, ann.id);
    assert.equal(who.tokenId, identity.id, 'the identity stands where a key would');
    // Another node resumes it from the identity, as it does a key's session from the key.
    assert.equal((await authenticator([issuer]).resume(identityRef(who))).userId, ann.id);

    await refused(authenticator([]).authenticate(credentials), 'its issuer no longer configured');
    await refused(authenticator(['https://other.example.com/']).resume(identityRef(who)), 'nor resumed so');
    await refused(authenticator([issuer]).resume({ kind: 'browserSession', userId: bob.id, tokenId: identity.id }), "an identity that is not the user's");
    // A token saying a key where the record names an identity (or another identity) is refused.
    const forged = sessions.sign({ ...record, identityId: undefined, apiKeyId: 'key_000000000000000000000000' });
    await refused(authenticator([issuer]).authenticate({ session: forged.token, csrf: forged.csrfToken, via: 'session' }), 'a key the record does not name');
    await store.endSession(record.id, T);
    await refused(authenticator([issuer]).authenticate(credentials), 'ended');
  } finally {
    await store.close();
    dir.cleanup();
  }
});
