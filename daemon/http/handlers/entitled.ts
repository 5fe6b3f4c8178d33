// Who may call the enterprise endpoints: an installed, active license granting the
// endpoint's entitlement, and for managing the organization (its members, the audit log)
// an owner.

import type { Identity } from '../../auth/identity.ts';
import { ServiceError } from '../../errors.ts';
import type { Services } from '../services.ts';

/** Owners with the org-management entitlement: 401 anonymous, 403 without the license or the role (`what`: what they may do). */
export async function ownerWithEntitlement(s: Services, identity: Identity, what = 'list or read users'): Promise<void> {
  signedIn(identity);
  await entitled(s, 'org-management');
  ownerOnly(identity, what);
}

/** Owners, with any credential: 401 anonymous, 403 anyone else (`what`: what they may do). */
export function ownerOnly(identity: Identity, what: string): void {
  signedIn(identity);
  if (identity.role !== 'owner') throw new ServiceError('INSUFFICIENT_PERMISSIONS', `only organization owners may ${what}`);
}

function signedIn(identity: Identity): void {
  if (identity.kind === 'anonymous' || identity.userId === undefined)
    throw new ServiceError('NOT_AUTHENTICATED', 'this endpoint needs the credential of an organization owner');
}

/** 403 naming the entitlement and why it is missing, unless the installed, active license grants it. */
export async function entitled(s: Services, entitlement: string): Promise<void> {
  const off = await s.entitlements.missing(entitlement);
  if (off) throw new ServiceError('INSUFFICIENT_PERMISSIONS', `this endpoint needs an active license with the "${entitlement}" entitlement (${off})`);
}
