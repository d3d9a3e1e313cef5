import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';
import type { Era } from '../helpers/stdio-client.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * As the client that showed the form: the model sent a secret-named value, so the form rated the call
 * `MEDIUM (input-not-shown)`. The audit log must record that risk and those findings as shown, and a digest of the
 * form's text, so `audit show` can be held against what was on screen (it used to record `low`, `no-findings`).
 */
describe('the audit log records what the approval form showed', () => {
  const start = gatedServers();

  it.each<Era>(['legacy', 'auto'])('keeps the risk, findings and text digest as shown (%s)', async (era) => {
    const { fx, c } = await start('approval:\n  mode: ask\n', { era });
    let message = '';
    c.client.setRequestHandler('elicitation/create', (req) => {
      message = (req.params as { message: string }).message;
      return Promise.resolve({ action: 'decline' });
    });
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'hi', token: 'abc123' } });
    const callId = (r._meta as Record<string, string>)['skills-mcp/call_id']!;
    expect(message).toMatch(/^Risk: +MEDIUM \(input-not-shown\)$/m);
    await c.close();

    const store = fx.audit();
    const asked = store.getCall(callId)?.events.find((e) => e.type === 'approval_requested');
    store.close();
    expect(asked?.payload).toMatchObject({
      shown: {
        risk: { level: 'medium', code: 'input-not-shown' },
        findings: [{ rule: 'input-not-shown', level: 'medium' }],
        message_sha256: sha256(message),
      },
    });

    const show = runCli(['audit', 'show', callId, '--audit', fx.auditPath]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`shown     risk MEDIUM (input-not-shown)  form sha256 ${sha256(message)}`);
  });
});
