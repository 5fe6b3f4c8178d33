// The one HTML document of the web UI: the header, an empty main region and the script,
// which reads the address and draws the page (web/app/main.ts). It holds no data, so it is
// the same for everyone and needs no credentials, except for the style nonce of this copy
// (handler.ts), on the script element where web/app/csp.ts reads it.

import type { WebAssets } from './assets.ts';

export function shellHtml(assets: WebAssets, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>trawl</title>
<link rel="icon" type="image/svg+xml" href="${assets.icon.path}">
<link rel="stylesheet" href="${assets.style.path}">
<script type="module" src="${assets.script.path}" nonce="${nonce}"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="logo" href="/" aria-label="trawl: new search"><img src="${assets.icon.path}" alt="" width="22" height="22"> trawl</a>
<div id="search-slot" class="search-slot"></div>
<div id="account" class="account"></div>
</header>
<main id="main" tabindex="-1"><noscript><p>trawl's pages need JavaScript. The HTTP API does not: see <a href="/api/openapi.json">/api/openapi.json</a>.</p></noscript></main>
</body>
</html>
`;
}
