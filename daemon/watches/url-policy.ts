// Where a watch may POST. A member names the URL, and the daemon makes the request from
// inside the network: unless settings.watches.allowPrivateUrls says otherwise, loopback,
// private, link-local and other non-public addresses are refused, both when the watch is
// made (an address written in the URL, "localhost") and when it is delivered (what the name
// resolves to then, checked in the connection's own lookup, so a name cannot be made to
// point inside between the check and the connection).

import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { ServiceError } from '../errors.ts';

export const MAX_URL_LENGTH = 2048;

const inside = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  inside.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  inside.addSubnet(net, bits, 'ipv6');

/** Whether an address is one a watch may not reach without allowPrivateUrls. */
export function privateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return inside.check(mapped, 'ipv4');
  return inside.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL, checked for a watch: http or https, no credentials in it, not inside the network (unless allowed). */
export function checkWatchUrl(text: string, allowPrivate: boolean): URL {
  const bad = (why: string) => new ServiceError('INVALID_REQUEST_BODY', `url ${why}`);
  if (text.length > MAX_URL_LENGTH) throw bad(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad(`is not a URL: ${JSON.stringify(text.slice(0, 100))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(`must be http or https, got ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '') throw bad('must not hold a user name or password (the deliveries are signed)');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && privateAddress(host)))
      throw bad(`points inside the network (${host}): refused unless settings.watches.allowPrivateUrls is true`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The lookup of a delivery's connection: refuses a name that resolves inside the network (unless allowed). */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!allowPrivate) {
        const blocked = list.find((a) => privateAddress(a.address));
        if (blocked) {
          const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${blocked.address}, inside the network: refused`);
          refused.code = 'EWATCHPRIVATE';
          return callback(refused, []);
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
