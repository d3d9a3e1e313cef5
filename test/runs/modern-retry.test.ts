import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import { startServer, type HttpServer } from '../helpers/server-under-test.js';

type Params = { name: string; arguments: Record<string, unknown> };
type Raw = {
  requestState?: string;
  isError?: boolean;
  content?: { text?: string }[];
  _meta?: Record<string, unknown>;
};
const APPROVE = { approval: { action: 'accept', content: { decision: 'approved' } } };

/** A modern-era client that answers `input_required` by hand, so a retry can carry other arguments. */
async function manual(
  c: Client,
  params: Params,
  retry?: { state: string; responses: unknown },
): Promise<Raw> {
  const p =
    retry === undefined ? params : { ...params, inputResponses: retry.responses, requestState: retry.state };
  return (await c.request(
    { method: 'tools/call', params: p } as never,
    { allowInputRequired: true } as never,
  )) as Raw;
}

describe('a modern-era retry runs only the call the person was asked about (stdio, built binary)', () => {
  const start = gatedServers();

  it.each<[string, Params]>([
    ['other input', { name: 'echo', arguments: { text: 'B' } }],
    ['another tool', { name: 'run_skill_script', arguments: { skill: 'echo', script: 'scripts/main.py' } }],
    ['another skill', { name: 'risky', arguments: {} }],
    [
      'another script',
      { name: 'run_skill_script', arguments: { skill: 'writer', script: 'scripts/main.py' } },
    ],
  ])('refuses a retry with %s, runs nothing, and still runs the exact retry', async (_what, other) => {
    const { fx, c } = await start('approval:\n  mode: ask\n');
    const asked: Params = { name: 'echo', arguments: { text: 'A' } };
    const first = await manual(c.client, asked);
    expect(first.requestState).toBeTypeOf('string');
    const swapped = await manual(c.client, other, { state: first.requestState!, responses: APPROVE });
    expect(swapped.isError).toBe(true);
    expect(swapped._meta?.['skills-mcp/code']).toBe('RETRY_MISMATCH');
    const store = fx.audit();
    try {
      expect(store.listCalls().map((r) => r.startedEventId)).toEqual([null]);
    } finally {
      store.close();
    }
    const exact = await manual(c.client, asked, { state: first.requestState!, responses: APPROVE });
    expect(exact.isError, JSON.stringify(exact)).toBeFalsy();
  });
});

describe('modern-era HTTP after a restart on the same audit database', () => {
  let s: HttpServer | undefined;
  let fx: ReturnType<typeof gatedFixture> | undefined;
  afterEach(async () => {
    await s?.stop('SIGTERM');
    fx?.cleanup();
    s = fx = undefined;
  });

  it('answers gated calls after the server restarted', async () => {
    fx = gatedFixture(
      'approval:\n  mode: ask\n  fallback: rules-only\n  rules:\n    - { skill: echo, action: allow }\n',
    );
    const args = ['--skills', fx.skills, '--config', fx.configFile, '--no-watch'];
    const env = { SKILLS_MCP_AUDIT: fx.auditPath };
    for (const round of [1, 2]) {
      s = await startServer({ transport: 'http', args, env, era: 'auto', elicitation: false });
      const client = s.client!;
      const r = await client.callTool({ name: 'echo', arguments: { text: `round ${round}` } });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      await client.close();
      s.proc.kill('SIGTERM');
      await s.exited;
    }
  });
});
