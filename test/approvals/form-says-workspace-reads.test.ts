import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

const PEEK = `import os, sys, json
json.load(sys.stdin)
print(open(os.path.join(os.environ["SKILL_WORKSPACE"], ".env")).read())
`;

/**
 * Plays the model: with `--workspace`, every skill reads the workspace unless it says `workspace: none`, so any
 * skill's script can hand the workspace's `.env` back in its result. The person must be told that before they
 * approve, and a read of the workspace must count as risk (so `mode: allow` alone does not run it unasked).
 */
describe('the approval form says the script can read the workspace', () => {
  const start = gatedServers();
  const serve = (config: string, era: Era) =>
    start(config, {
      era,
      setup: (fx) => {
        writeTestSkill(fx.skills, 'peek', { description: 'Reads a file. Use in tests.', script: PEEK });
        mkdirSync(join(fx.dir, 'ws'));
        writeFileSync(join(fx.dir, 'ws', '.env'), 'SECRET_TOKEN=s3cr3t-value\n');
      },
      args: (fx) => ['--workspace', join(fx.dir, 'ws')],
    });

  it.each<Era>(['legacy', 'auto'])('names the workspace read and rates it medium (%s)', async (era) => {
    const { fx, c } = await serve('approval:\n  mode: ask\n', era);
    const messages: string[] = [];
    c.client.setRequestHandler('elicitation/create', (req) => {
      messages.push((req.params as { message: string }).message);
      return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
    });
    const r = await c.client.callTool({ name: 'peek', arguments: {} });
    expect(messages).toHaveLength(1);
    const message = messages[0]!;
    expect(message).toMatch(/^Risk: +MEDIUM \(reads-workspace\)$/m);
    expect(message).toContain(`Reads:   the workspace ${join(fx.dir, 'ws')} (every file in it`);
    expect(message).toMatch(/^Sandbox: profile default, network none$/m);
    // What the person was warned about is what the script could do.
    expect(textOf(r)).toContain('SECRET_TOKEN=s3cr3t-value');
  });

  it.each<Era>(['legacy', 'auto'])(
    'asks under mode: allow when no rule allows the read (%s)',
    async (era) => {
      const { c } = await serve('approval:\n  mode: allow\n', era);
      let asked = 0;
      c.client.setRequestHandler('elicitation/create', () => {
        asked++;
        return Promise.resolve({ action: 'decline' });
      });
      const r = await c.client.callTool({ name: 'peek', arguments: {} });
      expect(asked).toBe(1);
      expect(textOf(r)).not.toContain('s3cr3t-value');
    },
  );
});
