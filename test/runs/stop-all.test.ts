import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import { waitFor } from '../helpers/wait-for.js';

type Answer = { action: 'accept'; content: { decision: string } };
const answer = (decision: string): Answer => ({ action: 'accept', content: { decision } });

describe('"Deny and stop" stops every approval of the session (stdio, built binary, elicitation)', () => {
  const start = gatedServers();

  it('does not run a call approved after another call of the session was stopped', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\n');
    const waiting: { message: string; answer: (a: Answer) => void }[] = [];
    c.client.setRequestHandler(
      'elicitation/create',
      (req: { params: { message: string } }) =>
        new Promise<Answer>((answer) => waiting.push({ message: req.params.message, answer })),
    );
    const x = c.client.callTool({ name: 'echo', arguments: { text: 'call X' } });
    const y = c.client.callTool({ name: 'writer', arguments: {} });
    await waitFor(() => waiting.length === 2, 20_000, 'both approval forms');
    const fy = waiting.find((w) => w.message.includes('writer'))!;
    const fxForm = waiting.find((w) => w.message.includes('echo'))!;
    fy.answer(answer('abort'));
    expect((await y).isError).toBe(true);
    fxForm.answer(answer('approved'));
    const rx = await x;
    expect(rx.isError).toBe(true);
    expect(JSON.stringify(rx.content)).toMatch(/no longer pending|stopped all skill runs/);
    expect(JSON.stringify(rx.content)).not.toContain('call X');
    const store = fx.audit();
    try {
      for (const row of store.listCalls()) expect(row.startedEventId).toBeNull();
    } finally {
      store.close();
    }
  });
});
