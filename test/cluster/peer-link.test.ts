// The coordinator's side of a link between nodes (cluster/peer-link.ts) against a fake
// node (a WebSocket server on loopback that answers as each case needs): what a part hears
// when the node answers, stays silent, is merely slow, wedges after answering, refuses the
// link or drops it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { ALIVE_MS, bodies, FIRST_ANSWER_MS, frame, KIND, readFrame, type PartRequest } from '../../daemon/cluster/link-frames.ts';
import { PeerAuth } from '../../daemon/cluster/peer-auth.ts';
import { PeerLinks, type PartHandlers } from '../../daemon/cluster/peer-link.ts';
import type { TaskParams } from '../../daemon/search/merge.ts';

type Behaviour = 'end' | 'silent' | 'alive-then-end' | 'alive-then-wedge' | 'answer-others' | 'drop' | 'alive-ends-on-stop' | 'alive-ignores-stop';

/** A fake node: each connection behaves as its first part's first unit says. */
let server: WebSocketServer;
let base: string;
const secret = Buffer.alloc(32, 7);
const auth = new PeerAuth(secret, 'coordinator');
const checker = new PeerAuth(secret, 'fake');

before(async () => {
  server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    verifyClient: (info, done) => {
      try {
        checker.check('GET', '/_cluster/link', info.req.headers as Record<string, string>);
        done(true);
      } catch {
        done(false, 401, 'Unauthorized');
      }
    },
  });
  await new Promise<void>((r) => server.once('listening', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on('connection', (ws: WebSocket) => {
    let behaviour: Behaviour | undefined;
    ws.on('message', (data: Buffer) => {
      const f = readFrame(data);
      if (f.kind === KIND.CONTROL && behaviour === 'alive-ends-on-stop') ws.send(frame(KIND.END, f.id));
      if (f.kind !== KIND.SEARCH) return;
      behaviour ??= (bodies.unpack(f.payload) as PartRequest).units[0]!.file as Behaviour;
      if (behaviour === 'end') ws.send(frame(KIND.END, f.id));
      if (behaviour === 'alive-then-end') {
        // As a node does (link-server.ts): ALIVE every ALIVE_MS while the part runs.
        ws.send(frame(KIND.ALIVE, f.id));
        const alive = setInterval(() => ws.send(frame(KIND.ALIVE, f.id)), ALIVE_MS);
        setTimeout(() => {
          clearInterval(alive);
          ws.send(frame(KIND.END, f.id));
        }, FIRST_ANSWER_MS + 500);
      }
      // Alive once, then nothing more of the part, while the link goes on carrying others'.
      if (behaviour === 'alive-then-wedge') {
        ws.send(frame(KIND.ALIVE, f.id));
        const others = setInterval(() => ws.send(frame(KIND.ALIVE, f.id + 1000)), ALIVE_MS);
        ws.on('close', () => clearInterval(others));
      }
      // Answers something on the link, but never for this part.
      if (behaviour === 'answer-others') ws.send(frame(KIND.END, f.id + 1000));
      if (behaviour === 'drop') setTimeout(() => ws.terminate(), 200);
      if (behaviour === 'alive-ends-on-stop' || behaviour === 'alive-ignores-stop') ws.send(frame(KIND.ALIVE, f.id));
    });
  });
});

after(() => new Promise<void>((r) => server.close(() => r())));

const TASK = {} as TaskParams;

/** Sends a part whose first unit names the fake's behaviour (told to stop after `stopAfterMs`); resolves with how it ended and when. */
function part(links: PeerLinks, behaviour: Behaviour, url = base, stopAfterMs?: number): Promise<{ why: string | undefined; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const handlers: PartHandlers = {
      reply: () => {},
      partial: () => {},
      ended: (why) => resolve({ why, ms: performance.now() - t0 }),
    };
    const sent = links.to(url).search(TASK, [{ repoId: 1, file: behaviour }], handlers);
    if (stopAfterMs !== undefined) setTimeout(() => sent.control('stop'), stopAfterMs);
  });
}

