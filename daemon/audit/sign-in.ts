// A single sign-on carried out in the store, with its audit events: who the account signs
// in as (auth/sso/member.ts decides), a member made just in time, the account linked to
// its member, and the browser session, in one transaction with the events that record
// them (user.added, session.opened), so that no member or session exists without its
// record. A refusal the provider's answer leads to (an unverified email, a suspended
// member, ...) is recorded as a failed session.opened, best-effort: the person is refused
// whatever happens to the log.
//
// Two first sign-ins of one person at once (two tabs) race to make the member or link the
// account; the one that loses sees the store's conflict, and is decided again, finding what
// the other made.

import { decideMember, type MemberDecision } from '../auth/sso/member.ts';
import type { SignedInAccount } from '../auth/sso/providers.ts';
import type { SignInRefusal } from '../auth/sso/refusals.ts';
import type { SignInConfig } from '../config/types.ts';
import { StoreConflictError, type BrowserSessionRecord, type SignInIdentityRecord, type Store, type UserRecord } from '../store/store.ts';
import type { AuditActorOf, AuditEntry } from './events.ts';
import type { AuditLog } from './log.ts';

export interface SingleSignOn {
  /** The configured provider's name. */
  provider: string;
  account: SignedInAccount;
  rules: Pick<SignInConfig, 'allowedDomains' | 'defaultRole' | 'provision'>;
  /** The session's expiry (auth/browser-session.ts expiry()). */
  expiresAt: string;
  userAgent?: string;
  sourceAddress: string;
  /** ISO 8601. */
  now: string;
}

export type SignInOutcome =
  | { session: BrowserSessionRecord; user: UserRecord; identity: SignInIdentityRecord; linked: 'known' | 'email' | 'provisioned' }
  | { refused: SignInRefusal };

type Done = Exclude<SignInOutcome, { refused: SignInRefusal }>;

/** Signs the account in: the session it opens, or why it is refused. */
export async function signInAccount(store: Store, audit: AuditLog, s: SingleSignOn): Promise<SignInOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { decision, outcome } = await audit.change(
        () => carryOut(store, s),
        (r) => ('refused' in r.outcome ? undefined : events(r.outcome, s)),
      );
      if (decision.kind === 'refused') void audit.note(refusal(decision, s));
      return outcome;
    } catch (err) {
      // Lost a race with another first sign-in of the same person: decide again.
      if (err instanceof StoreConflictError && attempt < 2) continue;
      throw err;
    }
  }
}

/** Inside the transaction: what the store knows, the decision, and what it takes. */
async function carryOut(store: Store, s: SingleSignOn): Promise<{ decision: MemberDecision; outcome: SignInOutcome }> {
  const { account, now } = s;
  const identity = await store.findSignInIdentity(account.issuer, account.subject);
  const linkedUser = identity && (await store.getUser(identity.userId));
  const byEmail = identity === undefined && account.email !== undefined ? await store.getUserByEmail(account.email) : undefined;
  const decision = decideMember(
    account,
    { ...(identity && linkedUser ? { linked: { identity, user: linkedUser } } : {}), ...(byEmail ? { byEmail } : {}) },
    s.rules,
  );
  if (decision.kind === 'refused') return { decision, outcome: { refused: decision.reason } };

  const user = decision.kind === 'provision' ? await store.createUser({ email: decision.email, name: decision.name, role: decision.role }, now) : decision.user;
  const seen = { provider: s.provider, ...(account.emailVerified && account.email !== undefined ? { email: account.email } : {}) };
  const linked =
    decision.kind === 'known'
      ? ((await store.touchSignInIdentity(decision.identity.id, seen, now)) ?? decision.identity)
      : await store.createSignInIdentity({ userId: user.id, issuer: account.issuer, subject: account.subject, ...seen }, now);
  const session = await store.createSession(
    { userId: user.id, identityId: linked.id, expiresAt: s.expiresAt, ...(s.userAgent !== undefined ? { userAgent: s.userAgent } : {}) },
    now,
  );
  const how = decision.kind === 'known' ? 'known' : decision.kind === 'link' ? 'email' : 'provisioned';
  return { decision, outcome: { session, user, identity: linked, linked: how } };
}

function events(done: Done, s: SingleSignOn): AuditEntry[] {
  const actor: AuditActorOf = { userId: done.user.id, credentialKind: 'singleSignOn', credentialId: done.identity.id };
  const from = { sourceAddress: s.sourceAddress };
  const out: AuditEntry[] = [];
  if (done.linked === 'provisioned')
    out.push({
      action: 'user.added',
      actor,
      target: { type: 'user', id: done.user.id },
      ...from,
      details: { email: done.user.email, role: done.user.role, provider: s.provider },
    });
  out.push({
    action: 'session.opened',
    actor,
    target: { type: 'session', id: done.session.id },
    ...from,
    details: { expiresAt: done.session.expiresAt, provider: s.provider, linked: done.linked },
  });
  return out;
}

function refusal(decision: Extract<MemberDecision, { kind: 'refused' }>, s: SingleSignOn): AuditEntry {
  return {
    action: 'session.opened',
    outcome: 'failure',
    actor: { ...(decision.user ? { userId: decision.user.id } : {}), credentialKind: 'singleSignOn' },
    sourceAddress: s.sourceAddress,
    details: { provider: s.provider, reason: decision.reason, ...(s.account.email !== undefined ? { email: s.account.email } : {}) },
  };
}
