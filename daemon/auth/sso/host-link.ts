// The seam between single sign-on and the permission sync: after a sign-in through a
// GitHub or GitLab provider that names a `connection`, the member's account on that host
// is handed to whatever links accounts to members (the permission sync, which then asks
// the host what the account may read). The daemon passes it in (daemon.ts); without one,
// nothing is linked.

import type { HostAccount } from '../../repos/hosts/types.ts';

/**
 * Links `account` (on the host of connection `link.connection`) to the member `userId`.
 * `token` is the member's own OAuth access token on the host, from the sign-in. A failure
 * is logged by the caller; the member is signed in all the same.
 */
export type LinkHostAccount = (userId: string, link: { connection: string; account: HostAccount; token?: string }) => Promise<void>;
