import type { SessionInfo } from '../../runner/session.js';

/** The session of modern (stateless) requests that carry no token: only possible on a loopback bind. */
export const ANONYMOUS_HTTP_SESSION = 'http-anonymous';

/**
 * Maps an HTTP request to the session its approvals, grants and outputs belong to.
 * - Legacy era: one session per `Mcp-Session-Id` (the uuid the server handed out at `initialize`).
 * - Modern era (stateless): the principal, i.e. everyone presenting the same token shares `http-<principal>`;
 *   without a token (loopback only) all requests share `http-anonymous`.
 */
export function httpSession(principal: string | undefined, legacySessionId?: string): SessionInfo {
  const id = legacySessionId ?? (principal === undefined ? ANONYMOUS_HTTP_SESSION : `http-${principal}`);
  return principal === undefined ? { id, transport: 'http' } : { id, transport: 'http', principal };
}

/** Why an HTTP session ended, as the audit log records it. */
export type SessionEndReason = 'client_closed' | 'signal' | 'shutdown' | 'error';

/** Told when a session ends (legacy: DELETE, idle expiry, shutdown; modern principals: shutdown). */
export type SessionEndListener = (session: SessionInfo, reason: SessionEndReason) => void | Promise<void>;
