// What a single sign-on flow keeps between its start and its callback: the provider, the
// state, the OpenID Connect nonce, the PKCE code verifier and the page to return to, in a
// signed cookie that lives 10 minutes, so that any daemon process sharing the server
// secret can take the callback (a cluster's nodes, behind any load balancer). Nothing of
// it is stored before the callback; the store then records that the flow came back
// (store.ts useSignInFlow), so a callback replayed with a copy of the cookie is refused.
//
//   trawl_sign_in=<payload>.<signature>; Path=/auth/; HttpOnly; SameSite=Lax; Max-Age=600
//   payload   = base64url(JSON {"p": provider, "s": state, "n": nonce (OpenID Connect only),
//               "v": PKCE code verifier, "r": path to return to, "e": expiry in Unix seconds})
//   signature = base64url(HMAC-SHA256(server secret, "trawl-sign-in\0" + payload))
//
// SameSite=Lax, not Strict like the session cookie: the callback is a navigation that
// the provider's page starts, on which a browser sends Lax cookies and withholds Strict
// ones. Path=/auth/: only the sign-in routes ever receive it. The state is also the
// flow's name in the store, as its keyed hash (the label "trawl-sign-in-state\0"), so the
// store holds nothing a callback could be made from.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const FLOW_COOKIE = 'trawl_sign_in';
export const FLOW_LIFETIME_MS = 10 * 60 * 1000;

const LABEL = 'trawl-sign-in\0';
const STATE_LABEL = 'trawl-sign-in-state\0';
/** A signature is 32 bytes: 43 base64url characters. The payload is bounded: a forged one cannot be huge. */
const VALUE = /^([A-Za-z0-9_-]{1,4000})\.([A-Za-z0-9_-]{43})$/;
/** Provider names (config: connectionName); states, nonces and verifiers (openid-client: 43 base64url characters). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const RANDOM = /^[A-Za-z0-9_-]{43,128}$/;

/** One flow between its start and its callback. */
export interface SignInFlow {
  /** The provider's name (signIn.providers). */
  provider: string;
  state: string;
  /** OpenID Connect providers only. */
  nonce?: string;
  /** The PKCE code verifier. */
  verifier: string;
  /** Where the browser goes once signed in: a path of this site (safeReturnPath). */
  returnTo: string;
  /** Unix seconds. */
  expires: number;
}

export class SignInFlows {
  constructor(
    private readonly secret: Buffer,
    /** Injectable clock (the daemon's `now`). */
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A new flow's expiry: 10 minutes from now, in Unix seconds. */
  expiry(): number {
    return Math.floor((this.now().getTime() + FLOW_LIFETIME_MS) / 1000);
  }

  /** The cookie value that carries `flow`. */
  seal(flow: SignInFlow): string {
    const claims = {
      p: flow.provider,
      s: flow.state,
      ...(flow.nonce === undefined ? {} : { n: flow.nonce }),
      v: flow.verifier,
      r: flow.returnTo,
      e: flow.expires,
    };
    const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return `${payload}.${this.mac(LABEL, payload)}`;
  }

  /** The flow a cookie value carries when its signature is good and it has not expired; undefined otherwise. */
  open(value: string | undefined): SignInFlow | undefined {
    const m = value === undefined ? null : VALUE.exec(value);
    if (!m) return undefined;
    const expected = Buffer.from(this.mac(LABEL, m[1]!), 'utf8');
    const sent = Buffer.from(m[2]!, 'utf8');
    if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return undefined;
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
    const { p, s, n, v, r, e } = claims as Record<string, unknown>;
    const random = (x: unknown): x is string => typeof x === 'string' && RANDOM.test(x);
    if (typeof p !== 'string' || !NAME.test(p) || !random(s) || !random(v) || (n !== undefined && !random(n))) return undefined;
    if (typeof r !== 'string' || safeReturnPath(r) !== r || typeof e !== 'number' || !Number.isSafeInteger(e)) return undefined;
    if (this.now().getTime() >= e * 1000) return undefined;
    return { provider: p, state: s, ...(n === undefined ? {} : { nonce: n as string }), verifier: v, returnTo: r, expires: e };
  }

  /** The name a flow's state is recorded under in the store (useSignInFlow). */
  stateHash(state: string): string {
    return this.mac(STATE_LABEL, state);
  }

  private mac(label: string, text: string): string {
    return createHmac('sha256', this.secret)
      .update(label + text, 'utf8')
      .digest('base64url');
  }
}

/**
 * `path` when it is a path of this site to return to after sign-in ("/", "/search?q=x"),
 * else "/": never another site ("//evil.example", "/\\evil.example", "https://..."), nor
 * a path with control characters or of more than 2000 characters.
 */
export function safeReturnPath(path: string | undefined): string {
  if (path === undefined || path.length > 2000 || !path.startsWith('/') || path.startsWith('//') || path.startsWith('/\\')) return '/';
  return /[\u0000-\u001f\u007f\\]/.test(path) ? '/' : path;
}

/** The Set-Cookie value that holds a flow (see the top of this file). */
export function flowCookie(value: string, secure: boolean): string {
  return `${FLOW_COOKIE}=${value}; Path=/auth/; HttpOnly; SameSite=Lax; Max-Age=${FLOW_LIFETIME_MS / 1000}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that makes the browser drop the flow's cookie (once its callback came). */
export function clearFlowCookie(secure: boolean): string {
  return `${FLOW_COOKIE}=; Path=/auth/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}
