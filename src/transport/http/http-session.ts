import type { Caller } from '../../gate/caller.js';
import type { SessionInfo } from '../../runner/session.js';

/** The session of modern (stateless) requests that carry no token: only possible on a loopback bind. */
export const ANONYMOUS_HTTP_SESSION = 'http-anonymous';

/**
 * Maps an HTTP request to the session its approvals, grants and outputs belong to.
 * - Legacy era: one session per `Mcp-Session-Id` (the uuid the server handed out at `initialize`).
 * - Modern era (stateless): the principal, i.e. everyone presenting the same static token, or the same signed-in
 *   caller (issuer and subject) with any of their tokens, shares `http-<principal>`; without a token (loopback
 *   only) all requests share `http-anonymous`. Marked `shared`: every replica serves the same id.
 */
export function httpSession(
  principal: string | undefined,
  legacySessionId?: string,
  caller?: Caller,
): SessionInfo {
  const id = legacySessionId ?? (principal === undefined ? ANONYMOUS_HTTP_SESSION : `http-${principal}`);
  const shared = legacySessionId === undefined ? { shared: true as const } : {};
  if (principal === undefined) return { id, transport: 'http', ...shared };
  return caller === undefined
    ? { id, transport: 'http', principal, ...shared }
    : { id, transport: 'http', principal, caller, ...shared };
}

/** Why an HTTP session ended, as the audit log records it. */
export type SessionEndReason = 'client_closed' | 'signal' | 'shutdown' | 'error';

/** Told when a session ends (legacy: DELETE, idle expiry, shutdown; modern principals: shutdown). */
export type SessionEndListener = (session: SessionInfo, reason: SessionEndReason) => void | Promise<void>;
