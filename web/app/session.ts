// Sign-in for deployments without anonymous access (and optional sign-in where it is on):
// the person signs in through one of the configured single sign-on providers (a button
// each: the browser goes to /auth/<name>/start and comes back signed in), or pastes an API
// key once, which POST /api/session turns into an HttpOnly session cookie that lives until
// the browser closes; the key itself is never stored by the page. A second cookie,
// trawl_csrf, holds the session's CSRF token for this script to read at start, so the
// page's first requests need not wait for GET /api/session. A single sign-on that was
// refused comes back as ?signInError=<reason>&provider=<name> (daemon/http/handlers/sign-in.ts):
// the reason's sentence is shown in the sign-in dialog, and the words leave the address.

import { isSignInRefusal, refusalText } from '../../daemon/auth/sso/refusals.ts';
import { ApiError, apiFetch, onUnauthorized, postJson, setCsrfToken, whileSessionLoads } from './api.ts';
import { clear, h } from './dom.ts';

export interface SessionUser {
  id: string;
  name: string;
  email?: string;
  role: string;
}

/** A single sign-on provider (GET /api/session). */
export interface SignInProvider {
  name: string;
  displayName: string;
  type: string;
}

export interface SessionState {
  authenticated: boolean;
  anonymousAccess: boolean;
  /** The single sign-on providers; empty: API keys only. */
  providers: SignInProvider[];
  user?: SessionUser;
  csrfToken?: string;
  expiresAt?: string;
}

let state: SessionState = { authenticated: false, anonymousAccess: false, providers: [] };
let pending: Promise<boolean> | undefined;

export function session(): SessionState {
  return state;
}

/**
 * Takes the CSRF token from its cookie (requests may go out now), wires the 401 handler,
 * and starts the session check, which renders the header's account area when it answers.
 */
export function startSession(): Promise<SessionState> {
  setCsrfToken(csrfCookie());
  onUnauthorized(() =>
    requireSignIn(state.authenticated ? 'Your session has ended. Sign in again to continue.' : 'This needs you to sign in. Sign in to continue.'),
  );
  const refused = takeRefusal();
  const check = loadSession().then((s) => {
    // A single sign-on that was refused: the dialog again, saying why.
    if (refused)
      void requireSignIn(undefined, refusalText(refused.reason, s.providers.find((p) => p.name === refused.provider)?.displayName ?? refused.provider));
    return s;
  });
  whileSessionLoads(check);
  return check;
}

