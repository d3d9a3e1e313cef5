import {
  CLIENT_INFO_META_KEY,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type Implementation,
  type InputRequiredResult,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { approvalSchema, type ApprovalAnswer } from '../approvals/approval-request.js';
import { askInRequest } from './ask-in-request.js';
import { assertRunScope, callerOf } from './auth-info.js';
import type { CallResult } from '../runner/call-result.js';
import { clientFormCounts } from '../runner/client-form-counts.js';
import type { CallRequest } from '../runner/call-request.js';
import type { CallContext, Runner } from '../runner/runner-types.js';
import { consoleCall, withdrawnByRetry, type UrlMode } from './console-call.js';
import { clientCapabilities, declaresFormElicitation, declaresUrlElicitation } from './url-elicitation.js';
import { sessionFormRevision } from './form-revision.js';
import type { ServerDeps } from './server-deps.js';
import { mimeTypeOf } from './skill-uri.js';
import { toolError } from './tool-error.js';
import { SkillsError } from '../errors.js';

/** The per-connection bits a gated call needs besides the request. */
export interface GateBridge {
  server: McpServer;
  /** `via: 'url'`: the round trip carried a URL elicitation, whose answer never approves. */
  mintState: (callId: string, ctx: ServerContext, via?: 'url') => Promise<string>;
}

/** `skill-run://<call>/<path>`: an artifact of a run, readable by the session that made the call. */
export const runUri = (callId: string, path: string): string =>
  `skill-run://${callId}/${path.split('/').map(encodeURIComponent).join('/')}`;

const EMBED_TEXT_BYTES = 32 * 1024;

const canElicit = (server: McpServer, ctx: ServerContext): boolean =>
  declaresFormElicitation(clientCapabilities(server, ctx));

/** The name and version the client gave itself, as sent (its own words: only for messages, never decisions). */
function clientOf(server: McpServer, ctx: ServerContext): string | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const info =
    (envelope?.[CLIENT_INFO_META_KEY] as Implementation | undefined) ?? server.server.getClientVersion();
  if (typeof info?.name !== 'string') return undefined;
  const named = typeof info.version === 'string' ? `${info.name} ${info.version}` : info.name;
  return named.replace(/[^\x20-\x7e]/g, '').slice(0, 80) || undefined;
}

/**
 * Whether to point the client at the console approval with a URL elicitation: it declared URL mode, elicitation is
 * not turned off, and approving in the console needs a passkey (so the link is useless without it).
 */
function urlMode(
  deps: ServerDeps,
  b: GateBridge,
  ctx: ServerContext,
  passkeysEnrolled: boolean,
): UrlMode | undefined {
  if (!deps.config.elicitation || !passkeysEnrolled) return undefined;
  if (!declaresUrlElicitation(clientCapabilities(b.server, ctx))) return undefined;
  return isLegacyRequest(ctx)
    ? { era: 'legacy' }
    : { era: 'modern', mint: (callId) => b.mintState(callId, ctx, 'url') };
}

/** A 2025-era request: no per-request envelope, so the server may send the form as its own request. */
const isLegacyRequest = (ctx: ServerContext): boolean => ctx.mcpReq.envelope === undefined;

function callContext(
  deps: ServerDeps,
  b: GateBridge,
  req: CallRequest,
  ctx: ServerContext,
  passkeyConsole: boolean,
): CallContext {
  const token = ctx.mcpReq._meta?.progressToken;
  const canShowForm = deps.config.elicitation && canElicit(b.server, ctx);
  const trusted = clientFormCounts(req.session, deps.config.approval.http_elicitation);
  const client = clientOf(b.server, ctx);
  // One counter per request: progress values always increase, across the wait for approval and the run.
  let n = 0;
  return {
    canAsk: canShowForm && trusted,
    ...(passkeyConsole ? { passkeyConsole: true } : {}),
    ...(canShowForm && !trusted ? { formNotTrusted: true } : {}),
    channel: 'elicitation',
    signal: ctx.mcpReq.signal,
    ...(client === undefined ? {} : { client }),
    ...(token === undefined
      ? {}
      : {
          progress: (_step: number, message: string) =>
            ctx.mcpReq
              .notify({
                method: 'notifications/progress',
                params: { progressToken: token, progress: ++n, message },
              })
              .catch(() => undefined),
        }),
  };
}

/** A run's result as MCP content: text, structured JSON, and links to its files. */
export function toToolResult(r: CallResult): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: r.text }];
  for (const a of r.artifacts) {
    const uri = runUri(r.callId ?? '-', a.path);
    content.push({ type: 'resource_link', uri, name: a.path, mimeType: mimeTypeOf(a.path), size: a.bytes });
  }
  const json = r.json;
  const structured =
    json === undefined
      ? undefined
      : typeof json === 'object' && json !== null && !Array.isArray(json)
        ? (json as Record<string, unknown>)
        : { result: json };
  return {
    content,
    ...(r.isError ? { isError: true } : {}),
    ...(structured === undefined || r.isError ? {} : { structuredContent: structured }),
    _meta: {
      'skills-mcp/call_id': r.callId ?? null,
      'skills-mcp/status': r.status,
      ...(r.code === undefined ? {} : { 'skills-mcp/code': r.code }),
      ...(r.recorded === false ? { 'skills-mcp/recorded': false } : {}),
    },
  };
}

