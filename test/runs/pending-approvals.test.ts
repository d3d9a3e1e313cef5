import { describe, expect, it, vi } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';

describe('budgets for approvals waiting for an answer (built binary)', () => {
  const start = gatedServers();

  it('refuses a new approval past the per-session count instead of queueing it, and records the refusal', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\npending_approvals:\n  per_session: 2\n', {
      era: 'legacy',
    });
    // The attack: approvals that are never answered, each holding its call and input in the server.
    c.client.setRequestHandler('elicitation/create', () => new Promise<never>(() => undefined));
    const settled: { isError?: unknown; content: unknown }[] = [];
    for (let i = 0; i < 4; i++) {
      void c.client
        .callTool({ name: 'echo', arguments: { text: `call ${i}` } })
        .then((r) => settled.push(r))
        .catch(() => undefined);
    }
    await vi.waitFor(() => expect(settled).toHaveLength(2), { timeout: 20_000, interval: 50 });
    for (const r of settled) {
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toContain('this session already has 2 approvals waiting (limit 2)');
    }
    await c.close();
    const audit = fx.audit();
    const finished = audit
      .listCalls()
      .filter((call) => call.status === 'denied')
      .map((call) => call.callId);
    const codes = finished.map(
      (id) => audit.getCall(id)!.events.find((e) => e.type === 'tool_call_finished')?.payload,
    );
    audit.close();
    expect(codes.filter((p) => (p as { error_code?: string }).error_code === 'APPROVALS_BUSY')).toHaveLength(
      2,
    );
  });
});
