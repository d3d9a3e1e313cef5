import { describe, expect, it } from 'vitest';
import type { ElicitResult } from '@modelcontextprotocol/client';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import type { GatedFixture } from '../helpers/gated-fixture.js';

type Text = { type: 'text'; text: string };

const ASK = 'approval:\n  mode: ask\n  loop_guard: 0\n';

const reasons = (fx: GatedFixture) => {
  const store = fx.audit();
  try {
    return store.listCalls().map((r) => r.approvalReason);
  } finally {
    store.close();
  }
};

/*
 * `claude -p` cancels and `codex exec` declines every approval form at once, without showing it to anyone. The test
 * client does the same: it answers the form the moment it arrives.
 */
describe.each<Era>(['legacy', 'auto'])('a client that answers the form without showing it, %s era', (era) => {
  const startServer = gatedServers();

  it.each<['cancel' | 'decline', string]>([
    ['cancel', 'claude -p'],
    ['decline', 'codex exec'],
  ])('says so when it %ss at once (as %s does), and names the two ways to run there', async (action) => {
    const { c, fx } = await startServer(ASK, { era });
    c.client.setRequestHandler('elicitation/create', () => Promise.resolve<ElicitResult>({ action }));
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).not.toMatch(/the user (dismissed|denied)/i);
    expect(text).toMatch(/without showing it/);
    expect(text).toContain('skills-mcp-test');
    // The two ways to run in such a mode: an allow rule that needs no form, or the approval console.
    expect(text).toContain('fallback: rules-only');
    expect(text).toMatch(/- skill: echo\n\s+script: scripts\/main.py/);
    expect(text).toContain('--approval-console');
    expect(reasons(fx)).toEqual(['answered_unseen']);
  });

  it("still reports a person's answer as theirs when it takes a person's time", async () => {
    const { c, fx } = await startServer(ASK, { era });
    c.client.setRequestHandler(
      'elicitation/create',
      () => new Promise<ElicitResult>((resolve) => setTimeout(() => resolve({ action: 'decline' }), 1_200)),
    );
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect((r.content as Text[])[0]!.text).toMatch(/^The user denied running echo\/scripts\/main.py/);
    expect(reasons(fx)).toEqual(['declined']);
  });
});
