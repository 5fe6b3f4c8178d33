// Open OAuth client registration under a flood (docs/security-and-faults.md, row 7): one
// address registers until it is refused (429 temporarily_unavailable, Retry-After) while
// another address still can; its refused attempts leave nothing behind; X-Forwarded-For is
// ignored unless the peer is a trusted proxy (then an IPv6 /64 counts as one address);
// clients never used are pruned by the daemon's own timer on an injected clock, so even a
// full global cap drains by itself, while a client a user consented to stays.
//
// The flood is TRAWL_FAULTS_FULL=1 ? 2000 : 100 attempts from one address.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { signLicense } from '../../daemon/auth/license.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { MAX_UNUSED_CLIENTS, REGISTRATION_WINDOW_MS, REGISTRATIONS_PER_ADDRESS, UNUSED_CLIENT_TTL_MS } from '../../daemon/oauth/clients.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const FLOOD = process.env.TRAWL_FAULTS_FULL === '1' ? 2000 : 100;
const T0 = Date.parse('2026-06-01T10:00:00Z');
const CB = 'http://127.0.0.1:5000/cb';
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const LICENSE = signLicense(
  { id: 'L-flood', licensee: 'Test Org', entitlements: ['oauth'], issuedAt: '2026-01-01T00:00:00Z', expiresAt: '2099-01-01T00:00:00Z' },
  privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

/** POST /oauth/register from a chosen loopback source address (127.0.0.0/8 is all loopback on Linux). */
function register(d: TestDaemon, from: string, headers: Record<string, string> = {}, name = 'Flood agent'): Promise<Reply> {
  const body = JSON.stringify({ client_name: name, redirect_uris: [CB], token_endpoint_auth_method: 'none' });
  const url = new URL('/oauth/register', d.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function withLicense(options: Parameters<typeof startTestDaemon>[0]): Promise<TestDaemon> {
  const d = await startTestDaemon({ ...options, config: { license: { publicKeys: [PUBLIC_PEM] } } });
  const store = openStore(d.dataDir);
  try {
    await store.putLicense(LICENSE);
  } finally {
    await store.close();
  }
  return d;
}

/** Polls `check` until it holds, for up to 30 s (a bound for a loaded machine: the daemon's timer runs every 20 ms). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  assert.ok(await check(), `${what}: not within 30 s`);
}

test("one address is refused after its share; others still register; never-used clients are pruned on the daemon's timer", async (t) => {
  let clock = T0;
  const d = await withLicense({ settings: { anonymousAccess: false }, daemon: { now: () => new Date(clock), maintenanceIntervalMs: 20 } });
  const store: Store = openStore(d.dataDir);
  try {
    await t.test('a flood from one address: its share, then 429 with Retry-After; nothing kept of the refused attempts', async () => {
      const refused: Reply[] = [];
      for (let i = 0; i < FLOOD; i++) {
        const r = await register(d, '127.0.0.2');
        if (i < REGISTRATIONS_PER_ADDRESS) assert.equal(r.status, 201, `registration ${i + 1}: ${JSON.stringify(r.json)}`);
        else refused.push(r);
      }
      assert.equal(refused.length, FLOOD - REGISTRATIONS_PER_ADDRESS);
      for (const r of refused) {
        assert.equal(r.status, 429);
        assert.equal(r.json.error, 'temporarily_unavailable');
        assert.match(r.json.error_description, /this address registered 20 clients in the last 10 minutes/);
        assert.equal(r.headers['retry-after'], String(REGISTRATION_WINDOW_MS / 1000), 'all registrations were at one instant of the clock');
        assert.equal(r.headers['cache-control'], 'no-store');
      }
      assert.equal(await store.oauth.countClients(), REGISTRATIONS_PER_ADDRESS, 'refused attempts leave no client behind');
      t.diagnostic(`${FLOOD} registration attempts from one address: ${REGISTRATIONS_PER_ADDRESS} clients`);
    });

    await t.test('another address still registers; a forged X-Forwarded-For is not believed', async () => {
      assert.equal((await register(d, '127.0.0.3')).status, 201);
      const forged = await register(d, '127.0.0.2', { 'x-forwarded-for': '198.51.100.77' });
      assert.equal(forged.status, 429, 'without a trusted proxy the header changes nothing');
    });

    await t.test('the window moves on the clock', async () => {
      clock += REGISTRATION_WINDOW_MS - 1000;
      const r = await register(d, '127.0.0.2');
      assert.equal(r.status, 429);
      assert.equal(r.headers['retry-after'], '1', 'one second left of the window');
      clock += 1000;
      assert.equal((await register(d, '127.0.0.2')).status, 201, 'the first registrations left the window');
    });

    await t.test('clients never used are pruned on the timer; a client a user consented to stays', async () => {
      // A user consents to one client of the flood's: a code now ties it to a use.
      const lines: string[] = [];
      const io = { out: (l: string) => void lines.push(l), err: () => {}, now: () => new Date(clock) };
      await usersCommand(['add', '--email', 'dev@example.com', '--data-dir', d.dataDir], io);
      await keysCommand(['create', '--user', 'dev@example.com', '--data-dir', d.dataDir], io);
      const key = lines.at(-1)!;
      const used = await register(d, '127.0.0.4', {}, 'Used agent');
      assert.equal(used.status, 201);
      const verifier = randomBytes(32).toString('base64url');
      const params = new URLSearchParams({
        response_type: 'code',
        client_id: used.json.client_id,
        redirect_uri: CB,
        state: 's',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        decision: 'allow',
        api_key: key,
      });
      const consent = await fetch(`${d.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: params.toString(),
      });
      assert.equal(consent.status, 303);
      assert.match(consent.headers.get('location') ?? '', /[?&]code=svoc_/);

      const before = await store.oauth.countClients();
      assert.equal(before, REGISTRATIONS_PER_ADDRESS + 3);
      // Nothing is old enough yet: the first ones were registered 10 minutes ago.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(await store.oauth.countClients(), before, 'younger than the time to live: kept');
      clock = T0 + UNUSED_CLIENT_TTL_MS + 1;
      // Those of the flood and the other address's, registered at T0.
      await eventually("the flood's clients are pruned", async () => (await store.oauth.countClients()) === before - REGISTRATIONS_PER_ADDRESS - 1);
      clock += REGISTRATION_WINDOW_MS + 1;
      await eventually('every never-used client is pruned', async () => (await store.oauth.countClients()) === 1);
      assert.ok(await store.oauth.getClient(used.json.client_id), 'the client a user consented to stays');
    });
  } finally {
    await store.close();
    await d.cleanup();
  }
});

test('a full global cap refuses everyone with 503 and drains by itself; behind a trusted proxy the forwarded address counts, an IPv6 /64 as one', async () => {
  let clock = T0;
  const d = await withLicense({
    settings: { anonymousAccess: false, http: { trustedProxies: ['127.0.0.1'] } },
    daemon: { now: () => new Date(clock), maintenanceIntervalMs: 20 },
  });
  const store: Store = openStore(d.dataDir);
  try {
    const via = (forwarded: string) => register(d, '127.0.0.1', { 'x-forwarded-for': forwarded });
    for (let i = 0; i < REGISTRATIONS_PER_ADDRESS; i++) assert.equal((await via(`2001:db8:aa:bb::${(i + 1).toString(16)}`)).status, 201);
    const sameNet = await via('2001:db8:aa:bb:ffff:1:2:3');
    assert.equal(sameNet.status, 429, 'another address of the same /64 is the same client');
    assert.equal((await via('2001:db8:aa:bc::1')).status, 201, 'the next /64 is another');
    assert.equal((await via('198.51.100.7, 203.0.113.50')).status, 201, 'the rightmost hop the proxy added');
    // The proxy itself (no header) is one more address.
    assert.equal((await register(d, '127.0.0.1')).status, 201);

    // Many addresses together fill the cap of clients never used (filled here directly:
    // MAX_UNUSED_CLIENTS registrations over HTTP would only take longer).
    const fill = MAX_UNUSED_CLIENTS - (await store.oauth.countClients());
    for (let i = 0; i < fill; i++) await store.oauth.createClient({ name: `filler ${i}`, redirectUris: [CB], metadata: {} }, new Date(clock).toISOString());
    const full = await via('192.0.2.1');
    assert.equal(full.status, 503);
    assert.equal(full.json.error, 'temporarily_unavailable');
    assert.equal(full.headers['retry-after'], '60');
    clock += UNUSED_CLIENT_TTL_MS + 1;
    await eventually('the cap drains once the unused clients are pruned', async () => (await store.oauth.countClients()) === 0);
    assert.equal((await via('192.0.2.1')).status, 201);
  } finally {
    await store.close();
    await d.cleanup();
  }
});
