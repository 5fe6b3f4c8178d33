// Who may call the enterprise endpoints: an installed, active license granting the
// endpoint's entitlement, and for managing the organization (its members, the audit log)
// an owner.

import type { Identity } from '../../auth/identity.ts';
import { ServiceError } from '../../errors.ts';
import type { Services } from '../services.ts';

/** Owners with the org-management entitlement: 401 anonymous, 403 without the license or the role (`what`: what they may do). */
export async function ownerWithEntitlement(s: Services, identity: Identity, what = 'list or read users'): Promise<void> {
  if (identity.kind === 'anonymous' || identity.userId === undefined)
    throw new ServiceError('NOT_AUTHENTICATED', 'this endpoint needs the credential of an organization owner');
  await entitled(s, 'org-management');
  if (identity.role !== 'owner') throw new ServiceError('INSUFFICIENT_PERMISSIONS', `only organization owners may ${what}`);
}

/** 403 naming the entitlement and why it is missing, unless the installed, active license grants it. */
export async function entitled(s: Services, entitlement: string): Promise<void> {
  const off = await s.entitlements.missing(entitlement);
  if (off) throw new ServiceError('INSUFFICIENT_PERMISSIONS', `this endpoint needs an active license with the "${entitlement}" entitlement (${off})`);
}
