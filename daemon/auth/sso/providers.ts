// The configured single sign-on providers (config: signIn.providers), and the two ends of
// their authorization code flow, through openid-client: the address a sign-in starts at
// (with PKCE, a state and, for OpenID Connect, a nonce), and the callback's code traded for
// who signed in.
//
// OpenID Connect: the endpoints come from <issuer>/.well-known/openid-configuration, read
// at the first sign-in through the provider and kept (a provider that cannot be reached
// then does not stop the daemon, and is asked again next time). openid-client checks the
// ID token: signature (the provider's keys), issuer, audience, expiry, nonce. The email is
// the ID token's, else the userinfo endpoint's; it counts as verified only when the
// provider says so (email_verified: true).
// GitHub: <url>/login/oauth/authorize and <url>/login/oauth/access_token; GitLab:
// <url>/oauth/authorize and <url>/oauth/token. Who signed in comes from the host's API
// (host-accounts.ts), with the token the sign-in gave.
//
// An account is named by its issuer and subject: the OpenID Connect issuer or the host's
// web URL, as a URL (so "https://idp.example.com" and "https://idp.example.com/" are one),
// and the provider's stable id of it (`sub`; the host's user id). GitLab as OpenID Connect
// and GitLab's OAuth app name one account alike. The client secret is read from the
// environment when the daemon starts: an unset variable stops it, rather than the first
// person who tries to sign in.

import * as client from 'openid-client';
import type { SignInConfig, SignInProvider } from '../../config/types.ts';
import { HostError } from '../../repos/hosts/types.ts';
import type { TransportOptions } from '../../repos/hosts/http.ts';
import type { HostAccount } from '../../repos/hosts/types.ts';
import type { SignInFlow } from './flow-cookie.ts';
import { hostUser } from './host-accounts.ts';
import type { SignInRefusal } from './refusals.ts';

/** What the web UI shows of a provider: a button per provider (GET /api/session). */
export interface ProviderView {
  name: string;
  displayName: string;
  type: SignInProvider['type'];
}

/** Who a provider says signed in. */
export interface SignedInAccount {
  /** The provider's issuer (OpenID Connect) or the host's web URL, as a URL's href. */
  issuer: string;
  /** The provider's stable id of the account. */
  subject: string;
  /** The account's email, lower case, when the provider gives one. */
  email?: string;
  /** Whether the provider says `email` is verified. */
  emailVerified: boolean;
  /** A name to show (control characters are the caller's to take out). */
  name: string;
  /** Code hosts: the account there, and the member's access token (for linkHostAccount). */
  host?: { account: HostAccount; token: string };
}

/** A sign-in that cannot go on, and why (refusals.ts); `detail` is for the log only. */
export class SignInError extends Error {
  constructor(
    readonly reason: SignInRefusal,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'SignInError';
  }
}

interface Entry {
  name: string;
  provider: SignInProvider;
  secret: string;
  redirectUri: string;
  issuer: string;
  /** The flow's endpoints, once known (OpenID Connect: after discovery). */
  configuration?: Promise<client.Configuration>;
}

export interface ProviderOptions {
  /** The daemon's public URL (settings.publicUrl), which the providers send people back to. */
  publicUrl: string | undefined;
  /** Where `{"env": NAME}` client secrets are read. */
  env: NodeJS.ProcessEnv;
  /** The code host API client's transport (tests). */
  transport?: TransportOptions;
}

export class SignInProviders {
  readonly #entries = new Map<string, Entry>();

  constructor(
    config: SignInConfig,
    private readonly options: ProviderOptions,
  ) {
    for (const [name, provider] of Object.entries(config.providers)) {
      const secret = options.env[provider.clientSecret.env];
      if (secret === undefined || secret === '')
        throw new Error(`signIn provider "${name}": the environment variable ${provider.clientSecret.env} (its clientSecret) is not set`);
      // The loader refuses providers without a public URL; checked again for hand-made configurations.
      if (options.publicUrl === undefined) throw new Error(`signIn provider "${name}": settings.publicUrl is not set, so there is no address to come back to`);
      const redirectUri = `${options.publicUrl.replace(/\/+$/, '')}/auth/${encodeURIComponent(name)}/callback`;
      this.#entries.set(name, { name, provider, secret, redirectUri, issuer: issuerOf(provider) });
    }
  }

