import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type ElicitResult,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ConsoleApproval } from '../console/index.js';

/** The capabilities the client declared: per request (2026 era), else at `initialize` (2025 era). */
export function clientCapabilities(server: McpServer, ctx: ServerContext): ClientCapabilities | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (
    (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ??
    server.server.getClientCapabilities()
  );
}

/** Form mode: declared as `form`, or as an empty `elicitation` (what clients before URL mode send). */
export function declaresFormElicitation(caps: ClientCapabilities | undefined): boolean {
  const e = caps?.elicitation;
  return e !== undefined && (e.form !== undefined || e.url === undefined);
}

export const declaresUrlElicitation = (caps: ClientCapabilities | undefined): boolean =>
  caps?.elicitation?.url !== undefined;

/** What the client shows next to the link: what it is for, and that a passkey decides, not this answer. */
export const urlElicitationMessage = (a: ConsoleApproval): string =>
  `skills-mcp asks you to approve or deny running ${a.view.skill}/${a.view.script}. Open this link in the ` +
  'browser where the skills-mcp approval console is open, and decide there with your passkey. Opening it ' +
  'approves nothing.';

/** A URL-mode elicitation sent in a 2025-era request while it waits for the console. */
export interface UrlAsk {
  /** Settles when the client declines or cancels it (it withdraws the request); never on accept. */
  readonly withdrawn: Promise<'decline' | 'cancel'>;
  /** The wait is over: `done` sends `notifications/elicitation/complete` once the client accepted it; one still unanswered is withdrawn. */
  end(done: boolean): void;
}

/**
 * Sends `elicitation/create` with `mode: "url"` (the approval's secret-free link, `elicitationId` the console
 * approval's id) tied to the open tool call. Its answer approves nothing: accept only means the person opened the
 * link; decline or cancel withdraw the request.
 */
export function askUrlInRequest(ctx: ServerContext, url: string, a: ConsoleApproval): UrlAsk {
  const stop = new AbortController();
  let accepted = false;
  let withdraw!: (action: 'decline' | 'cancel') => void;
  const withdrawn = new Promise<'decline' | 'cancel'>((resolve) => (withdraw = resolve));
  void ctx.mcpReq
    .send(
      {
        method: 'elicitation/create',
        params: { mode: 'url', elicitationId: a.id, url, message: urlElicitationMessage(a) },
      },
      { signal: AbortSignal.any([ctx.mcpReq.signal, stop.signal]) },
    )
    .then(
      (r: ElicitResult) => {
        if (r.action === 'accept') accepted = true;
        else withdraw(r.action);
      },
      () => undefined,
    );
  return {
    withdrawn,
    end(done) {
      stop.abort();
      if (done && accepted)
        void ctx.mcpReq
          .notify({ method: 'notifications/elicitation/complete', params: { elicitationId: a.id } })
          .catch(() => undefined);
    },
  };
}
