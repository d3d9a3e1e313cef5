import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../log.js';

/** Caps open connections, so no client can spend the process's file descriptors. */
export interface ConnectionBudget {
  /**
   * Marks a connection as serving a client that proved itself (the token, or without one a whole request read):
   * it is no longer among the first to go.
   */
  trust(socket: Socket): void;
  open(): number;
}

/**
 * Keeps at most `max` connections open. When a new one arrives at the cap, the oldest connection that has not yet
 * proved itself (a valid token, or without one a whole request read) is closed to make room; only when every open
 * connection is serving someone is the newcomer closed instead. So sockets that dawdle over their headers or body
 * (which Node also reaps at `headersTimeout` / `requestTimeout`) cannot lock out a client that talks promptly.
 */
export function createConnectionBudget(server: Server, max: number, log: Logger): ConnectionBudget {
  const live = new Set<Socket>();
  /** Live sockets without an admitted request, oldest first. */
  const untrusted = new Set<Socket>();
  let warned = false;
  const drop = (socket: Socket) => {
    live.delete(socket);
    untrusted.delete(socket);
  };
  server.on('connection', (socket: Socket) => {
    if (live.size >= max) {
      if (!warned) {
        log.warn({ max }, 'connection limit reached: closing connections that have not sent a request');
        warned = true;
      }
      const oldest = untrusted.values().next();
      if (oldest.done === true) return void socket.destroy();
      drop(oldest.value);
      oldest.value.destroy();
    }
    live.add(socket);
    untrusted.add(socket);
    socket.once('close', () => {
      drop(socket);
      if (live.size < max / 2) warned = false;
    });
  });
  return {
    trust: (socket) => void untrusted.delete(socket),
    open: () => live.size,
  };
}
