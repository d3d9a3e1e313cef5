import { describe, expect, it } from 'vitest';
import { consoleConfig, consoleServers, textOf } from './helpers/console-server.js';
import { postDecision } from './helpers/raw-request.js';

describe('approval console: a stop cancels approvals made before it', () => {
  const startServer = consoleServers();

  it('refuses the retry of a call approved in the console before another call of the session was stopped', async () => {
    const s = await startServer({ config: consoleConfig({ waitMs: 1000 }) });
    const x = s.call({ text: 'call X' });
    await x.result;
    expect((await postDecision(await x.link, 'approved')).status).toBe(303);
    const y = s.call({}, 'writer');
    await y.result;
    expect((await postDecision(await y.link, 'abort')).status).toBe(303);
    const retry = await s.call({ text: 'call X' }).result;
    expect(retry.isError).toBe(true);
    expect(textOf(retry)).not.toContain('call X"');
    expect(s.withAudit((a) => a.listCalls().map((r) => r.startedEventId))).toEqual([null, null, null]);
  });
});
