// Serves the web UI (server.ts calls this for GET/HEAD outside /api/ that no route takes):
//   /-/static/<name>.<hash>.<ext>   bundled assets, cached for good, gzipped when accepted
//   /robots.txt                     keeps crawlers out of private code
//   any other path, asked for as HTML: the shell page (the script routes on the path)
// Anything else is a 404 (undefined). The shell forbids framing and allows scripts and
// styles from this origin only, so even a markup bug cannot run injected script. The one
// exception is a nonce, new for every shell served: the code viewer (CodeMirror) writes its
// own <style> elements, and carries the nonce the page was served with (web/app/csp.ts)
// instead of the policy allowing every inline style.

import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { WebResponse } from '../http/server.ts';
import { buildAssets, type WebAssets } from './assets.ts';
import { shellHtml } from './shell.ts';

function shellHeaders(nonce: string): Array<[string, string]> {
  return [
    ['Content-Type', 'text/html; charset=utf-8'],
    // The nonce makes every copy different: none may be stored.
    ['Cache-Control', 'no-store'],
    [
      'Content-Security-Policy',
      `default-src 'none'; script-src 'self'; style-src 'self' 'nonce-${nonce}'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    ],
    ['X-Frame-Options', 'DENY'],
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'same-origin'],
    ['Vary', 'Accept-Encoding'],
  ];
}

export interface WebUi {
  handle(url: string, headers: Record<string, string>): Promise<WebResponse | undefined>;
}

/**
 * Built on the first page asked for, not at start-up (a daemon used only through the API
 * never runs esbuild), and once per process (test processes start many daemons).
 */
const builds = new Map<string, Promise<WebAssets>>();

export function webUi(root: string, onError: (err: Error) => void): WebUi {
  const assets = (): Promise<WebAssets> => {
    let b = builds.get(root);
    if (!b) {
      b = buildAssets(root);
      builds.set(root, b);
      b.catch((err: Error) => {
        builds.delete(root); // the next request tries again (sources fixed meanwhile)
        onError(err);
      });
    }
    return b;
  };
  return {
    async handle(url, headers) {
      if (url === '/robots.txt') return { status: 200, body: 'User-agent: *\nDisallow: /\n', headers: [['Content-Type', 'text/plain; charset=utf-8']] };
      // Browsers find the icon through the shell's link; crawlers' well-known files are not ours.
      if (url.startsWith('/.well-known/') || url === '/favicon.ico') return undefined;
      const asset = url.startsWith('/-/');
      // A client that does not take HTML gets the 404 without waiting for a build.
      if (!asset && !/text\/html|\*\/\*/.test(headers.accept ?? '*/*')) return undefined;
      const built = await assets();
      const gzip = /\bgzip\b/.test(headers['accept-encoding'] ?? '');
      if (asset) {
        const a = built.byPath.get(url);
        if (!a) return undefined;
        const common: Array<[string, string]> = [
          ['Content-Type', a.type],
          ['Cache-Control', 'public, max-age=31536000, immutable'],
          ['ETag', a.etag],
          ['Vary', 'Accept-Encoding'],
          ['X-Content-Type-Options', 'nosniff'],
        ];
        if (headers['if-none-match'] === a.etag) return { status: 304, body: '', headers: common };
        return gzip ? { status: 200, body: a.gzip, headers: [...common, ['Content-Encoding', 'gzip']] } : { status: 200, body: a.body, headers: common };
      }
      const nonce = randomBytes(16).toString('base64');
      const html = Buffer.from(shellHtml(built, nonce));
      // About a kilobyte: compressing it per request costs microseconds.
      return gzip
        ? { status: 200, body: gzipSync(html), headers: [...shellHeaders(nonce), ['Content-Encoding', 'gzip']] }
        : { status: 200, body: html, headers: shellHeaders(nonce) };
    },
  };
}
