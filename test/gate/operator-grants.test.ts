import { describe, expect, it } from 'vitest';
import { approvalMessage } from '../../src/approvals/approval-message.js';
import type { ApprovalView } from '../../src/approvals/approval-view.js';
import { bindSkillCall, type SkillCall } from '../../src/gate/bind-skill-call.js';
import { effectiveRequests } from '../../src/gate/effective-requests.js';
import { summarizeInput } from '../../src/gate/index.js';
import type { SkillRequests } from '../../src/skills/types.js';

const asks: SkillRequests = { network: true, workspace: 'read', env: [] };
const call: SkillCall = {
  skill: 'docx',
  folder: '/skills/docx',
  script: 'scripts/pack.py',
  bundleSha256: 'a'.repeat(64),
  input: {},
};

describe('operator grants (skill_overrides)', () => {
  it('replace what the frontmatter asks, widening or narrowing it, and say which the operator set', () => {
    expect(effectiveRequests(asks, { workspace: 'write', network: 'none' })).toEqual({
      requests: { network: false, workspace: 'write', env: [] },
      operator: { workspace: 'write', network: 'none' },
    });
    expect(effectiveRequests(asks, undefined)).toEqual({ requests: asks, operator: {} });
    // Packages only: no grant of the sandbox's, nothing to show as the operator's.
    expect(effectiveRequests(asks, { packages: { python: ['pypdf'] } }).operator).toEqual({});
  });

  it('are bound into the approval key: another override is another key, none keeps the old key', () => {
    const none = bindSkillCall(call, 'exact').approvalKey;
    const write = bindSkillCall({ ...call, operator: { workspace: 'write' } }, 'exact').approvalKey;
    const read = bindSkillCall({ ...call, operator: { workspace: 'read' } }, 'exact').approvalKey;
    const profile = bindSkillCall(
      { ...call, operator: { workspace: 'write', profile: 'network' } },
      'skill',
    ).approvalKey;
    expect(new Set([none, write, read, profile]).size).toBe(4);
    expect(bindSkillCall({ ...call, operator: {} }, 'exact').approvalKey).toBe(none);
  });

  it('are stated on the form, each with its source', () => {
    const view: ApprovalView = {
      skill: 'docx',
      script: 'scripts/pack.py',
      bundleSha256: 'a'.repeat(64),
      runner: 'python3',
      callId: 'c0ffee00-1111-2222-3333-444455556666',
      argv: [],
      input: {},
      secretNames: [],
      fullInput: 'see the console',
      inputSummary: summarizeInput({}),
      sandbox: { profile: 'strict', enforced: true, network: 'none', writablePaths: ['/ws'] },
      operator: { workspace: 'write', network: 'none', profile: 'strict' },
      risk: { level: 'medium', code: 'requests-workspace-write', findings: [] },
      policy: { decision: 'ask', rule: 'mode' },
    };
    const lines = approvalMessage(view).split('\n');
    const at = lines.indexOf('Workspace: write (set by the operator in skills-mcp.yaml)');
    expect(lines.slice(at, at + 3)).toEqual([
      'Workspace: write (set by the operator in skills-mcp.yaml)',
      'Network: none (set by the operator in skills-mcp.yaml)',
      'Profile: strict (set by the operator in skills-mcp.yaml)',
    ]);
    // Before the policy line and the command: among the facts that decide.
    expect(at).toBeLessThan(lines.findIndex((l) => l.startsWith('Policy:')));
    const { operator: _, ...plain } = view;
    expect(approvalMessage(plain)).not.toContain('set by the operator');
  });
});
