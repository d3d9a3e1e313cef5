import { describe, expect, it } from 'vitest';
import { approvalMessage } from '../../src/approvals/approval-message.js';
import type { ApprovalView } from '../../src/approvals/approval-view.js';
import { approvalFacts } from '../../src/console/approval-card.js';
import type { ConsoleApproval } from '../../src/console/approval-queue.js';
import { summarizeInput } from '../../src/gate/index.js';

const view: ApprovalView = {
  skill: 'pdf',
  script: 'scripts/fill.py',
  bundleSha256: 'b'.repeat(64),
  runner: 'python3',
  callId: 'c0ffee00-1111-2222-3333-444455556666',
  argv: [],
  input: {},
  secretNames: [],
  fullInput: 'see the console',
  inputSummary: summarizeInput({}),
  sandbox: { profile: 'default', enforced: true, network: 'none', writablePaths: ['/runs/x'] },
  risk: { level: 'low', code: 'ok', findings: [] },
  policy: { decision: 'ask', rule: 'mode' },
  source: 'https://example.com/skills.git?x=<b>@0123456789ab',
};

describe('the source of a git-sourced skill on the approval screens', () => {
  it('is a Source line of the form, after the script, and absent for a folder skill', () => {
    const lines = approvalMessage(view).split('\n');
    const at = lines.indexOf('Source:  git https://example.com/skills.git?x=<b>@0123456789ab');
    expect(at).toBe(lines.findIndex((l) => l.startsWith('Script:')) + 1);
    const { source: _, ...plain } = view;
    expect(approvalMessage(plain)).not.toContain('Source:');
  });

  it('is a Source fact of the console card, escaped', () => {
    const card = (v: ApprovalView) => {
      const a: ConsoleApproval = {
        id: 'a1',
        csrf: 'x',
        callId: v.callId,
        session: { id: 's1', transport: 'stdio' },
        requestKey: 'k',
        view: v,
        askedAt: 0,
        state: 'pending',
      };
      return approvalFacts(a, '').text;
    };
    expect(card(view)).toMatch(
      /<dt>Source<\/dt>\s*<dd>git <code>https:\/\/example\.com\/skills\.git\?x=&lt;b&gt;@0123456789ab<\/code><\/dd>/,
    );
    const { source: _, ...plain } = view;
    expect(card(plain)).not.toContain('Source');
  });
});
