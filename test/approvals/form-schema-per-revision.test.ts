import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { startServer } from '../helpers/server-under-test.js';

type Params = Record<string, unknown> & {
  requestedSchema: { properties: { decision: Record<string, unknown> } };
};

/** Keys a 2025-06-18 client knows: ElicitRequest params and its EnumSchema (enum + enumNames, no default). */
const PARAMS_2025_06_18 = ['_meta', 'message', 'requestedSchema'];
const ENUM_2025_06_18 = ['type', 'title', 'description', 'enum', 'enumNames'];

/**
 * As a strict client of each protocol revision sees the approval form: 2025-06-18 has no titled `oneOf`, no
 * `default` on an enum and no `mode` (a strict client of that revision renders a free-text box otherwise);
 * 2025-11-25 and 2026-07-28 keep the titled single-select with its default.
 */
describe('the approval form schema follows the session protocol revision', () => {
  let fx: GatedFixture | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    fx?.cleanup();
    fx = client = undefined;
  });

  const formFor = async (revision: '2025-06-18' | '2025-11-25' | '2026-07-28'): Promise<Params> => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    const modern = revision === '2026-07-28';
    ({ client } = await startServer({
      transport: 'stdio',
      era: modern ? 'auto' : 'legacy',
      args: fx.args,
      capabilities: { elicitation: { form: {} } },
      ...(modern ? {} : { supportedProtocolVersions: [revision] }),
    }));
    let seen: Params | undefined;
    client.setRequestHandler('elicitation/create', (req) => {
      seen = req.params as unknown as Params;
      return Promise.resolve({ action: 'accept', content: { decision: 'denied' } });
    });
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(r.isError).toBe(true);
    expect(seen).toBeDefined();
    return seen!;
  };

  it('sends 2025-06-18 sessions enum + enumNames, no oneOf, no default, no mode', async () => {
    const params = await formFor('2025-06-18');
    expect(Object.keys(params).filter((k) => !PARAMS_2025_06_18.includes(k))).toEqual([]);
    const decision = params.requestedSchema.properties.decision;
    expect(Object.keys(decision).filter((k) => !ENUM_2025_06_18.includes(k))).toEqual([]);
    expect(decision.enum).toEqual(['approved', 'approved_for_session', 'denied', 'abort']);
    expect(decision.enumNames).toEqual([
      'Approve once',
      'Approve for this session',
      'Deny',
      'Deny and stop all skill runs in this session',
    ]);
  });

  it.each(['2025-11-25', '2026-07-28'] as const)('keeps the titled single-select on %s', async (revision) => {
    const params = await formFor(revision);
    expect(params.mode).toBe('form');
    const decision = params.requestedSchema.properties.decision;
    expect(decision.oneOf).toEqual([
      { const: 'approved', title: 'Approve once' },
      { const: 'approved_for_session', title: 'Approve for this session' },
      { const: 'denied', title: 'Deny' },
      { const: 'abort', title: 'Deny and stop all skill runs in this session' },
    ]);
    expect(decision.default).toBe('denied');
    expect(decision.enum).toBeUndefined();
  });
});
