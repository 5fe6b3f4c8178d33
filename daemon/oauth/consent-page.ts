// The consent page of the authorization endpoint, and the page for requests that cannot
// go back to the client. Plain HTML, no script: the user reads who is asking and what it
// gets, and signs in with an API key (trawl has no passwords). The form posts the
// authorization request back with the key and the decision; nothing is kept between the
// two requests, so the POST is checked as fully as the GET.
//
// Why no CSRF token: approving needs the user's API key in the form, which a forged
// cross-site request cannot supply, and the code goes to the redirect URI the client
// registered, with PKCE binding it to the client that started the flow. Framing is
// refused (clickjacking) by the response headers (handlers/oauth.ts).

import { ACCESS_TOKEN_LIFETIME_MS, REFRESH_TOKEN_LIFETIME_MS } from './tokens.ts';
import type { AuthorizationRequest } from './authorize.ts';

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; color: #1b1f24; }
  h1 { font-size: 1.4rem; margin-bottom: .5rem; }
  .claim { color: #57606a; font-size: .9rem; }
  .box { border: 1px solid #d0d7de; border-radius: 6px; padding: 1rem 1.25rem; margin: 1.25rem 0; }
  label { display: block; font-weight: 600; margin-bottom: .25rem; }
  input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; font-family: ui-monospace, monospace; }
  .buttons { display: flex; gap: .75rem; margin-top: 1rem; }
  button { font: inherit; padding: .45rem 1.1rem; border-radius: 6px; border: 1px solid #d0d7de; background: #f6f8fa; cursor: pointer; }
  button.allow { background: #1f883d; border-color: #1f883d; color: #fff; }
  .error { border: 1px solid #cf222e; background: #ffebe9; border-radius: 6px; padding: .6rem 1rem; }
  code { font-family: ui-monospace, monospace; font-size: .9em; }
`;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · trawl</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** Where the browser will go: scheme and host for web and loopback addresses, the scheme of an app's own. */
function destination(uri: string): string {
  const url = new URL(uri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : `${url.protocol}//`;
}

function days(ms: number): string {
  return `${Math.round(ms / 86_400_000)} days`;
}

/** `grantLifetimeMs`: how long the consent lasts at most (settings.oauth.grantLifetimeDays), said on the page. */
export function consentPage(request: AuthorizationRequest, issuer: string, grantLifetimeMs: number, error?: string): string {
  const name = escapeHtml(request.client.name);
  const hidden = [...request.params]
    .filter(([k]) => k !== 'api_key' && k !== 'decision')
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('\n');
  return page(
    `Allow ${request.client.name}?`,
    `<h1>Allow <strong>${name}</strong> to use trawl?</h1>
<p class="claim">The name is the application's own description of itself; trawl has not verified it.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<div class="box">
<p>It will be able to <strong>search and read code</strong> on <code>${escapeHtml(issuer)}</code> as you: every repository your account can see, read-only, with your daily request limit.</p>
<p>Access lasts ${ACCESS_TOKEN_LIFETIME_MS / 3_600_000} hour at a time and is renewed for up to ${days(REFRESH_TOKEN_LIFETIME_MS)} after its last use, for at most ${days(grantLifetimeMs)}. It ends sooner when you revoke it, or the API key you enter here.</p>
<p>After you answer, your browser returns to <code>${escapeHtml(destination(request.redirectUri))}</code>.</p>
</div>
<form method="post" action="authorize">
${hidden}
<label for="api_key">Your trawl API key</label>
<input type="password" id="api_key" name="api_key" autocomplete="off" spellcheck="false" placeholder="svk_…" required autofocus aria-describedby="key-help">
<p id="key-help" class="claim">It confirms who you are and is not given to the application. <code>trawl keys create --user EMAIL</code> makes one.</p>
<div class="buttons">
<button class="allow" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`,
  );
}

export function errorPage(message: string): string {
  return page(
    'Cannot sign in',
    `<h1>This sign-in request cannot continue</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>\n<p>Start again from the application that sent you here.</p>`,
  );
}
