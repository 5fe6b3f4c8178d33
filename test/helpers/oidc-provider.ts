// An OpenID Connect provider in the test's own process (oidc-provider, the certified
// implementation), on 127.0.0.1 at port 0: discovery, the authorization endpoint with
// PKCE required, the token endpoint (client_secret_post), signed ID tokens and userinfo.
// Its people are `accounts` (subject -> email, email_verified, name), which a test may
// change between sign-ins. Nobody types a password: the interaction step signs in the
// subject in `nextLogin` at once and grants what the client asked for, so a flow goes
// through with redirects alone, followed by fetch or by a browser.

import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestOidcProvider {
  /** The issuer: http://127.0.0.1:<port>. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Subject -> claims. */
  readonly accounts: Map<string, TestAccount>;
  /** Who the next interaction signs in (a key of `accounts`). */
  nextLogin: string;
  /** Every request's method and path (with its query), in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Stateful models kept in memory, expiring as oidc-provider asks (its adapter interface). */
class MemoryStore {
  static readonly data = new Map<string, { payload: Record<string, unknown>; until: number }>();
  constructor(private readonly model: string) {}
  #key(id: string): string {
    return `${this.model}:${id}`;
  }
  async upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void> {
    MemoryStore.data.set(this.#key(id), { payload, until: expiresIn ? Date.now() + expiresIn * 1000 : Infinity });
  }
  async find(id: string): Promise<Record<string, unknown> | undefined> {
    const e = MemoryStore.data.get(this.#key(id));
    return e && e.until > Date.now() ? e.payload : undefined;
  }
  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    for (const [k, e] of MemoryStore.data) if (k.startsWith(`${this.model}:`) && e.payload.uid === uid && e.until > Date.now()) return e.payload;
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async consume(id: string): Promise<void> {
    const e = MemoryStore.data.get(this.#key(id));
    if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string): Promise<void> {
    MemoryStore.data.delete(this.#key(id));
  }
  async revokeByGrantId(grantId: string): Promise<void> {
    for (const [k, e] of MemoryStore.data) if (e.payload.grantId === grantId) MemoryStore.data.delete(k);
  }
}

/** Starts a provider whose one client is `clientId` with `redirectUris`. */
export async function startOidcProvider(options: {
  redirectUris: string[];
  clientId?: string;
  accounts?: Record<string, TestAccount>;
}): Promise<TestOidcProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = options.clientId ?? 'trawl';
  const clientSecret = 'test-client-secret-0123456789';
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const state = { nextLogin: '' };

  const provider = new Provider(issuer, {
    adapter: MemoryStore,
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    // Seconds; given, so that the provider does not warn of its defaults.
    ttl: { AuthorizationCode: 60, Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600 },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      return account && { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
    // Consent is taken as given: a grant of what the client asked for.
    async loadExistingGrant(ctx: GrantContext) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(String(ctx.oidc.params.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
  });
  const callback = provider.callback();
  handler = (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        try {
          await provider.interactionDetails(req, res);
          await provider.interactionFinished(req, res, { login: { accountId: state.nextLogin } }, { mergeWithLastSubmission: false });
        } catch (err) {
          res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
        }
      })();
      return;
    }
    callback(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    get nextLogin() {
      return state.nextLogin;
    },
    set nextLogin(sub: string) {
      state.nextLogin = sub;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface GrantContext {
  oidc: {
    provider: { Grant: new (init: { clientId: string; accountId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> } };
    client: { clientId: string };
    session: { accountId: string };
    params: Record<string, unknown>;
  };
}
