// Who is calling, by network address: the peer of the connection, or, when the peer is a
// reverse proxy the operator trusts (settings.http.trustedProxies), the client that proxy
// reports in X-Forwarded-For. The header is believed from trusted proxies only: anyone
// else could write any address in it. Per-address limits (OAuth client registration,
// anonymous tool-server sessions) count by addressKey() of this address.

import { BlockList, isIP } from 'node:net';

export class ClientAddresses {
  private readonly trusted: BlockList | undefined;

  /** `trusted`: addresses and CIDR ranges (config/load.ts has checked them). */
  constructor(trusted: readonly string[]) {
    if (trusted.length === 0) return;
    const list = new BlockList();
    for (const entry of trusted) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) list.addAddress(address, family);
      else list.addSubnet(address, Number(prefix), family);
    }
    this.trusted = list;
  }

  /**
   * The client of a connection from `peer` (as uWS gives it) whose request carries
   * `forwardedFor` (the X-Forwarded-For header, repeated headers joined by ", "): the
   * rightmost address that is not a trusted proxy, walking from the peer leftwards through
   * the header while each hop is trusted. Without trusted proxies: the peer.
   */
  of(peer: string, forwardedFor: string | undefined): string {
    let client = normalizeAddress(peer);
    if (this.trusted === undefined || forwardedFor === undefined) return client;
    const hops = forwardedFor.split(',').map((h) => h.trim());
    while (this.isTrusted(client) && hops.length > 0) {
      const next = normalizeAddress(hops.pop()!);
      if (isIP(next) === 0) break; // not an address: the last trusted hop is as far as the chain can be believed
      client = next;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.trusted!.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}

const FULL_IPV6 = /^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$/i;
const MAPPED_PREFIX = '0000:0000:0000:0000:0000:ffff:';

/**
 * An address as one text per host: IPv4 dotted ("127.0.0.1", also for an IPv4-mapped
 * IPv6 address, which uWS reports on dual-stack sockets), IPv6 in full lower-case groups.
 * Anything else is returned trimmed.
 */
export function normalizeAddress(text: string): string {
  const t = text.trim();
  // The form uWS reports on a dual-stack socket, first: every request of a daemon listening
  // on "::" comes this way, and the general path below costs many times what this one does.
  if (FULL_IPV6.test(t)) {
    const lower = t.toLowerCase();
    if (!lower.startsWith(MAPPED_PREFIX)) return lower;
    const hi = parseInt(lower.slice(30, 34), 16);
    const lo = parseInt(lower.slice(35, 39), 16);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  if (isIP(t) !== 6) return t;
  const groups = expandIpv6(t);
  if (groups === undefined) return t.toLowerCase();
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
}

/**
 * What per-address limits count by: an IPv4 address, or the /64 an IPv6 address is in
 * (one host, or one customer of a provider, usually holds a whole /64, so counting single
 * IPv6 addresses would count nothing).
 */
export function addressKey(address: string): string {
  const a = normalizeAddress(address);
  if (isIP(a) !== 6) return a;
  return `${a.split(':').slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address ("::" and an embedded IPv4 tail allowed). */
function expandIpv6(text: string): number[] | undefined {
  let t = text.toLowerCase();
  const zone = t.indexOf('%');
  if (zone >= 0) t = t.slice(0, zone);
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(t);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    t = `${t.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left, right] = t.split('::') as [string, string | undefined];
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - head.length - tail.length;
  if (right === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
