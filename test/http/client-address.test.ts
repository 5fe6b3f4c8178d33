// Who the client is (daemon/http/client-address.ts): the peer as uWS reports it (IPv4, or
// IPv4-mapped and full-form IPv6 on dual-stack sockets), X-Forwarded-For believed from
// trusted proxies only, and the key per-address limits count by (an IPv6 /64 as one).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressKey, ClientAddresses, normalizeAddress } from '../../daemon/http/client-address.ts';

test('addresses are normalized: IPv4-mapped IPv6 is IPv4, IPv6 in full lower-case groups', () => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', '127.0.0.1'],
    [' 10.0.0.7 ', '10.0.0.7'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0002', '127.0.0.2'],
    ['::ffff:192.0.2.9', '192.0.2.9'],
    ['0000:0000:0000:0000:0000:FFFF:CB00:7107', '203.0.113.7'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:0db8:0000:0000:0000:0000:0000:0001'],
    ['::1', '0000:0000:0000:0000:0000:0000:0000:0001'],
    ['2001:DB8::1', '2001:0db8:0000:0000:0000:0000:0000:0001'],
    ['2001:db8:0:0:1:2:3:4', '2001:0db8:0000:0000:0001:0002:0003:0004'],
    ['fe80::1%eth0', 'fe80:0000:0000:0000:0000:0000:0000:0001'],
    ['not an address', 'not an address'],
  ];
  for (const [input, expected] of cases) assert.equal(normalizeAddress(input), expected, input);
});

test('the limit key: an IPv4 address, or the /64 of an IPv6 one', () => {
  assert.equal(addressKey('203.0.113.7'), '203.0.113.7');
  assert.equal(addressKey('0000:0000:0000:0000:0000:ffff:cb00:7107'), '203.0.113.7');
  assert.equal(addressKey('2001:db8:1:2::1'), '2001:0db8:0001:0002::/64');
  assert.equal(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), addressKey('2001:db8:1:2::1'), 'one /64, one key');
  assert.notEqual(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'), 'the next /64 is another');
});

test('X-Forwarded-For is believed from trusted proxies only, hop by hop from the right', () => {
  const none = new ClientAddresses([]);
  assert.equal(none.of('127.0.0.1', '203.0.113.7'), '127.0.0.1', 'no trusted proxy: the header is ignored');
  const trusted = new ClientAddresses(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
  assert.equal(trusted.of('127.0.0.1', undefined), '127.0.0.1');
  assert.equal(trusted.of('127.0.0.1', '203.0.113.7'), '203.0.113.7');
  assert.equal(trusted.of('0000:0000:0000:0000:0000:ffff:7f00:0001', '203.0.113.7'), '203.0.113.7', 'the peer as a dual-stack socket reports it');
  assert.equal(trusted.of('127.0.0.1', '198.51.100.1, 203.0.113.7, 10.2.3.4'), '203.0.113.7', 'the rightmost untrusted hop');
  assert.equal(trusted.of('127.0.0.1', 'forged, 203.0.113.7'), '203.0.113.7', 'what the client wrote left of it is not read');
  assert.equal(trusted.of('127.0.0.1', '10.9.9.9, 10.2.3.4'), '10.9.9.9', 'every hop trusted: the leftmost');
  assert.equal(trusted.of('127.0.0.1', 'garbage'), '127.0.0.1', 'not an address: the last trusted hop');
  assert.equal(trusted.of('127.0.0.1', '2001:db8::5'), '2001:0db8:0000:0000:0000:0000:0000:0005');
  assert.equal(trusted.of('fd00::1', '203.0.113.9'), '203.0.113.9', 'an IPv6 range');
  assert.equal(trusted.of('192.0.2.1', '203.0.113.7'), '192.0.2.1', 'an untrusted peer: its header is ignored');
});
