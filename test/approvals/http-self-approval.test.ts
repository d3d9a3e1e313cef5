import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { startServer, type HttpServer } from '../helpers/server-under-test.js';

type Raw = { requestState?: string; isError?: boolean; content?: { text?: string }[] };
const APPROVE = { approval: { action: 'accept', content: { decision: 'approved' } } };

/**
 * Plays the model holding an HTTP client to loopback, against the server a person started with `--http` on
 * loopback and no token (the README's default HTTP command). It connects as its own MCP client, declares form
 * elicitation, and answers the approval form itself. A call only a person may approve must not run.
 */
describe('a loopback HTTP client the model drives cannot approve its own call', () => {
  let s: HttpServer | undefined;
  let fx: ReturnType<typeof gatedFixture> | undefined;
  afterEach(async () => {
    await s?.stop('SIGTERM');
    fx?.cleanup();
    s = fx = undefined;
  });

  it('answers its own form in the modern era: nothing runs', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    s = await startServer({
      transport: 'http',
      skills: [fx.skills],
      args: ['--config', fx.configFile, '--no-watch'],
      env: { SKILLS_MCP_AUDIT: fx.auditPath },
      era: 'auto',
    });
    const model = s.client!;
    const call = (extra: object = {}) =>
      model.request(
        {
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'CANARY-self-approved' }, ...extra },
        } as never,
        { allowInputRequired: true } as never,
      ) as Promise<Raw>;
    const asked = await call();
    const r =
      asked.requestState === undefined
        ? asked
        : await call({ inputResponses: APPROVE, requestState: asked.requestState });
    await model.close();
    expect(r.isError, JSON.stringify(r.content)).toBe(true);
    const store = fx.audit();
    try {
      expect(store.listCalls().filter((c) => c.startedEventId !== null)).toEqual([]);
    } finally {
      store.close();
    }
  });
});