  /** The providers, in the configuration's order. */
  list(): ProviderView[] {
    return [...this.#entries.values()].map((e) => ({ name: e.name, displayName: e.provider.displayName, type: e.provider.type }));
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The issuers of the configured providers (what a session's sign-in identity must still be of: auth/origin.ts identityLive). */
  issuers(): ReadonlySet<string> {
    return new Set([...this.#entries.values()].map((e) => e.issuer));
  }

  /** The display name of a configured provider; its name when there is none. */
  displayName(name: string): string {
    return this.#entries.get(name)?.provider.displayName ?? name;
  }

  /** A new flow's secrets (state, PKCE verifier, nonce for OpenID Connect) and the provider's address to send the browser to. */
  async begin(name: string): Promise<{ flow: Omit<SignInFlow, 'returnTo' | 'expires'>; url: URL }> {
    const e = this.#entry(name);
    const configuration = await this.#configuration(e);
    const oidc = e.provider.type === 'oidc';
    const flow = { provider: name, state: client.randomState(), verifier: client.randomPKCECodeVerifier(), ...(oidc ? { nonce: client.randomNonce() } : {}) };
    const params: Record<string, string> = {
      redirect_uri: e.redirectUri,
      response_type: 'code',
      scope: e.provider.scopes.join(' '),
      state: flow.state,
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      ...(flow.nonce === undefined ? {} : { nonce: flow.nonce }),
    };
    return { flow, url: client.buildAuthorizationUrl(configuration, params) };
  }

  /**
   * The callback (`rawQuery`: its query string as sent) of `flow`, whose state the caller
   * has checked: the code traded for tokens (PKCE, and the ID token's checks), then who
   * signed in. Throws SignInError: `denied` when the person said no at the provider,
   * `provider_error` for anything the provider answered wrong.
   */
  async finish(flow: SignInFlow, rawQuery: string): Promise<SignedInAccount> {
    const e = this.#entry(flow.provider);
    const configuration = await this.#configuration(e);
    const oidc = e.provider.type === 'oidc';
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      // The address the provider sent the browser to, as the token request must repeat it (not the Host the request came with).
      const current = new URL(`${e.redirectUri}?${rawQuery}`);
      tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        ...(oidc ? { expectedNonce: flow.nonce!, idTokenExpected: true } : {}),
      });
    } catch (err) {
      if (err instanceof client.AuthorizationResponseError && err.error === 'access_denied')
        throw new SignInError('denied', `${e.name}: access denied at the provider`);
      throw new SignInError('provider_error', `${e.name}: the authorization code could not be traded for tokens: ${describe(err)}`);
    }
    return oidc ? this.#oidcAccount(e, configuration, tokens) : this.#hostAccount(e, tokens.access_token);
  }

  async #oidcAccount(
    e: Entry,
    configuration: client.Configuration,
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  ): Promise<SignedInAccount> {
    const claims = tokens.claims();
    if (!claims) throw new SignInError('provider_error', `${e.name}: the token answer has no ID token`);
    let source: Record<string, unknown> = claims;
    if (typeof claims.email !== 'string') {
      // Many providers put the email in the userinfo answer only.
      try {
        source = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      } catch (err) {
        throw new SignInError('provider_error', `${e.name}: the userinfo endpoint failed: ${describe(err)}`);
      }
    }
    const email = typeof source.email === 'string' ? source.email.toLowerCase() : undefined;
    // Some providers send "true" as a string.
    const verified = source.email_verified === true || source.email_verified === 'true';
    const name = [source.name, source.preferred_username, claims.name, claims.preferred_username].find((n) => typeof n === 'string' && n.trim() !== '') as
      | string
      | undefined;
    return {
      issuer: e.issuer,
      subject: claims.sub,
      ...(email === undefined ? {} : { email }),
      emailVerified: email !== undefined && verified,
      name: name ?? email ?? claims.sub,
    };
  }

  async #hostAccount(e: Entry, token: string): Promise<SignedInAccount> {
    const provider = e.provider;
    if (provider.type === 'oidc') throw new Error('internal: a host account of an OpenID Connect provider');
    try {
      const user = await hostUser(provider.type, provider.url, token, {
        provider: e.name,
        ...(this.options.transport ? { transport: this.options.transport } : {}),
      });
      return {
        issuer: e.issuer,
        subject: user.account.id,
        ...(user.email === undefined ? {} : { email: user.email }),
        emailVerified: user.emailVerified,
        name: user.name,
        host: { account: user.account, token },
      };
    } catch (err) {
      if (err instanceof HostError) throw new SignInError('provider_error', `${e.name}: reading who signed in failed (${err.kind}): ${err.message}`);
      throw err;
    }
  }

  #entry(name: string): Entry {
    const e = this.#entries.get(name);
    if (!e) throw new Error(`internal: no sign-in provider "${name}"`);
    return e;
  }

  /** The provider's endpoints: discovered once for OpenID Connect (again after a failure), written down for the hosts. */
  #configuration(e: Entry): Promise<client.Configuration> {
    if (e.configuration) return e.configuration;
    const p = e.provider;
    const auth = client.ClientSecretPost(e.secret);
    // http only reaches here for a loopback address: the loader refuses it anywhere else.
    const plain = (p.type === 'oidc' ? p.issuer : p.url).startsWith('http:');
    const made = (
      p.type === 'oidc'
        ? client.discovery(new URL(p.issuer), p.clientId, undefined, auth, plain ? { execute: [client.allowInsecureRequests] } : {})
        : Promise.resolve(hostConfiguration(p, e.issuer, auth, plain))
    ).catch((err: unknown) => {
      // Forgotten, so that the next sign-in asks again; every caller waiting for it gets the same error.
      if (e.configuration === made) delete e.configuration;
      throw new SignInError('provider_error', `${e.name}: the provider's discovery document could not be read: ${describe(err)}`);
    });
    e.configuration = made;
    return made;
  }
}

/** An OAuth app's endpoints on its host. */
function hostConfiguration(
  p: Extract<SignInProvider, { type: 'github' | 'gitlab' }>,
  issuer: string,
  auth: client.ClientAuth,
  plain: boolean,
): client.Configuration {
  const [authorize, token] = p.type === 'github' ? ['/login/oauth/authorize', '/login/oauth/access_token'] : ['/oauth/authorize', '/oauth/token'];
  const configuration = new client.Configuration(
    { issuer, authorization_endpoint: `${p.url}${authorize}`, token_endpoint: `${p.url}${token}` },
    p.clientId,
    undefined,
    auth,
  );
  if (plain) client.allowInsecureRequests(configuration);
  return configuration;
}

/** Who vouches for the accounts of a provider, as the store names them (see the top of this file). */
export function issuerOf(p: SignInProvider): string {
  return new URL(p.type === 'oidc' ? p.issuer : p.url).href;
}

/** An error of openid-client or the network, for the log: its message and, when there is one, the provider's error code. Never a token. */
function describe(err: unknown): string {
  if (err instanceof client.ResponseBodyError || err instanceof client.AuthorizationResponseError)
    return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  if (err instanceof Error) return `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}`;
  return String(err);
}
