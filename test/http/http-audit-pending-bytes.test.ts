import { afterAll, describe, expect, it, vi } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { connectClient, type Connected } from './helpers/connect-client.js';
import { servedUrl, spawnCli } from './helpers/spawn-server.js';

const BIG = 'x'.repeat(200_000);
/** With a token, the clients' own approval forms are how a person is asked over HTTP. */
const TOKEN = 'pending-bytes-test-token-0123456789';

/** A client that never answers an approval, and counts the ones it was asked. */
async function silentClient(url: string): Promise<Connected & { asked: () => number }> {
  const c = await connectClient(url, 'legacy', TOKEN);
  let asked = 0;
  c.client.setRequestHandler('elicitation/create', () => {
    asked++;
    return new Promise<never>(() => undefined);
  });
  return { ...c, asked: () => asked };
}

describe('byte budgets for approvals waiting for an answer (built binary over HTTP)', () => {
  const fx = gatedFixture(
    'approval:\n  mode: ask\npending_approvals:\n  per_session_bytes: 300000\n  total_bytes: 450000\n',
  );
  afterAll(() => fx.cleanup());

  it('refuses large inputs past the per-session and the server byte budgets instead of holding them, and records each refusal', async () => {
    const server = spawnCli(['--http', '--port', '0', ...fx.args], { SKILLS_MCP_TOKEN: TOKEN });
    const url = await servedUrl(server);
    const clients: Awaited<ReturnType<typeof silentClient>>[] = [];
    try {
      // The attack: large inputs whose approvals are never answered, each held by the server until its timeout.
      const call = (c: Connected, text: string) =>
        c.client.callTool({ name: 'echo', arguments: { text } }).catch((e: unknown) => e);
      const held = async (c: Awaited<ReturnType<typeof silentClient>>, n: number) =>
        vi.waitFor(() => expect(c.asked()).toBe(n), { timeout: 20_000, interval: 50 });
      const a = await silentClient(url);
      const b = await silentClient(url);
      const c = await silentClient(url);
      clients.push(a, b, c);

      void call(a, BIG);
      await held(a, 1);
      const overSession = (await call(a, BIG)) as { isError?: boolean; content: unknown };
      expect(overSession.isError).toBe(true);
      expect(JSON.stringify(overSession.content)).toContain(
        "this session's waiting approvals would hold more than 300000 bytes of input",
      );

      void call(b, BIG);
      await held(b, 1);
      const overServer = (await call(c, BIG)) as { isError?: boolean; content: unknown };
      expect(overServer.isError).toBe(true);
      expect(JSON.stringify(overServer.content)).toContain(
        "the server's waiting approvals would hold more than 450000 bytes of input",
      );
      // A small call still fits: the budget refuses what does not fit, it does not lock the others out.
      void call(c, 'small');
      await held(c, 1);
      expect(a.asked() + b.asked()).toBe(2);
    } finally {
      for (const c of clients) await c.transport.terminateSession().catch(() => undefined);
      for (const c of clients) await c.client.close().catch(() => undefined);
      server.proc.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
    const audit = fx.audit();
    try {
      const refused = audit
        .listCalls()
        .map((call) => audit.getCall(call.callId)!)
        .filter((d) =>
          d.events.some(
            (e) =>
              e.type === 'tool_call_finished' &&
              (e.payload as { error_code?: string }).error_code === 'APPROVALS_BUSY',
          ),
        );
      expect(refused).toHaveLength(2);
      for (const d of refused) expect(d.call.inputBytes).toBeGreaterThan(200_000);
    } finally {
      audit.close();
    }
  }, 60_000);
});
