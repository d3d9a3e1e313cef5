import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

/**
 * As a client without forms (Gemini CLI, Cline, the Inspector CLI) sees it: an allow rule matches the call, but the
 * default `fallback: deny` runs nothing for such a client. The refusal must say that, not "it needs approval", and
 * name the two ways to run there: `fallback: rules-only` (the allow rule then decides) or the approval console.
 */
describe('a matching allow rule refused by fallback: deny', () => {
  const start = gatedServers();
  const CONFIG = 'approval:\n  mode: ask\n  rules:\n    - skill: echo\n      action: allow\n';

  it.each<Era>(['legacy', 'auto'])('says what happened and how to run here (%s)', async (era) => {
    const { c } = await start(CONFIG, { era, elicitation: false });
    const r = await c.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    const text = textOf(r);
    expect(r.isError).toBe(true);
    expect(text).not.toMatch(/needs approval/i);
    expect(text).toContain('rules[0] (skill: echo → allow) allows');
    expect(text).toContain('fallback: deny');
    expect(text).toContain('fallback: rules-only');
    expect(text).toContain('approval console');
    // Only the fallback line is needed: the rule is there already.
    expect(text).not.toContain('action: allow');
  });
});
