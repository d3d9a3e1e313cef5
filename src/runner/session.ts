/**
 * Who a call belongs to. Approvals, grants, denials, aborts and output folders are scoped to a session:
 * the stdio process, one legacy HTTP session (Mcp-Session-Id), or for stateless modern HTTP the authenticated principal.
 */
export interface SessionInfo {
  /** Stable id of the session (uuid for stdio/legacy HTTP; derived from the principal for modern HTTP). */
  id: string;
  transport: 'stdio' | 'http' | 'cli';
  /** Authenticated principal (sha256 prefix of the bearer token), when there is one. Never the token itself. */
  principal?: string;
}
