// A node that takes a forwarded request and never answers it fails it after the time
// limit (the caller then asks the next node able to read the repository, or answers 503),
// rather than holding the client's request for as long as the client waits.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { forward } from '../../daemon/cluster/forward.ts';
import { PeerAuth } from '../../daemon/cluster/peer-auth.ts';
import { PeerClient, PeerError } from '../../daemon/cluster/peer-client.ts';

test('a forwarded request to a node that never answers fails at its time limit', async () => {
  let received = 0;
  const hung = createServer(() => void received++);
  await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
  const peers = new PeerClient(new PeerAuth(Buffer.alloc(32, 1), 'a'));
  try {
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
    const started = performance.now();
    await assert.rejects(
      forward(peers, url, { method: 'GET', target: '/api/source?repo=r&path=a', identity: { kind: 'anonymous' } }, undefined, 300),
      (err: Error) => err instanceof PeerError && /did not answer within 300 ms/.test(err.message),
    );
    assert.equal(received, 1, 'asked once: a time limit is not retried');
    assert.ok(performance.now() - started < 10_000);
  } finally {
    peers.close();
    hung.closeAllConnections();
    await new Promise<void>((r) => hung.close(() => r()));
  }
});
