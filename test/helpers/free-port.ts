import { createServer } from 'node:net';

/** A loopback port free a moment ago: for an address (a token audience, a balancer) needed before a server starts. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