describe('peer links', { concurrency: true }, () => {
  test('a part the node ends is ended without a reason', async () => {
    const links = new PeerLinks(auth);
    const { why } = await part(links, 'end');
    assert.equal(why, undefined);
    links.close();
  });

  test('a node that sends nothing: the part fails after FIRST_ANSWER_MS and the link is closed', async () => {
    const links = new PeerLinks(auth);
    const first = links.to(base);
    const { why, ms } = await part(links, 'silent');
    assert.match(why!, /sent nothing within 2000 ms/);
    assert.ok(ms >= FIRST_ANSWER_MS - 50 && ms < FIRST_ANSWER_MS + 1000, `${ms} ms`);
    assert.equal(first.closed, true);
    assert.notEqual(links.to(base), first, 'dialled again on next use');
    links.close();
  });

  test('a node that says it is alive is waited for past FIRST_ANSWER_MS', async () => {
    const links = new PeerLinks(auth);
    const { why, ms } = await part(links, 'alive-then-end');
    assert.equal(why, undefined);
    assert.ok(ms >= FIRST_ANSWER_MS + 400, `${ms} ms`);
    links.close();
  });

  test('a part that goes silent after its first frame fails FIRST_ANSWER_MS after it; the link stays', async () => {
    const links = new PeerLinks(auth);
    const link = links.to(base);
    const { why, ms } = await part(links, 'alive-then-wedge');
    assert.match(why!, /sent nothing more of its part within 2000 ms/);
    assert.ok(ms >= FIRST_ANSWER_MS - 50 && ms < FIRST_ANSWER_MS + 1000, `${ms} ms`);
    assert.equal(link.closed, false);
    links.close();
  });

  test('a node that answers other things but not the part: the part fails, the link stays', async () => {
    const links = new PeerLinks(auth);
    const link = links.to(base);
    const { why } = await part(links, 'answer-others');
    assert.match(why!, /did not start answering within 2000 ms/);
    assert.equal(link.closed, false);
    links.close();
  });

  test('a part told to stop ends when the node ends it', async () => {
    const links = new PeerLinks(auth);
    const { why, ms } = await part(links, 'alive-ends-on-stop', base, 100);
    assert.equal(why, undefined);
    assert.ok(ms < FIRST_ANSWER_MS, `${ms} ms`);
    links.close();
  });

  test('a part told to stop that the node never ends is given up FIRST_ANSWER_MS later', async () => {
    const links = new PeerLinks(auth);
    const { why, ms } = await part(links, 'alive-ignores-stop', base, 100);
    assert.match(why!, /did not end its part within 2000 ms of being told to stop/);
    assert.ok(ms >= FIRST_ANSWER_MS + 50 && ms < FIRST_ANSWER_MS + 1100, `${ms} ms`);
    links.close();
  });

  test('a node that refuses the credential: the part fails naming the refusal', async () => {
    const links = new PeerLinks(new PeerAuth(Buffer.alloc(32, 9), 'stranger'));
    const { why } = await part(links, 'end');
    assert.match(why!, /refused the link \(401/);
    links.close();
  });

  test('a node that cannot be reached: the part fails at once', async () => {
    const links = new PeerLinks(auth);
    const { why, ms } = await part(links, 'end', 'http://127.0.0.1:9');
    assert.match(why!, /cannot be reached|closed/);
    assert.ok(ms < FIRST_ANSWER_MS, `${ms} ms`);
    links.close();
  });

  test('a link dropped by the node fails its parts in flight', async () => {
    const links = new PeerLinks(auth);
    const { why, ms } = await part(links, 'drop');
    assert.match(why!, /closed/);
    assert.ok(ms < FIRST_ANSWER_MS, `${ms} ms`);
    links.close();
  });
});
