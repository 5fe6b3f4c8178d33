// The audit log's vocabulary: every action it records, the kinds of credential an actor
// acts with, and the kinds of target. One list each, read by the recorder (log.ts), the
// filters of GET /api/ee/audit and `trawl audit` (query.ts), the OpenAPI schema and the
// docs (docs/audit-log.md lists the same actions; test/audit/audit-units.test.ts checks that it does).
//
// Adding an action: one line here, and one call of AuditLog where it happens.

export const AUDIT_ACTIONS = {
  'api_key.created': 'an API key was created (trawl keys create, POST /api/keys)',
  'api_key.revoked':
    'an API key was revoked, and with it every scoped token, OAuth grant and browser session opened with it (trawl keys revoke, DELETE /api/keys/{id})',
  'scoped_token.created': 'a scoped access token was created (POST /api/ee/scoped_access_token); failure: refused',
  'scoped_token.revoked': 'a scoped access token was revoked (DELETE /api/ee/scoped_access_token/{id}); failure: refused',
  'oauth_client.registered': 'an OAuth client registered itself (POST /oauth/register)',
  'oauth_grant.consented': 'a user allowed an OAuth client on the consent page (an authorization code was issued)',
  'oauth_grant.created': 'an OAuth client exchanged its authorization code: the grant and its first tokens exist',
  'oauth_grant.revoked':
    'an OAuth grant was revoked: by the client (a refresh token at POST /oauth/revoke), by reuse of a code or refresh token, by trawl oauth revoke, or by its user or an owner (DELETE /api/oauth_grants/{id})',
  'oauth_token.revoked': 'an OAuth client revoked one of its access tokens (POST /oauth/revoke); the grant lives on',
  'session.opened':
    'a browser signed in to the web UI with an API key (POST /api/session) or through a single sign-on provider (GET /auth/{provider}/callback); failure: a single sign-on the provider vouched for was refused (an unverified email, a domain not allowed, a suspended member, nobody to sign in as)',
  'session.ended':
    'a browser session ended: signed out (DELETE /api/session with a valid session), or ended by its user or an owner (DELETE /api/sessions/{id}, trawl sessions revoke)',
  'user.added': 'a user was added (trawl users add), or made a member at their first single sign-on (just-in-time provisioning)',
  'user.suspended': 'a user was suspended (trawl users suspend, PATCH /api/ee/users/{id})',
  'user.unsuspended': 'a suspended user was made active again (trawl users unsuspend, PATCH /api/ee/users/{id})',
  'user.limit_changed': "a user's daily request limit was set or reset (trawl users limit, PATCH /api/ee/users/{id})",
  'user.signed_out':
    'every scoped token, OAuth grant and browser session of a user was ended; the API keys stay (POST /api/sign_out_everywhere, trawl users sign-out)',
  'license.installed': 'a license was installed (trawl license install)',
  'host_account.linked':
    "a member's account on a code host was linked, for the permission sync: at sign-in with the host, by an owner (PUT /api/ee/users/{id}/accounts/{connection}), or by the sync when the host's verified email matched the member's",
  'host_account.unlinked':
    "a member's account on a code host was unlinked (DELETE /api/ee/users/{id}/accounts/{connection}); what it could read no longer counts",
  'search_context.saved': 'an owner created or replaced a search context (PUT /api/contexts/{name})',
  'search_context.deleted': "an owner deleted a search context (DELETE /api/contexts/{name}), clearing the members' defaults that named it",
  'permissions.synced':
    'a permission sync pass ended (the daemon, on its schedule or asked): per connection, the repositories and accounts asked about and how many failed',
  'auth.failed': 'credentials were refused (401): one event per client address and credential kind per minute, with the count',
  'webhook.refused':
    'a code host\'s webhook deliveries were refused: their signature or secret did not verify (401), or no connection receives that host\'s webhooks (404); one event per client address, host and reason per minute, with the count (details.subject: "github unverified")',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export const ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as AuditAction[];

/**
 * What an actor acted with: the API's credential kinds (auth/identity.ts), an OAuth client
 * authenticating itself at the token or revocation endpoint, an account at a single
 * sign-on provider signing in ('singleSignOn': its sign-in identity's id, when linked),
 * the command line on the data directory, the daemon itself ('system': what it does on
 * its own, such as a permission sync pass, or a link it makes for a member signing in
 * with a code host), or a code host's webhook delivery ('webhook').
 */
export const CREDENTIAL_KINDS = [
  'apiKey',
  'scopedToken',
  'oauth',
  'browserSession',
  'anonymous',
  'oauthClient',
  'singleSignOn',
  'cli',
  'system',
  'webhook',
] as const;
export type AuditCredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const TARGET_TYPES = ['api_key', 'scoped_token', 'oauth_client', 'oauth_grant', 'session', 'user', 'license', 'search_context'] as const;
export type AuditTargetType = (typeof TARGET_TYPES)[number];

export interface AuditActorOf {
  userId?: string;
  credentialKind: AuditCredentialKind;
  credentialId?: string;
}

/** What a call site says about an event; the recorder adds the time (and the store the id). */
export interface AuditEntry {
  action: AuditAction;
  /** Default 'success'. */
  outcome?: 'success' | 'failure';
  actor: AuditActorOf;
  target?: { type: AuditTargetType; id: string };
  sourceAddress?: string;
  details?: Record<string, unknown>;
}

/**
 * Whether `filter` names actions: an action's exact name, or the start of some action's
 * name ending in "." ("api_key." for every API key event).
 */
export function isActionFilter(filter: string): boolean {
  return filter.endsWith('.') ? ACTION_NAMES.some((a) => a.startsWith(filter)) : (ACTION_NAMES as string[]).includes(filter);
}
