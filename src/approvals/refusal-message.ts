import type { ApprovalConfig, PolicyAction } from '../config/approval-schema.js';
import type { DecisionReason } from './approval-decision.js';
import type { RiskLevel } from '../gate/risk-patterns.js';

export interface RefusalContext {
  skill: string;
  script: string;
  /** What the policy said before anyone could be asked. */
  policy: PolicyAction;
  /** The rule that decided (`PolicyDecision.rule`), for `rules` refusals. */
  rule?: string;
  risk: RiskLevel;
  config: Pick<ApprovalConfig, 'fallback' | 'timeout_ms' | 'loop_guard'>;
  /** The client could show the approval form, but over HTTP without a token its answer does not count. */
  formNotTrusted?: boolean;
  /** For `answered_unseen`: what the client answered, how fast, and the name it gave itself. */
  unseen?: UnseenAnswer;
}

/** An answer to the form that came too fast for a person: the client answered it without showing it. */
export interface UnseenAnswer {
  action: 'decline' | 'cancel';
  /** From sending the form to the answer. */
  ms: number;
  /** The client's declared name and version (`clientInfo`), when it gave one. */
  client?: string;
}

const yamlScalar = (s: string): string => (/^[A-Za-z0-9][\w./-]*$/.test(s) ? s : JSON.stringify(s));

/**
 * The fail-closed message for a client that cannot show approval prompts (or `--no-elicitation`): says
 * exactly what to put in `skills-mcp.yaml` to let this skill run, or why no config can (high risk).
 */
export function noApproverMessage(ctx: RefusalContext): string {
  const target = `${ctx.skill}/${ctx.script}`;
  if (ctx.policy === 'allow') return allowedButNoFallbackMessage(target, ctx);
  if (ctx.formNotTrusted === true) return untrustedFormMessage(target);
  const head =
    `skills-mcp did not run ${target}: it needs approval, and no one can be asked here ` +
    '(the client does not support MCP elicitation prompts, or they are turned off with --no-elicitation).';
  if (ctx.risk === 'high') {
    return (
      `${head} The skill is rated high risk, and high-risk skills always need a person's approval. ` +
      'Run it from a client that shows approval prompts (for example Claude Code, Cursor or VS Code), ' +
      'approve it in the approval console (start skills-mcp with `--approval-console`), ' +
      'or run it from a terminal with `skills-mcp run`.'
    );
  }
  const snippet = ['approval:'];
  if (ctx.config.fallback === 'deny') {
    snippet.push('  fallback: rules-only   # without a prompt, let the rules decide');
  }
  snippet.push(
    '  rules:',
    `    - skill: ${yamlScalar(ctx.skill)}`,
    `      script: ${yamlScalar(ctx.script)}   # omit this line to allow every script of the skill`,
    '      action: allow',
  );
  return [
    head,
    'To let it run without a prompt, add this to skills-mcp.yaml (merge with an existing `approval:` section), then restart skills-mcp:',
    '',
    '```yaml',
    ...snippet,
    '```',
    'Or have a person approve each call in the approval console: start skills-mcp with `--approval-console` (it opens the page in your browser when a call waits; `skills-mcp console` prints its link in your terminal).',
  ].join('\n');
}

/**
 * The refusal when a rule allows the call but `fallback: deny` runs nothing for a client that cannot be asked: no
 * approval was missing, the fallback refused. Names the two ways to run it there.
 */
function allowedButNoFallbackMessage(target: string, ctx: RefusalContext): string {
  const why =
    ctx.formNotTrusted === true
      ? "this server runs over HTTP without a token, so the client's own approval form does not count"
      : 'this client cannot show approval forms (it does not support MCP elicitation prompts, or they are turned ' +
        'off with --no-elicitation)';
  return [
    `skills-mcp did not run ${target}: ${ctx.rule ?? 'the policy'} allows it, but ${why}, and ` +
      'with `fallback: deny` (the default of the `approval:` section) skills-mcp runs nothing for such a client, ' +
      'whatever the rules say. Nothing was run. ' +
      'To run it here, the user can:',
    '- let the rules decide without a prompt: add this to skills-mcp.yaml (merge with an existing `approval:` ' +
      'section), then restart skills-mcp; the allow rule then runs it:',
    '',
    '```yaml',
    'approval:',
    '  fallback: rules-only',
    '```',
    '',
    '- or turn on the approval console (--approval-console, or `approval.console: true` in skills-mcp.yaml) and ' +
      'approve each run in the browser.',
  ].join('\n');
}

/**
 * The refusal for an HTTP client without a token that answers approval forms: any local program could be that
 * client (the model's own HTTP client included), so its answer is no person's approval. Names the three fixes.
 */
function untrustedFormMessage(target: string): string {
  return [
    `skills-mcp did not run ${target}: it needs a person's approval, and this server runs over HTTP without a ` +
      "token, so an answer in the client's own approval form does not count (any program on this machine could " +
      'connect and approve its own calls). Nothing was run. To approve runs, the user can:',
    '- set SKILLS_MCP_TOKEN (or --token-file) when starting skills-mcp and give the same token to the MCP ' +
      'client; or',
    '- turn on the approval console (--approval-console, or `approval.console: true` in skills-mcp.yaml) and ' +
      'approve in the browser; or',
    '- on a single-user machine only, set `approval.http_elicitation: any` in skills-mcp.yaml: then any local ' +
      'program that reaches the port, a model with an HTTP client included, can approve its own calls.',
    'Then restart skills-mcp.',
  ].join('\n');
}

/**
 * The refusal when the client answered the form without showing it (print and exec modes): says what happened
 * without blaming a person, and names the two ways to run the script in such a mode.
 */
