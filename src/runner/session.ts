import type { Caller } from '../gate/caller.js';

/**
 * Who a call belongs to. Approvals, grants, denials, aborts and output folders are scoped to a session:
 * the stdio process, one legacy HTTP session (Mcp-Session-Id), or for stateless modern HTTP the authenticated principal.
 */
export interface SessionInfo {
  /** Stable id of the session (uuid for stdio/legacy HTTP; derived from the principal for modern HTTP). */
  id: string;
  transport: 'stdio' | 'http' | 'cli';
  /**
   * Authenticated principal, when there is one: a sha256 prefix of the static bearer token, or with OAuth one of
   * the issuer and subject. Never the token itself.
   */
  principal?: string;
  /** The signed-in caller (OAuth), whose principal this is. */
  caller?: Caller;
  /**
   * The id names the same session in every server process (a modern-era principal): in a log shared by replicas,
   * each records it under an audit session of its own (`<id>.<random>`), so that none starts, or closes, another's.
   */
  shared?: true;
}
