// Which member a single sign-on signs in as (docs/identity.md "Single sign-on"), decided
// from what the store knows and what the provider said, in this order:
//
//   1. The account is linked already (its issuer and subject): its member, whatever email
//      the provider gives now (emails change; the subject does not).
//   2. Else the provider's email, when it says the email is verified, names a member: the
//      account is linked to them. An email the provider does not vouch for names nobody:
//      whoever could set it could otherwise take over that member.
//   3. Else, with provisioning on and the email's domain allowed, a new member with the
//      configured role; otherwise nobody.
//
// A suspended member is refused whichever way they were found. Pure: the caller reads the
// store and carries the decision out (audit/sign-in.ts).

import type { SignInConfig } from '../../config/types.ts';
import type { Role, SignInIdentityRecord, UserRecord } from '../../store/store.ts';
import { controlCharacterProblem, replaceControlCharacters } from '../control-characters.ts';
import type { SignedInAccount } from './providers.ts';
import type { SignInRefusal } from './refusals.ts';

export type MemberDecision =
  /** A linked account's member. */
  | { kind: 'known'; user: UserRecord; identity: SignInIdentityRecord }
  /** An existing member, found by the verified email: the account is to be linked to them. */
  | { kind: 'link'; user: UserRecord; email: string }
  /** A new member to make, and link the account to. */
  | { kind: 'provision'; email: string; name: string; role: Role }
  /** Nobody; `user` when a member was found (a suspended one). */
  | { kind: 'refused'; reason: SignInRefusal; user?: UserRecord };

/** What the store says of the account: its link (with that member), and the member with the account's email. */
export interface KnownParties {
  linked?: { identity: SignInIdentityRecord; user: UserRecord };
  byEmail?: UserRecord;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const NAME_MAX = 100;

export function decideMember(
  account: SignedInAccount,
  known: KnownParties,
  rules: Pick<SignInConfig, 'allowedDomains' | 'defaultRole' | 'provision'>,
): MemberDecision {
  if (known.linked) {
    const { user, identity } = known.linked;
    return user.suspendedAt !== undefined ? { kind: 'refused', reason: 'suspended', user } : { kind: 'known', user, identity };
  }
  const email = usableEmail(account.email);
  if (email === undefined) return { kind: 'refused', reason: 'no_email' };
  if (!account.emailVerified) return { kind: 'refused', reason: 'unverified_email' };
  if (known.byEmail) {
    const user = known.byEmail;
    return user.suspendedAt !== undefined ? { kind: 'refused', reason: 'suspended', user } : { kind: 'link', user, email };
  }
  if (!rules.provision) return { kind: 'refused', reason: 'not_a_member' };
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (rules.allowedDomains !== undefined && !rules.allowedDomains.includes(domain)) return { kind: 'refused', reason: 'domain_not_allowed' };
  return { kind: 'provision', email, name: memberName(account.name, email), role: rules.defaultRole };
}

/** The email as a member's: lower case, of the form users have, without control characters; undefined when it is none. */
export function usableEmail(email: string | undefined): string | undefined {
  if (email === undefined) return undefined;
  const e = email.trim().toLowerCase();
  return EMAIL.test(e) && controlCharacterProblem('email', e) === undefined ? e : undefined;
}

/** A provider's name for someone as a member's: control characters taken out, 100 characters at most, the email's local part when nothing is left. */
export function memberName(name: string, email: string): string {
  const clean = replaceControlCharacters(name, () => '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, NAME_MAX)
    .trim();
  return clean === '' ? email.slice(0, email.lastIndexOf('@')) : clean;
}
