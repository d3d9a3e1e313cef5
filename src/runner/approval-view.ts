import { join } from 'node:path';
import { shortCallId } from '../audit/call-id.js';
import type { Config } from '../config/config-schema.js';
import { hasOperatorGrants } from '../gate/index.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import type { PreparedCall } from './prepare-call.js';
import { sessionFolderPath } from './session-folder.js';
import { runsUnsandboxed } from './call-profile.js';
import { isInside } from '../skills/list-skill-files.js';

/**
 * Where a person sees in full what the form cannot show (secret-named values, values too long for it): the console's
 * page of the call, which shows any call waiting in this process, when the console is on; else nowhere.
 */
function fullInputAt(config: Config, callId: string): string {
  const page = `the approval console's page of call ${shortCallId(callId)} shows them in full (open the console with \`skills-mcp console\`)`;
  const deny = 'deny unless you know what they hold';
  if (config.approval.console === true) return page;
  return config.approval.console === 'auto'
    ? `${page}, when the console is on; else ${deny}`
    : `no screen here shows them in full (the approval console, approval.console: true, would): ${deny}`;
}

/** The git source a skill folder lies in (its label), as a spread. */
function sourceOf(config: Config, dir: string): { source?: string } {
  const found = config.git_roots?.find((r) => isInside(r.root, dir));
  return found === undefined ? {} : { source: found.label };
}

/** What the person is shown for a call: the approval form and the console render it. */
export function approvalView(
  call: PreparedCall,
  config: Config,
  runsDir: string,
  callId: string,
): ApprovalView {
  const { requests, operator } = call.grants;
  const reads = requests.workspace !== 'none' ? config.workspace : undefined;
  const workspace = requests.workspace === 'write' && reads !== undefined ? [reads] : [];
  const session = config.runs.session_folder.enabled
    ? sessionFolderPath(runsDir, call.req.session)
    : undefined;
  return {
    skill: call.skill.name,
    script: call.script,
    ...(call.module === undefined ? {} : { module: call.module }),
    bundleSha256: call.bundle.sha256,
    ...sourceOf(config, call.skill.dir),
    runner: call.program,
    callId,
    argv: call.args,
    input: call.input,
    secretNames: config.approval.secret_names,
    fullInput: fullInputAt(config, callId),
    inputSummary: call.bound.input,
    sandbox: {
      // The profile, network and confinement the run gets (resolved in `prepareCall`), never only what was asked.
      profile: call.profile.name,
      enforced: !runsUnsandboxed(config, call.profile),
      network: call.network,
      readablePaths: reads === undefined ? [] : [reads],
      writablePaths: [
        join(runsDir, '<new folder for this call>'),
        ...(session === undefined ? [] : [session]),
        ...workspace,
      ],
      ...(session === undefined ? {} : { sessionFolder: session }),
    },
    ...(hasOperatorGrants(operator) ? { operator } : {}),
    risk: call.risk,
    policy: call.policy,
    ...(call.installPlan === undefined ? {} : { install: call.installPlan }),
  };
}
