import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';

type Raw = { requestState?: string; isError?: boolean; content?: { text?: string }[] };
const APPROVE = { approval: { action: 'accept', content: { decision: 'approved' } } };

/**
 * Plays the model holding an HTTP client to loopback, against the server a person started with `--http` on
 * loopback and no token (the README's default HTTP command). It connects as its own MCP client, declares form
 * elicitation, and answers the approval form itself. A call only a person may approve must not run.
 */
describe('a loopback HTTP client the model drives cannot approve its own call', () => {
  let s: SpawnedServer | undefined;
  let fx: ReturnType<typeof gatedFixture> | undefined;
  afterEach(async () => {
    if (s?.proc.exitCode === null) {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
    fx?.cleanup();
    s = fx = undefined;
  });

  it('answers its own form in the modern era: nothing runs', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    s = spawnCli(['--http', '--port', '0', '--skills', fx.skills, '--config', fx.configFile, '--no-watch'], {
      SKILLS_MCP_AUDIT: fx.auditPath,
    });
    const model = new Client(
      { name: 'the-model', version: '1' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    await model.connect(new StreamableHTTPClientTransport(new URL(await servedUrl(s))));
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
