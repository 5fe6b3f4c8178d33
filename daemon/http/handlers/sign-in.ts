// Single sign-on of the web UI (docs/identity.md "Single sign-on"): a browser is sent to
// the provider and comes back signed in, with the same session, cookies and CSRF token as
// a sign-in with an API key (handlers/session.ts).
//
//   GET /auth/{provider}/start[?returnTo=/path]   a new flow (auth/sso/flow-cookie.ts: its
//       state, nonce and PKCE verifier in a signed cookie of 10 minutes), then 302 to the
//       provider's authorization address.
//   GET /auth/{provider}/callback?code=...&state=...   where the provider sends the browser
//       back (the redirect URI registered with it: <publicUrl>/auth/{provider}/callback).
//       The flow's cookie must be there, good, of this provider, its state the one sent
//       back, and the flow must not have come back before (the store keeps that: a replay
//       is refused); then the code is traded for who signed in, and the member decided
//       (auth/sso/member.ts) and signed in (audit/sign-in.ts). 303 to the page the flow
//       started from, with the session's cookies; the flow's cookie is dropped either way.
//
// Every refusal goes back to the web UI as `?signInError=<reason>&provider=<name>` (the
// reasons: auth/sso/refusals.ts), which the page turns into a sentence; the log says more.
// Neither route is authenticated as the API's are, nor rate limited, nor a CORS route; the
// log line of a request has its path only, never the code or state of its query string.
//
// For a GitHub or GitLab provider with a `connection`, the account is then linked to the
// member through `linkHostAccount` (the permission sync's: it learns what that account may
// read), with the member's access token on the host. A link that fails is logged; the
// person is signed in all the same.

import { signInAccount } from '../../audit/sign-in.ts';
import { csrfCookie, readCookie, sessionCookie, type BrowserSessions } from '../../auth/browser-session.ts';
import type { LinkHostAccount } from '../../auth/sso/host-link.ts';
import { clearFlowCookie, FLOW_COOKIE, flowCookie, safeReturnPath, SignInFlows, type SignInFlow } from '../../auth/sso/flow-cookie.ts';
import { SignInError, SignInProviders, type SignedInAccount } from '../../auth/sso/providers.ts';
import type { SignInRefusal } from '../../auth/sso/refusals.ts';
import { ServiceError } from '../../errors.ts';
import type { Route, RouteContext } from '../route.ts';
import type { Services } from '../services.ts';

export interface SignInParts {
  providers: SignInProviders;
  flows: SignInFlows;
  sessions: BrowserSessions;
  /** Absent: accounts are not linked (nothing to link them for). */
  linkHostAccount?: LinkHostAccount;
}

const NO_STORE: [string, string] = ['Cache-Control', 'no-store'];

/**
 * The configured providers (their client secrets read from `env` now, so that an unset
 * one stops the daemon's start) and the routes that sign in through them.
 */
export function singleSignOn(
  s: Services,
  o: { secret: Buffer; now: () => Date; sessions: BrowserSessions; env: NodeJS.ProcessEnv; link: LinkHostAccount | undefined },
): { providers: SignInProviders; routes: Route[] } {
  const providers = new SignInProviders(s.config.signIn, { publicUrl: s.config.settings.publicUrl, env: o.env });
  const flows = new SignInFlows(o.secret, o.now);
  return { providers, routes: signInRoutes(s, { providers, flows, sessions: o.sessions, ...(o.link ? { linkHostAccount: o.link } : {}) }) };
}