export function unseenAnswerMessage(ctx: RefusalContext): string {
  const target = `${ctx.skill}/${ctx.script}`;
  const u = ctx.unseen;
  const who = u?.client === undefined ? 'The MCP client' : `The MCP client (${u.client})`;
  const verb = u?.action === 'decline' ? 'declined' : 'cancelled';
  const when = u === undefined ? 'at once' : `${Math.max(0, Math.round(u.ms))} ms after it was sent`;
  const lines = [
    `skills-mcp did not run ${target}: ${who} ${verb} the approval form ${when}, faster than a person can read ` +
      'it: the client most likely answered the form without showing it (print and exec modes such as `claude -p` and ' +
      '`codex exec` do this). No one was asked, and nothing was run. Calling again here gets the same answer.',
  ];
  const consoleWay =
    'approve it in the approval console: start skills-mcp with `--no-elicitation --approval-console` (forms ' +
    'then go to a local browser page, not to this client) and decide there';
  if (ctx.risk === 'high') {
    lines.push(
      'The skill is rated high risk, so it always needs a person. To run it in this mode, the user can ' +
        `${consoleWay}; or run it from a client that shows approval forms, or with \`skills-mcp run\` in a terminal.`,
    );
    return lines.join('\n');
  }
  lines.push(
    'To run it in this mode, the user can:',
    '- allow it without a form: add this to skills-mcp.yaml (merge with an existing `approval:` section) and ' +
      'restart skills-mcp; or',
    '',
    '```yaml',
    'approval:',
    '  fallback: rules-only   # clients that cannot show the form: let the rules decide',
    '  rules:',
    `    - skill: ${yamlScalar(ctx.skill)}`,
    `      script: ${yamlScalar(ctx.script)}`,
    '      action: allow',
    '```',
    '',
    `- ${consoleWay}.`,
  );
  return lines.join('\n');
}

/** The refusal for a call that `approval.require` asks a passkey for, when no passkey approved it. */
export function passkeyRequiredMessage(ctx: Pick<RefusalContext, 'skill' | 'script'>): string {
  return [
    `skills-mcp did not run ${ctx.skill}/${ctx.script}: the policy (\`approval.require\` in skills-mcp.yaml) ` +
      'requires a passkey approval for it, and none approved it (only a decision signed with an enrolled passkey ' +
      "in the approval console counts; an answer in the client's own approval form or a terminal prompt does " +
      'not). Nothing was run. To run it, the user can:',
    '- enroll a passkey once: `skills-mcp approvers enroll` (in a terminal);',
    '- start skills-mcp with `--approval-console` (or `approval.console: true` in skills-mcp.yaml);',
    '- then call the tool again, and approve the call in the approval console with the passkey.',
  ].join('\n');
}

/** The refusal for a call that `approval.require` asks four eyes for, when someone else's passkey did not approve it. */
export function fourEyesMessage(
  reason: 'four_eyes_required' | 'self_approval',
  ctx: Pick<RefusalContext, 'skill' | 'script'>,
): string {
  const why =
    reason === 'self_approval'
      ? 'the caller approved it with their own passkey'
      : 'no one other than the caller approved it with a passkey (the caller must be signed in over HTTP with ' +
        '`http.oauth`, and the approving passkey enrolled with `skills-mcp approvers enroll --subject`)';
  return (
    `skills-mcp did not run ${ctx.skill}/${ctx.script}: the policy (\`approval.require\` in skills-mcp.yaml) ` +
    `requires approval by a person other than the caller, with their passkey, and ${why}. Nothing was run. ` +
    'Do not retry this call; ask the user to have a colleague approve it in the approval console.'
  );
}

/** The tool-result text for a call refused because the user stopped the session ("deny and stop"). */
export const SESSION_STOPPED_MESSAGE =
  'The user stopped all skill runs in this session. Read-only tools still work. Do not retry.';

/** A tool-result text for a refused call that a model can act on (and a person can read). */
export function refusalMessage(reason: DecisionReason, ctx: RefusalContext): string {
  const target = `${ctx.skill}/${ctx.script}`;
  const stop = 'Do not retry this call; ask the user how to proceed.';
  switch (reason) {
    case 'no_approver':
      return noApproverMessage(ctx);
    case 'passkey_required':
      return passkeyRequiredMessage(ctx);
    case 'four_eyes_required':
    case 'self_approval':
      return fourEyesMessage(reason, ctx);
    case 'rules':
      return `The policy in skills-mcp.yaml does not allow running ${target} (${ctx.rule ?? 'policy'}).`;
    case 'loop_guard':
      return `The user denied ${target} ${ctx.config.loop_guard} times in this session; skills-mcp will not ask again. ${stop}`;
    case 'session_aborted':
      return SESSION_STOPPED_MESSAGE;
    case 'user':
    case 'declined':
      return `The user denied running ${target}. ${stop}`;
    case 'cancelled':
      return `The user dismissed the approval request for ${target}; it was not run. ${stop}`;
    case 'answered_unseen':
      return unseenAnswerMessage(ctx);
    case 'request_cancelled':
      return `The client cancelled the tool call while skills-mcp waited for approval to run ${target} (its request timed out, or it was stopped); it was not run.`;
    case 'timeout':
      return `No one answered the approval request for ${target} within ${Math.round(ctx.config.timeout_ms / 1000)} s; it was not run.`;
    case 'invalid_response':
      return `The client sent an invalid answer to the approval request for ${target}; it was not run.`;
    case 'elicitation_error':
      return `The approval request for ${target} failed in the client; it was not run.`;
    case 'cached':
      return `${target} was approved earlier in this session.`;
  }
}
