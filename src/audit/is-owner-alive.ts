import { isProcessAlive } from '../is-process-alive.js';

/** The server process that owns a session, as recorded in `session_started`. */
export interface SessionOwner {
  pid: number;
  host: string;
}

/**
 * Default liveness check for recovery: a session is live when its owner runs on this host and still exists
 * (signal 0 succeeds, or fails with EPERM), or is this very process. A session from another host is assumed
 * live: we cannot tell. A recycled pid only delays recovery of that session to a later start.
 */
export function isOwnerAlive(owner: SessionOwner, self: SessionOwner): boolean {
  if (owner.host !== self.host) return true;
  return owner.pid === self.pid || isProcessAlive(owner.pid);
}