export function signInRoutes(s: Services, parts: SignInParts): Route[] {
  const base = { tag: 'Session', rateLimited: false, authenticated: false } as const;
  const secure = () => s.baseUrl.startsWith('https:');
  const providerOf = (ctx: RouteContext): string => {
    const name = ctx.params.provider!;
    if (!parts.providers.has(name)) throw new ServiceError('NOT_FOUND', `no sign-in provider ${JSON.stringify(name)} (signIn.providers of the configuration)`);
    return name;
  };
  /** 302 or 303 to `location`, with `cookies` set. */
  const redirect = (ctx: RouteContext, status: 302 | 303, location: string, cookies: string[]): void => {
    ctx.reply.send(status, '', [
      ['Location', location],
      NO_STORE,
      ['Referrer-Policy', 'no-referrer'],
      ...cookies.map((c): [string, string] => ['Set-Cookie', c]),
    ]);
  };
  const refuse = (ctx: RouteContext, provider: string, returnTo: string, reason: SignInRefusal, detail: string): void => {
    ctx.log.warn({ provider, reason, detail }, 'single sign-on refused');
    redirect(ctx, 303, withRefusal(returnTo, reason, provider), [clearFlowCookie(secure())]);
  };

  return [
    {
      ...base,
      method: 'GET',
      path: '/auth/{provider}/start',
      operationId: 'signInStart',
      summary: 'Starts a single sign-on: sends the browser to the provider',
      description:
        'A browser navigation, not an API call. Sets the flow cookie (trawl_sign_in: the state, nonce and PKCE verifier, signed, for 10 minutes, Path=/auth/, SameSite=Lax) ' +
        'and redirects to the provider. When the provider cannot be reached, redirects to returnTo with signInError=provider_error.',
      query: 'SignInStartQuery',
      errors: ['NOT_FOUND', 'INVALID_QUERY_PARAMS'],
      response: { status: 302, description: "To the provider's authorization address (Location)." },
      async handle(ctx) {
        const name = providerOf(ctx);
        const returnTo = safeReturnPath((ctx.query as { returnTo?: string }).returnTo);
        let begun: Awaited<ReturnType<SignInProviders['begin']>>;
        try {
          begun = await parts.providers.begin(name);
        } catch (err) {
          if (!(err instanceof SignInError)) throw err;
          refuse(ctx, name, returnTo, err.reason, err.detail);
          return undefined;
        }
        const flow: SignInFlow = { ...begun.flow, returnTo, expires: parts.flows.expiry() };
        redirect(ctx, 302, begun.url.href, [flowCookie(parts.flows.seal(flow), secure())]);
        return undefined;
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/auth/{provider}/callback',
      operationId: 'signInCallback',
      summary: 'Where the provider sends the browser back: signs it in',
      description:
        "A browser navigation, not an API call: its query is the provider's authorization answer (code and state, or error). Signed in: 303 to the flow's returnTo with the session cookies of POST /api/session. " +
        'Refused: 303 to returnTo (or /) with signInError (unverified_email, no_email, domain_not_allowed, not_a_member, suspended, denied, expired, replayed, provider_error) and provider. The flow cookie is dropped either way.',
      response: { status: 303, description: 'Back to the web UI (Location), signed in or with signInError.' },
      errors: ['NOT_FOUND'],
      async handle(ctx) {
        const name = providerOf(ctx);
        const flow = parts.flows.open(readCookie(ctx.headers.cookie, FLOW_COOKIE));
        const sentState = new URLSearchParams(ctx.rawQuery).get('state');
        // Another browser's flow, another tab's newer one, a lost or expired cookie: nothing to go on.
        if (!flow || flow.provider !== name || sentState !== flow.state) {
          refuse(
            ctx,
            name,
            flow?.returnTo ?? '/',
            'expired',
            flow ? 'the callback is not of the flow this browser started' : 'no sign-in flow cookie, or an expired one',
          );
          return undefined;
        }
        if (!(await s.store.useSignInFlow(parts.flows.stateHash(flow.state), new Date(flow.expires * 1000).toISOString()))) {
          refuse(ctx, name, flow.returnTo, 'replayed', 'this flow came back before');
          return undefined;
        }
        let account: SignedInAccount;
        try {
          account = await parts.providers.finish(flow, ctx.rawQuery);
        } catch (err) {
          if (!(err instanceof SignInError)) throw err;
          refuse(ctx, name, flow.returnTo, err.reason, err.detail);
          return undefined;
        }
        const outcome = await signInAccount(s.store, s.audit, {
          provider: name,
          account,
          rules: s.config.signIn,
          expiresAt: parts.sessions.expiry(),
          ...(ctx.headers['user-agent'] !== undefined ? { userAgent: ctx.headers['user-agent'] } : {}),
          sourceAddress: ctx.clientAddress,
          now: s.now().toISOString(),
        });
        if ('refused' in outcome) {
          refuse(ctx, name, flow.returnTo, outcome.refused, `${account.issuer} account ${account.subject}`);
          return undefined;
        }
        await linkAccount(ctx, s, parts, name, { account, userId: outcome.user.id });
        const issued = parts.sessions.sign(outcome.session);
        redirect(ctx, 303, flow.returnTo, [sessionCookie(issued.token, secure()), csrfCookie(issued.csrfToken, secure()), clearFlowCookie(secure())]);
        return undefined;
      },
    },
  ];
}

/** linkHostAccount for a host provider with a connection; a failure is logged, never the sign-in's. */
async function linkAccount(
  ctx: RouteContext,
  s: Services,
  parts: SignInParts,
  name: string,
  signedIn: { account: SignedInAccount; userId: string },
): Promise<void> {
  const provider = s.config.signIn.providers[name];
  const host = signedIn.account.host;
  if (!parts.linkHostAccount || !host || provider?.type === 'oidc' || provider?.connection === undefined) return;
  try {
    await parts.linkHostAccount(signedIn.userId, { connection: provider.connection, account: host.account, token: host.token });
  } catch (err) {
    const detail = { provider: name, connection: provider.connection, userId: signedIn.userId, err: (err as Error).message };
    ctx.log.warn(detail, 'linking the account on the code host failed; signed in all the same');
  }
}

/** `returnTo` with the refusal's reason and provider added to its query (what the web UI reads). */
function withRefusal(returnTo: string, reason: SignInRefusal, provider: string): string {
  const url = new URL(returnTo, 'http://trawl.invalid');
  url.searchParams.set('signInError', reason);
  url.searchParams.set('provider', provider);
  return `${url.pathname}${url.search}${url.hash}`;
}
