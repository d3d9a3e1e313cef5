import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { startServer, type HttpServer } from '../helpers/server-under-test.js';
import { waitFor } from '../helpers/wait-for.js';
import { consoleBase, pendingLinks } from './helpers/console-server.js';
import { postDecision } from './helpers/raw-request.js';

describe.each(['legacy', 'auto'] as const)('approval console with --http (%s era)', (era) => {
  let server: HttpServer | undefined;
  let fx: ReturnType<typeof gatedFixture> | undefined;
  afterEach(async () => {
    await server?.stop('SIGTERM');
    fx?.cleanup();
    server = undefined;
    fx = undefined;
  });

  const approveInConsole = async (declaresElicitation: boolean) => {
    fx = gatedFixture('approval:\n  mode: ask\n  console_open_browser: false\n');
    server = await startServer({
      transport: 'http',
      baseEnv: 'minimal',
      args: ['--approval-console', ...fx.args],
      era,
      elicitation: declaresElicitation,
    });
    expect(server.stderr()).toContain('approval console ready');
    const client = server.client!;
    // Without a token, a client's own approval form is never asked: the console is the approver.
    if (declaresElicitation)
      client.setRequestHandler('elicitation/create', () => Promise.reject(new Error('asked the client')));
    try {
      const result = client.callTool({ name: 'echo', arguments: { text: 'over http' } });
      // The person's route: `skills-mcp console` prints the link; the waiting request is on its index.
      const base = consoleBase(fx.auditPath);
      const link = await waitFor(
        async () => (await pendingLinks(base))[0],
        10_000,
        'the call on the console',
      );
      expect((await postDecision(link, 'approved')).status).toBe(303);
      const r = await result;
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual({ echo: { text: 'over http' }, ok: true });
      const store = fx.audit();
      try {
        const [row] = store.listCalls();
        expect(row?.approvalDecision).toBe('approved');
        expect(store.getCall(row!.callId)?.approval?.channel).toBe('console');
      } finally {
        store.close();
      }
    } finally {
      await client.close();
    }
  };

  it('asks a client without elicitation through the console (flag --approval-console) and runs once approved', () =>
    approveInConsole(false));

  it('asks through the console, not the form, for a tokenless client that declares elicitation', () =>
    approveInConsole(true));
});
