import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Connected, type Era } from '../helpers/stdio-client.js';
import { repoRoot } from '../helpers/temp-dir.js';

type Text = { type: 'text'; text: string };
const MiB = 1024 * 1024;

describe.each<Era>(['legacy', 'auto'])('large inputs from a real client over stdio, %s era', (era) => {
  let c: Connected;
  let approvalsAsked = 0;

  beforeAll(async () => {
    c = await connectStdio({
      era,
      args: ['--skills', `${repoRoot}/skills`, '--no-watch'],
      capabilities: { elicitation: { form: {} } },
    });
    c.client.setRequestHandler('elicitation/create', () => {
      approvalsAsked++;
      return { action: 'decline' };
    });
  });
  afterAll(async () => {
    await c.close();
  });

  it('refuses a 5 MiB tool input with an actionable tool error before asking for approval', async () => {
    const r = await c.client.callTool({ name: 'csv-stats', arguments: { csv: 'a'.repeat(5 * MiB) } });
    expect(r.isError).toBe(true);
    expect(r._meta?.['skills-mcp/code']).toBe('INPUT_TOO_LARGE');
    const text = (r.content as Text[])[0]!.text;
    expect(text).toContain('tool inputs are limited to 4 MiB');
    expect(text).toMatch(/Hint: Pass large data by reference/);
    expect(approvalsAsked).toBe(0);
    expect(c.stderr()).toContain('tool input over the size limit refused');
  });

  it('lets a 3 MiB tool input through to the approval step', async () => {
    const r = await c.client.callTool({ name: 'csv-stats', arguments: { csv: `x\n${'1'.repeat(3 * MiB)}` } });
    expect(r._meta?.['skills-mcp/code']).not.toBe('INPUT_TOO_LARGE');
    expect(approvalsAsked).toBe(1);
  });

  it('gets a prompt JSON-RPC error for a 20 MiB message (its id read from the last bytes) and keeps its connection', async () => {
    const call = c.client.callTool({ name: 'csv-stats', arguments: { csv: 'a'.repeat(20 * MiB) } });
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as ProtocolError).code).toBe(-32600);
    expect((err as ProtocolError).message).toContain('Message too large');
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name)).toContain('csv-stats');
    expect(c.errors).toEqual([]);
  });
});
