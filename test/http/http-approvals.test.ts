import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { connectClient, type Connected } from './helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';

type Answer = { action: 'accept'; content: { decision: string } } | { action: 'decline' };
const approve = (decision: string): Answer => ({ action: 'accept', content: { decision } });
/** With a token every request is authenticated, so the client's own approval form counts over HTTP. */
const TOKEN = 'http-approvals-test-token-0123456789';

/** A client whose elicitation answers come from a queue; counts what it was asked. */
function answering(c: Connected, answers: Answer[]): string[] {
  const asked: string[] = [];
  c.client.setRequestHandler('elicitation/create', (req: { params: { message: string } }) => {
    asked.push(req.params.message);
    const next = answers.shift();
    if (next === undefined) throw new Error('unexpected approval request');
    return Promise.resolve(next);
  });
  return asked;
}

describe('approvals over Streamable HTTP (built binary, real sandbox)', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let server: SpawnedServer | undefined;
  const clients: Connected[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.client.close().catch(() => undefined);
    server?.proc.kill('SIGTERM');
    await server?.exited;
    fx?.cleanup();
  });

  async function start(opts: { token?: string; config?: string } = { token: TOKEN }): Promise<string> {
    fx = gatedFixture(`approval:\n  mode: ask\n${opts.config ?? ''}`);
    server = spawnCli(
      ['--http', '--port', '0', ...fx.args],
      opts.token === undefined ? {} : { SKILLS_MCP_TOKEN: opts.token },
    );
    return servedUrl(server);
  }
  const connect = async (url: string, era: 'legacy' | 'auto', token: string | undefined = TOKEN) => {
    const c = await connectClient(url, era, token);
    clients.push(c);
    return c;
  };

  it.each(['legacy', 'auto'] as const)('asks by elicitation and runs once approved (%s era)', async (era) => {
    const url = await start();
    const c = await connect(url, era);
    const asked = answering(c, [approve('approved')]);
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'over http' } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ echo: { text: 'over http' }, ok: true });
    expect(asked).toHaveLength(1);
  });

  it('answers a legacy POST that needs nothing more as JSON, and streams one that asks for an approval', async () => {
    const url = await start();
    /** Each POST's JSON-RPC method (or "reply") and the content type of its answer. */
    const answered: string[] = [];
    const watch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST') {
        const { method } = JSON.parse(init.body as string) as { method?: string };
        answered.push(`${method ?? 'reply'}: ${res.headers.get('content-type') ?? res.status}`);
      }
      return res;
    };
    const c = await connectClient(url, 'legacy', TOKEN, watch);
    clients.push(c);
    const asked = answering(c, [approve('approved')]);
    expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('echo');
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'streamed' } });
    expect(r.structuredContent).toEqual({ echo: { text: 'streamed' }, ok: true });
    expect(asked).toHaveLength(1);
    expect(answered).toEqual([
      'initialize: application/json',
      'notifications/initialized: 202',
      'tools/list: application/json',
      'tools/call: text/event-stream',
      'reply: 202',
    ]);
  });

  it("keeps one legacy session's grant and loop guard from another", async () => {
    const url = await start();
    const a = await connect(url, 'legacy');
    const b = await connect(url, 'legacy');
    const askedA = answering(a, [approve('approved_for_session'), approve('denied'), approve('denied')]);
    const askedB = answering(b, [approve('approved'), approve('denied')]);

    // A's session grant does not cover B.
    expect((await a.client.callTool({ name: 'echo', arguments: { text: 'x' } })).isError).toBeFalsy();
    expect((await a.client.callTool({ name: 'echo', arguments: { text: 'x' } })).isError).toBeFalsy();
    expect(askedA).toHaveLength(1);
    expect((await b.client.callTool({ name: 'echo', arguments: { text: 'x' } })).isError).toBeFalsy();
    expect(askedB).toHaveLength(1);

    // A trips its loop guard; B is still asked for the same request.
    await a.client.callTool({ name: 'echo', arguments: { text: 'y' } });
    await a.client.callTool({ name: 'echo', arguments: { text: 'y' } });
    const third = await a.client.callTool({ name: 'echo', arguments: { text: 'y' } });
    expect(third.isError).toBe(true);
    expect(askedA).toHaveLength(3);
    await b.client.callTool({ name: 'echo', arguments: { text: 'y' } });
    expect(askedB).toHaveLength(2);
  });

  it("does not let one session read another session's run artifacts", async () => {
    const url = await start();
    const a = await connect(url, 'legacy');
    const b = await connect(url, 'legacy');
    answering(a, [approve('approved')]);
    const r = await a.client.callTool({ name: 'writer', arguments: {} });
    expect(r.isError).toBeFalsy();
    const link = (r.content as { type: string; uri?: string }[]).find((b) => b.type === 'resource_link')!;
    expect(link.uri).toMatch(/^skill-run:\/\/[0-9a-f-]{36}\/out\.txt$/);
    const mine = await a.client.readResource({ uri: link.uri! });
    expect((mine.contents[0] as { text: string }).text).toBe('artifact body');
    await expect(b.client.readResource({ uri: link.uri! })).rejects.toThrow(
      /no such artifact in this session/,
    );
  });

  it.each(['legacy', 'auto'] as const)(
    "without a token, does not count the client's own approval and says how to get an approver (%s era)",
    async (era) => {
      const url = await start({});
      const c = await connect(url, era, undefined);
      const asked = answering(c, [approve('approved')]);
      const r = await c.client.callTool({ name: 'echo', arguments: { text: 'no token' } });
      expect(r.isError).toBe(true);
      expect(asked).toEqual([]);
      const text = JSON.stringify(r.content);
      expect(text).toContain('over HTTP without a token');
      expect(text).toContain('SKILLS_MCP_TOKEN');
      expect(text).toContain('--approval-console');
      expect(text).toContain('approval.http_elicitation: any');
      const store = fx!.audit();
      try {
        const [row] = store.listCalls();
        expect(row?.startedEventId).toBeNull();
        expect(row?.approvalDecision).toBe('denied');
      } finally {
        store.close();
      }
    },
  );

  it('without a token and with approval.http_elicitation: any, counts the client form and warns at start', async () => {
    const url = await start({ config: '  http_elicitation: any\n' });
    expect(server!.stderr()).toContain('approval.http_elicitation is \\"any\\" and there is no token');
    const c = await connect(url, 'auto', undefined);
    const asked = answering(c, [approve('approved')]);
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'any' } });
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
  });

  it('with a token, starts without that warning', async () => {
    await start({ token: TOKEN, config: '  http_elicitation: any\n' });
    expect(server!.stderr()).not.toContain('http_elicitation');
  });
});
