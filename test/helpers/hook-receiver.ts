// A receiver of watches' POSTs on loopback: answers `statuses` in turn (then 200), and
// keeps each request's headers and body.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Posted {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export async function hookReceiver(statuses: number[] = []): Promise<{ url: string; got: Posted[]; close(): Promise<void> }> {
  const got: Posted[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, close: () => new Promise((r) => server.close(() => r())) };
}
