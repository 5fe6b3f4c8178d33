// A browser's part in a sign-in flow, without a browser: follows redirects from one site to
// the next (trawl, the provider, back), keeping each site's cookies as a browser would
// (per origin and path; Max-Age=0 drops one), so that a test sees every hop and can change
// an address on the way (tampering) or send one again (a replay).

export interface Hop {
  url: string;
  /** The Cookie header sent with it ('' when none). */
  cookie: string;
  status: number;
  location?: string;
}

interface Cookie {
  origin: string;
  name: string;
  value: string;
  path: string;
}

export class CookieJar {
  readonly #cookies: Cookie[] = [];

  /** Takes a response's Set-Cookie headers for `url`. */
  take(url: string, headers: Headers): void {
    const origin = new URL(url).origin;
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((p) => p.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      const attr = (key: string) => attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
      const path = attr('path') ?? '/';
      const at = this.#cookies.findIndex((c) => c.origin === origin && c.name === name && c.path === path);
      if (at >= 0) this.#cookies.splice(at, 1);
      if (attr('max-age') !== '0' && value !== '') this.#cookies.push({ origin, name, value, path });
    }
  }

  /** The Cookie header a browser sends to `url`. */
  header(url: string): string {
    const u = new URL(url);
    return this.#cookies
      .filter((c) => c.origin === u.origin && u.pathname.startsWith(c.path))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  get(url: string, name: string): string | undefined {
    const origin = new URL(url).origin;
    return this.#cookies.find((c) => c.origin === origin && c.name === name)?.value;
  }
}

/** One GET as a browser navigation: the jar's cookies, no redirect followed. */
export async function navigate(url: string, jar: CookieJar, cookie = jar.header(url)): Promise<Hop & { res: Response }> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
  jar.take(url, res.headers);
  await res.arrayBuffer();
  const location = res.headers.get('location') ?? undefined;
  return { url, cookie, status: res.status, ...(location === undefined ? {} : { location: new URL(location, url).href }), res };
}

/**
 * Follows redirects from `start` until one leads to an address `done` accepts (which is
 * not requested), or a response is not a redirect. `rewrite` may change each address
 * before it is requested. Returns every hop, and the address it stopped at.
 */
export async function walk(
  start: string,
  jar: CookieJar,
  options: { done: (url: string) => boolean; rewrite?: (url: string) => string; maxHops?: number },
): Promise<{ hops: Hop[]; end: string; last: Response }> {
  const hops: Hop[] = [];
  let url = start;
  for (let i = 0; i < (options.maxHops ?? 12); i++) {
    const hop = await navigate(options.rewrite ? options.rewrite(url) : url, jar);
    const { res, ...rest } = hop;
    hops.push(rest);
    if (hop.location === undefined || options.done(hop.location)) return { hops, end: hop.location ?? hop.url, last: res };
    url = hop.location;
  }
  throw new Error(`no end after ${options.maxHops ?? 12} redirects: ${hops.map((h) => h.url).join(' -> ')}`);
}
