import { describe, expect, it } from 'vitest';
import { approvalMessage } from '../../src/approvals/approval-message.js';
import type { ApprovalView } from '../../src/approvals/approval-view.js';
import { summarizeInput } from '../../src/gate/index.js';

const view = (argv: string[]): ApprovalView => ({
  skill: 'echo',
  script: 'scripts/main.py',
  bundleSha256: 'a'.repeat(64),
  runner: 'python3',
  callId: 'c0ffee00-1111-2222-3333-444455556666',
  argv,
  input: {},
  secretNames: [],
  fullInput: 'see the console',
  inputSummary: summarizeInput({}),
  sandbox: { profile: 'default', enforced: true, network: 'none', writablePaths: ['/runs/<new>'] },
  risk: { level: 'low', code: 'none', findings: [] },
  policy: { decision: 'ask', rule: 'mode' },
});

describe('a crowded approval message', () => {
  it('puts sandbox, risk and policy before 60 long arguments, and shows the later ones below', () => {
    const message = approvalMessage(view(Array.from({ length: 60 }, (_, i) => `${i}`.padEnd(80, 'x'))));
    const lines = message.split('\n');
    expect(lines.findIndex((l) => l.startsWith('Sandbox:'))).toBeLessThan(4);
    expect(lines.findIndex((l) => l.startsWith('Risk:'))).toBeLessThan(5);
    expect(message.indexOf('Policy:')).toBeLessThan(message.indexOf('Command:'));
    expect(message).toContain('and 48 more arguments');
    expect(message).toContain('  arguments 13 to 60 (48 more):');
    expect(message).toMatch(/^Risk: +LOW$/m);
    expect(message.length).toBeLessThan(9000);
  });
});

describe('the first lines of an approval message', () => {
  it('name the skill, the script, the sandbox and the risk, all that a host cutting the message to three lines shows', () => {
    const [first, second, third] = approvalMessage(view([])).split('\n');
    expect(first).toBe('Allow skill "echo" to run scripts/main.py?');
    expect(second).toMatch(/^Sandbox: +profile default, network none$/);
    expect(third).toMatch(/^Risk: +LOW$/);
  });
});
