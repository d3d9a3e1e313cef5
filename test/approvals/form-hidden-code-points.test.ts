import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';

type Raw = { inputRequests?: Record<string, { params?: { message?: string } }> };

/**
 * Plays the model: it sends a file name followed by code points no font draws (unassigned default-ignorable ones
 * such as U+2065, U+E01F0–E0FFF, U+FFF0, and private-use ones). The person must see them as code points, as
 * with Unicode tags: otherwise the form shows `"report.txt"` while the script gets something else.
 */
describe('the approval form shows code points that draw as nothing', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let c: Connected | undefined;
  afterEach(async () => {
    await c?.close();
    fx?.cleanup();
    fx = c = undefined;
  });

  it.each([
    ['unassigned default-ignorable', 'report.txt\u2065\u{E01F0}\u{E0FFF}\uFFF0'],
    ['private-use', 'report.txt\uE000\u{F0000}'],
  ])('escapes %s code points after a file name', async (_what, text) => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    c = await connectStdio({
      era: 'auto',
      args: ['--skills', fx.skills, '--config', fx.configFile, '--audit', fx.auditPath, '--no-watch'],
      capabilities: { elicitation: { form: {} } },
    });
    const r = (await c.client.request(
      { method: 'tools/call', params: { name: 'echo', arguments: { text } } } as never,
      { allowInputRequired: true } as never,
    )) as Raw;
    const message = r.inputRequests?.approval?.params?.message ?? '';
    expect(message).toContain('text: "report.txt');
    expect(message).not.toMatch(/[\p{Cn}\p{Co}]/u);
  });
});
