import { describe, expect, it } from 'vitest';
import type { ElicitResult } from '@modelcontextprotocol/client';
import { gatedServers } from '../helpers/gated-server.js';
import { type Era } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import type { GatedFixture } from '../helpers/gated-fixture.js';

type Text = { type: 'text'; text: string };

/*
 * Real clients time out a request at 60 s while skills-mcp waits 120 s for a person. Every duration here is that
 * setup divided by 10, with the same ratios: the client gives up at 6 s, the person answers at 6.6 s (66 s), the
 * server gives up at 12 s (120 s). (A tenth, not less: the client's timeout also bounds the approved run's own
 * progress gaps, which a busy machine stretches.)
 */
const CLIENT_TIMEOUT_MS = 6_000;
const PERSON_ANSWERS_AT_MS = 6_600;
const SLOW = 'approval:\n  mode: ask\n  timeout_ms: 12000\n';

const lastCall = (fx: GatedFixture) => {
  const store = fx.audit();
  try {
    return store.listCalls().at(-1);
  } finally {
    store.close();
  }
};

describe.each<Era>(['legacy', 'auto'])('a slow approval over stdio, %s era', (era) => {
  const startServer = gatedServers();

  it('reaches a client that resets its timeout on progress when the person approves after its timeout', async () => {
    const { c } = await startServer(SLOW, { era });
    c.client.setRequestHandler(
      'elicitation/create',
      () =>
        new Promise<ElicitResult>((resolve) =>
          setTimeout(
            () => resolve({ action: 'accept', content: { decision: 'approved' } }),
            PERSON_ANSWERS_AT_MS,
          ),
        ),
    );
    const progress: string[] = [];
    const r = await c.client.callTool(
      { name: 'echo', arguments: { text: 'late but yes' } },
      {
        timeout: CLIENT_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        onprogress: (p) => void progress.push(p.message ?? ''),
      },
    );
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(r.structuredContent).toEqual({ echo: { text: 'late but yes' }, ok: true });
    // Legacy: the call stays open while the person decides, kept alive by progress. Modern: the client holds the form.
    if (era === 'legacy') expect(progress).toContain('waiting for the user to approve echo/scripts/main.py');
    expect(c.errors).toEqual([]);
  });

  it("answers with skills-mcp's own refusal and its _meta when the server stops waiting first", async () => {
    const { c } = await startServer('approval:\n  mode: ask\n  timeout_ms: 1000\n', { era });
    // Legacy: nobody answers (the form is withdrawn when the server gives up). Modern: the answer comes after the
    // server gave up, on the client's retry.
    c.client.setRequestHandler('elicitation/create', (_req, ctx) =>
      era === 'legacy'
        ? new Promise<ElicitResult>((resolve) =>
            ctx.mcpReq.signal.addEventListener('abort', () => resolve({ action: 'cancel' })),
          )
        : new Promise<ElicitResult>((resolve) =>
            setTimeout(() => resolve({ action: 'accept', content: { decision: 'approved' } }), 1_500),
          ),
    );
    const r = await c.client.callTool(
      { name: 'echo', arguments: { text: 'nobody there' } },
      { timeout: 30_000, resetTimeoutOnProgress: true, onprogress: () => undefined },
    );
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toMatch(/^No one answered the approval request for echo\/scripts\/main.py within 1 s/);
    expect(r._meta).toMatchObject({
      'skills-mcp/call_id': expect.any(String) as string,
      'skills-mcp/status': 'denied',
      'skills-mcp/code': 'APPROVAL_DENIED',
    });
  });
});

describe('a client that gives up on a waiting approval (legacy era, no progress reset)', () => {
  const startServer = gatedServers();

  it('is recorded at once as given up by the client, not left approval_requested', async () => {
    const { c, fx } = await startServer(SLOW, { era: 'legacy' });
    let asked!: () => void;
    const formShown = new Promise<void>((r) => (asked = r));
    c.client.setRequestHandler('elicitation/create', (_req, ctx) => {
      asked();
      return new Promise<ElicitResult>((resolve) =>
        ctx.mcpReq.signal.addEventListener('abort', () => resolve({ action: 'cancel' })),
      );
    });
    const call = c.client.callTool(
      { name: 'echo', arguments: { text: 'waiting' } },
      { timeout: CLIENT_TIMEOUT_MS },
    );
    await formShown;
    await expect(call).rejects.toThrow(/timed out/i);
    // The server's own timeout is 6 s away: a record made then would say `timeout`, so the reason below shows it
    // was made when the client gave up (the wait is only a deadline for a slow machine).
    await waitFor(() => lastCall(fx)?.approvalReason != null, 30_000, 'the decision in the audit log').catch(
      (e: unknown) => {
        throw new Error(`${String(e)}; the call is ${JSON.stringify(lastCall(fx))}`);
      },
    );
    const row = lastCall(fx)!;
    expect(row).toMatchObject({
      approvalDecision: 'denied',
      approvalReason: 'request_cancelled',
      state: 'finished',
      status: 'cancelled',
    });
  });
});
