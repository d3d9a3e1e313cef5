import { join } from 'node:path';
import { shortCallId } from '../audit/call-id.js';
import type { Config } from '../config/config-schema.js';
import type { ApprovalView } from '../gate/index.js';
import type { PreparedCall } from './prepare-call.js';

/** Where a person sees the input in full: the console's page of the call, when the console may be on. */
function fullInputAt(config: Config, callId: string): string {
  const page = `the approval console's page of call ${shortCallId(callId)} shows the full input (open the console with \`skills-mcp console\`)`;
  if (config.approval.console === true) return page;
  const deny = 'deny unless you know what they hold';
  return config.approval.console === 'auto'
    ? `${page}, when the console is on; else ${deny}`
    : `${deny} (the approval console, approval.console: true, shows every value in full)`;
}

/** What the person is shown for a call: the approval form and the console render it. */
export function approvalView(
  call: PreparedCall,
  config: Config,
  runsDir: string,
  callId: string,
): ApprovalView {
  const workspace =
    call.skill.requests.workspace === 'write' && config.workspace !== undefined ? [config.workspace] : [];
  return {
    skill: call.skill.name,
    script: call.script,
    ...(call.module === undefined ? {} : { module: call.module }),
    bundleSha256: call.bundle.sha256,
    runner: call.interpreter,
    callId,
    argv: call.args,
    input: call.input,
    secretNames: config.approval.secret_names,
    fullInput: fullInputAt(config, callId),
    inputSummary: call.bound.input,
    sandbox: {
      profile: call.skill.requests.sandboxProfile ?? config.sandbox.profile,
      enforced: config.sandbox.mode !== 'off',
      network: call.network,
      writablePaths: [join(runsDir, '<new folder for this call>'), ...workspace],
    },
    risk: call.risk,
    policy: call.policy,
    ...(call.installPlan === undefined ? {} : { install: call.installPlan }),
  };
}
