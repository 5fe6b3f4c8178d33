// Every API call of the page goes through here: same-origin requests that carry the
// session cookie (set by POST /api/session) and the CSRF token that came with it. The
// daemon accepts the cookie only together with that header, and never counts such
// requests against the API rate limit. A 401 (no session, or it expired) asks the person
// to sign in and then repeats the request once.
//
// The page does not wait for the session check before its first requests (main.ts): they
// go out at once with the token from the trawl_csrf cookie. So a refused request (401, or
// 403 INVALID_CSRF_TOKEN) first waits for that check, which may have dropped a stale
// session or supplied a token the cookie lacked, and is repeated if the token changed.

export interface ErrorObject {
  statusCode: number;
  errorCode: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrfToken: string | undefined;
let signIn: (() => Promise<boolean>) | undefined;
let sessionSettled: Promise<unknown> = Promise.resolve();

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** What to do on a 401: show the sign-in dialog; resolves true once signed in, false when the person cancels. */
export function onUnauthorized(handler: () => Promise<boolean>): void {
  signIn = handler;
}

/** The session check in flight (session.ts): refused requests wait for it before deciding. */
export function whileSessionLoads(check: Promise<unknown>): void {
  sessionSettled = check.catch(() => undefined);
}

/** `mayAsk: false`: never show the sign-in dialog (signing out). */
export async function apiFetch(path: string, init: RequestInit = {}, mayAsk = true): Promise<Response> {
  let asked = false;
  // At most three tries: the first, one with a token the session check changed, one after sign-in.
  for (let attempt = 1; ; attempt++) {
    const sent = csrfToken;
    const headers = new Headers(init.headers);
    headers.set('Accept', headers.get('Accept') ?? 'application/json');
    if (sent) headers.set('X-CSRF-Token', sent);
    const res = await fetch(path, { ...init, headers, credentials: 'same-origin' });
    if (res.ok) return res;
    const err = await errorOf(res);
    if (attempt >= 3 || !(err.statusCode === 401 || err.errorCode === 'INVALID_CSRF_TOKEN')) throw err;
    await sessionSettled;
    if (csrfToken !== sent) continue;
    if (err.statusCode === 401 && mayAsk && !asked && signIn) {
      asked = true;
      if (await signIn()) continue;
    }
    throw err;
  }
}

export async function apiJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await apiFetch(path, init);
  return (await res.json()) as T;
}

/** A request init carrying `body` as JSON, by POST unless `method` says otherwise. */
export function postJson(body: unknown, init: RequestInit = {}, method: 'POST' | 'PUT' | 'PATCH' = 'POST'): RequestInit {
  return { ...init, method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as Partial<ErrorObject>;
    if (typeof body.message === 'string') return new ApiError(res.status, body.errorCode ?? 'UNEXPECTED_ERROR', body.message);
  } catch {
    // Not the error object (a proxy's page): fall through.
  }
  return new ApiError(res.status, 'UNEXPECTED_ERROR', `the server answered ${res.status} ${res.statusText}`);
}

/** A query string from the defined values. */
export function qs(params: Record<string, string | number | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.set(k, String(v));
  return u.toString();
}