/**
 * Small text artifacts are embedded too, so clients that do not follow links still see them: the bytes read and
 * hashed at collection, never read again.
 */
export function embedSmallArtifacts(result: CallToolResult, r: CallResult): CallToolResult {
  for (const a of r.artifacts) {
    if (a.content === undefined || a.bytes > EMBED_TEXT_BYTES) continue;
    if (!/^text\/|json|yaml|xml/.test(mimeTypeOf(a.path))) continue;
    result.content.push({
      type: 'resource',
      resource: {
        uri: runUri(r.callId ?? '-', a.path),
        mimeType: mimeTypeOf(a.path),
        text: a.content.toString('utf8'),
      },
    });
  }
  return result;
}

/**
 * One gated tool call through the runner, for both protocol eras. The first entry records the request and either
 * answers or asks: a 2026-era request gets `input_required` with the approval form, and the client's retry
 * re-enters with the answer and the signed call id in `requestState`; a 2025-era request keeps its `tools/call`
 * open while its own `elicitation/create` waits for the answer (`askInRequest`). The caller's groups
 * come from this request's token (a legacy session may outlive the token it started with).
 */
export async function gatedCall(
  deps: ServerDeps & { runner: Runner },
  b: GateBridge,
  call: CallRequest,
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> {
  try {
    assertRunScope(ctx.http?.authInfo, deps.config);
    const caller = callerOf(ctx.http?.authInfo);
    const req = caller === undefined ? call : { ...call, session: { ...call.session, caller } };
    const passkeys = (await deps.console?.passkeysEnrolled()) === true;
    const cctx = callContext(deps, b, req, ctx, passkeys);
    const toResult = (r: CallResult) => embedSmallArtifacts(toToolResult(r), r);
    const state = ctx.mcpReq.requestState<{ callId?: unknown; via?: unknown }>();
    if (
      typeof state === 'object' &&
      state !== null &&
      typeof state.callId === 'string' &&
      state.via === 'url'
    ) {
      // The answer to a URL elicitation approves nothing: accept waits for the console, the rest withdraw.
      if (deps.console === undefined) throw new SkillsError('INTERNAL', 'no approval console to ask in');
      const con = { ...deps, console: deps.console };
      const view = inputResponse(ctx.mcpReq.inputResponses, 'approval');
      if (view.kind === 'elicit' && view.action !== 'accept') {
        const r = await withdrawnByRetry(con, req, cctx, state.callId, view.action);
        if (r !== undefined) return toResult(r);
      }
      return await consoleCall(con, req, ctx, cctx, toResult);
    }
    if (typeof state === 'object' && state !== null && typeof state.callId === 'string') {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'approval');
      const answer: ApprovalAnswer =
        view.kind === 'elicit'
          ? view.action === 'accept'
            ? { action: 'accept', content: view.content }
            : { action: view.action }
          : { action: 'error' };
      const r = await deps.runner.resume(state.callId, req.session, answer, cctx, req);
      return embedSmallArtifacts(toToolResult(r), r);
    }
    const url = urlMode(deps, b, ctx, passkeys);
    if (!cctx.canAsk && deps.console !== undefined) {
      return await consoleCall({ ...deps, console: deps.console }, req, ctx, cctx, toResult, url);
    }
    const begun = await deps.runner.begin(req, cctx);
    if (begun.kind === 'done') return embedSmallArtifacts(toToolResult(begun.result), begun.result);
    if (begun.kind === 'console') {
      // Only a passkey in the console approves this call: it is asked there, not in the client's form.
      if (deps.console === undefined) throw new SkillsError('INTERNAL', 'no approval console to ask in');
      return await consoleCall({ ...deps, console: deps.console }, req, ctx, cctx, toResult, url);
    }
    const revision = sessionFormRevision(b.server, ctx);
    const requestedSchema = approvalSchema(revision);
    if (isLegacyRequest(ctx)) {
      // 2025-06-18 has no `mode`; 2025-11-25 reads it (a form, as without it).
      const params = {
        message: begun.form.message,
        requestedSchema,
        ...(revision === '2025-06-18' ? {} : { mode: 'form' as const }),
      };
      const timeoutMs = deps.config.approval.timeout_ms;
      const r = await askInRequest(deps.runner, begun, params, req, cctx, ctx, timeoutMs);
      return embedSmallArtifacts(toToolResult(r), r);
    }
    return inputRequired({
      inputRequests: {
        approval: inputRequired.elicit({ message: begun.form.message, requestedSchema }),
      },
      requestState: await b.mintState(begun.callId, ctx),
    });
  } catch (err) {
    return toolError(err, deps.log);
  }
}
