// A loopback port no one listens on now, for a server started beside trawl (the private
// Redis and PostgreSQL of the tests and of the benchmark's cluster phase). Another process
// may take it before the server binds it: callers retry on a new one.

import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
