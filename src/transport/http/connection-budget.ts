import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../../log.js';
import { createThrottledWarn } from './throttled-warn.js';

/** Caps open connections, so no client can spend the process's file descriptors. */
export interface ConnectionBudget {
  /**
   * Marks a connection as serving `client` (the token's principal, or without a token the peer address), which
   * proved itself (the token, or without one a whole request read): it is no longer among the first to go.
   */
  trust(socket: Socket, client: string): void;
  open(): number;
}

/**
 * Keeps at most `max` connections open. When a new one arrives at the cap, the oldest connection that has not yet
 * proved itself (a valid token, or without one a whole request read) is closed to make room, so sockets that dawdle
 * over their headers or body (which Node also reaps at `headersTimeout` / `requestTimeout`) cannot lock out a client
 * that talks promptly. When every open connection serves someone, the oldest connection of the client holding the
 * most is closed instead: at the cap, the biggest holder makes room. And no client holds more than three quarters
 * of the cap: past that, its own oldest connection is closed.
 */
export function createConnectionBudget(server: Server, max: number, log: Logger): ConnectionBudget {
  const live = new Set<Socket>();
  /** Live sockets without an admitted request, oldest first. */
  const untrusted = new Set<Socket>();
  /** Each client's trusted sockets, oldest first; and whose each socket is. */
  const byClient = new Map<string, Set<Socket>>();
  const owner = new Map<Socket, string>();
  /** The most connections one client may hold. */
  const share = Math.max(1, Math.floor((max * 3) / 4));
  let warned = false;
  const warnShare = createThrottledWarn(log);
  /** The oldest connection of the client holding the most. */
  const biggestHoldersOldest = (): Socket | undefined => {
    let most: Set<Socket> | undefined;
    for (const held of byClient.values()) if (held.size > (most?.size ?? 0)) most = held;
    return most?.values().next().value;
  };
  const disown = (socket: Socket) => {
    const client = owner.get(socket);
    if (client === undefined) return;
    owner.delete(socket);
    const held = byClient.get(client);
    held?.delete(socket);
    if (held?.size === 0) byClient.delete(client);
  };
  const drop = (socket: Socket) => {
    live.delete(socket);
    untrusted.delete(socket);
    disown(socket);
  };
  server.on('connection', (socket: Socket) => {
    if (live.size >= max) {
      if (!warned) {
        log.warn(
          { max },
          'connection limit reached: closing connections that have not sent a request, else those of the client holding the most',
        );
        warned = true;
      }
      const victim = untrusted.values().next().value ?? biggestHoldersOldest();
      if (victim === undefined) return void socket.destroy();
      drop(victim);
      victim.destroy();
    }
    live.add(socket);
    untrusted.add(socket);
    socket.once('close', () => {
      drop(socket);
      if (live.size < max / 2) warned = false;
    });
  });
  return {
    trust: (socket, client) => {
      if (!live.has(socket) || owner.get(socket) === client) return;
      untrusted.delete(socket);
      disown(socket);
      owner.set(socket, client);
      let held = byClient.get(client);
      if (held === undefined) byClient.set(client, (held = new Set()));
      held.add(socket);
      if (held.size <= share) return;
      const oldest = held.values().next().value!;
      drop(oldest);
      oldest.destroy();
      warnShare(
        { client, share },
        'a client holds its share of the connection limit: closing its oldest connection',
      );
    },
    open: () => live.size,
  };
}