async function loadSession(): Promise<SessionState> {
  const res = await fetch('/api/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  state = res.ok ? ((await res.json()) as SessionState) : { authenticated: false, anonymousAccess: false, providers: [] };
  setCsrfToken(state.csrfToken);
  renderAccount();
  return state;
}

/** A refused single sign-on's reason and provider from the address, which no longer holds them afterwards. */
function takeRefusal(): { reason: Parameters<typeof refusalText>[0]; provider: string } | undefined {
  const url = new URL(location.href);
  const reason = url.searchParams.get('signInError');
  const provider = url.searchParams.get('provider') ?? '';
  if (reason === null) return undefined;
  url.searchParams.delete('signInError');
  url.searchParams.delete('provider');
  history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  return isSignInRefusal(reason) ? { reason, provider } : undefined;
}

/** Where a provider's button starts a sign-in: back to this page afterwards. */
function startUrl(provider: SignInProvider): string {
  const here = location.pathname + location.search + location.hash;
  return `/auth/${encodeURIComponent(provider.name)}/start?returnTo=${encodeURIComponent(here)}`;
}

/** The value of the trawl_csrf cookie (daemon/auth/browser-session.ts), if the browser has one. */
function csrfCookie(): string | undefined {
  for (const pair of document.cookie.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === 'trawl_csrf') return pair.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** Whether the pages can load data now: signed in, or anonymous access is on. */
export function canBrowse(): boolean {
  return state.authenticated || state.anonymousAccess;
}

/**
 * Shows the sign-in dialog (once, however many requests wait) and resolves true when
 * signed in. With anonymous access on it can be cancelled (false); without, the pages
 * have nothing to show until someone signs in, so it stays.
 */
export function requireSignIn(reason?: string, error?: string): Promise<boolean> {
  pending ??= new Promise<boolean>((resolve) =>
    showDialog({ reason, error }, state.anonymousAccess, (ok) => {
      pending = undefined;
      resolve(ok);
    }),
  );
  return pending;
}

/** What the API key is, after the providers' buttons when there are any ("Or paste ..."). */
function keyHelp(or: boolean): Array<string | HTMLElement> {
  return [
    or ? 'Or paste one of your API keys (' : ' Paste one of your API keys (',
    h('code', {}, 'trawl keys create'),
    ' makes one). It is exchanged for a session that ends when you close the browser; the key is not stored.',
  ];
}

/** A link per single sign-on provider ("Sign in with Corp SSO"), then what the API key is; nothing without providers. */
function providerButtons(): HTMLElement[] {
  if (state.providers.length === 0) return [];
  return [
    h(
      'div',
      { class: 'sso', role: 'group', 'aria-label': 'Single sign-on' },
      state.providers.map((p) => h('a', { class: 'sso-button', href: startUrl(p) }, `Sign in with ${p.displayName}`)),
    ),
    h('p', { class: 'sso-or', id: 'signin-key-help' }, ...keyHelp(true)),
  ];
}

function showDialog(text: { reason: string | undefined; error: string | undefined }, cancellable: boolean, done: (signedIn: boolean) => void): void {
  const reason = text.reason;
  const error = h('p', { class: 'form-error', id: 'signin-error', role: 'alert' }, text.error ?? '');
  const input = h('input', {
    id: 'signin-key',
    name: 'apiKey',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'svk_…',
    'aria-describedby': state.providers.length > 0 ? 'signin-key-help signin-error' : 'signin-help signin-error',
  });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { method: 'dialog', class: 'signin' },
    h('h2', { id: 'signin-title' }, 'Sign in to trawl'),
    state.providers.length > 0
      ? h('p', { id: 'signin-help' }, reason ?? 'This server needs you to sign in.')
      : h('p', { id: 'signin-help' }, reason ?? 'This server needs an API key.', ...keyHelp(false)),
    ...providerButtons(),
    h('label', { for: 'signin-key' }, 'API key'),
    input,
    error,
    h('div', { class: 'actions' }, cancellable ? h('button', { type: 'button', class: 'link', onclick: () => finish(false) }, 'Cancel') : null, submit),
  );
  const dialog = h('dialog', { id: 'signin', 'aria-labelledby': 'signin-title' }, form);
  const finish = (signedIn: boolean) => {
    dialog.close();
    dialog.remove();
    done(signedIn);
  };
  // Without anonymous access, Escape would leave the page without data: the dialog stays.
  dialog.addEventListener('cancel', (e) => {
    e.preventDefault();
    if (cancellable) finish(false);
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    submit.disabled = true;
    error.textContent = '';
    try {
      const res = await fetch('/api/session', { ...postJson({ apiKey: input.value.trim() }), credentials: 'same-origin' });
      const body = (await res.json()) as SessionState & { message?: string; user?: SessionUser };
      if (!res.ok) throw new ApiError(res.status, '', body.message ?? `sign-in failed (${res.status})`);
      state = {
        authenticated: true,
        anonymousAccess: state.anonymousAccess,
        providers: state.providers,
        user: body.user,
        csrfToken: body.csrfToken,
        expiresAt: body.expiresAt,
      };
      setCsrfToken(state.csrfToken);
      renderAccount();
      finish(true);
    } catch (err) {
      error.textContent = (err as Error).message;
      input.select();
    } finally {
      submit.disabled = false;
    }
  });
  document.body.append(dialog);
  dialog.showModal();
  input.focus();
}

async function signOut(): Promise<void> {
  try {
    await apiFetch('/api/session', { method: 'DELETE' }, false);
  } finally {
    setCsrfToken(undefined);
    location.reload();
  }
}

function renderAccount(): void {
  const el = document.getElementById('account');
  if (!el) return;
  clear(el);
  if (state.authenticated && state.user) {
    el.append(
      h('span', { class: 'who', title: state.user.email ?? '' }, state.user.name || state.user.email || state.user.id),
      // API keys (and, for owners, the members) are managed there (settings-page.ts).
      h('a', { href: '/settings', class: 'settings-link', 'aria-current': location.pathname === '/settings' ? 'page' : undefined }, 'Settings'),
      h('button', { type: 'button', class: 'link', onclick: () => void signOut() }, 'Sign out'),
    );
  } else if (state.anonymousAccess) {
    el.append(
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          onclick: () => void requireSignIn('Signed in, you also see the private repositories your user may see.').then((ok) => ok && location.reload()),
        },
        'Sign in',
      ),
    );
  }
}
