import type { SessionInfo } from './session.js';

/** Who may answer an approval in the client's own form over HTTP (`approval.http_elicitation`). */
export type HttpElicitation = 'token' | 'any';

/**
 * Whether an answer in the client's own approval form (MCP elicitation) counts as a person's approval in this
 * session. Over HTTP without a token, any local program can be the client (the model's own HTTP client included)
 * and answer the form itself, so by default the form counts there only for authenticated sessions: with a token
 * configured, every HTTP request carries it and every session has a principal.
 */
export const clientFormCounts = (session: SessionInfo, httpElicitation: HttpElicitation): boolean =>
  session.transport !== 'http' || session.principal !== undefined || httpElicitation === 'any';
