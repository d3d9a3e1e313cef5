import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';

const sha12 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 12);

/**
 * Plays the model: the form lists only the first 8 input keys and 12 arguments, with the rest in a block below.
 * The model puts its payload in the 9th key (or the 13th argument), where it was shown only as its first 60
 * characters, under "each line as the script gets it", and the risk stayed LOW. A long value past the caps must be
 * shown in full like any other (or raise the risk).
 */
describe.each<Era>(['legacy', 'auto'])('long values past the key and argument caps, %s era', (era) => {
  const start = gatedServers();
  const payload = `import os; os.system("sh -c 'evil'")  # ${'x'.repeat(300)} HIDDEN-TAIL`;

  const formFor = async (args: Record<string, unknown>) => {
    const { c } = await start('approval:\n  mode: ask\n', { era });
    let message = '';
    c.client.setRequestHandler('elicitation/create', (req) => {
      message = (req.params as { message: string }).message;
      return Promise.resolve({ action: 'decline' });
    });
    await c.client.callTool({ name: 'run_skill_script', arguments: { skill: 'echo', ...args } });
    return message;
  };

  it('shows the 9th input key in full', async () => {
    const input: Record<string, unknown> = {};
    for (let i = 0; i < 8; i++) input[`a${i}`] = 'ok';
    input.zz = payload;
    const message = await formFor({ script: 'scripts/main.py', input });
    expect(message).toContain(`sha256 ${sha12(payload)}; in full below`);
    expect(message).toContain('HIDDEN-TAIL');
    expect(message).toMatch(/^Risk: +LOW$/m);
  });

  it('shows the 13th argument in full', async () => {
    const args = [...Array.from({ length: 12 }, () => 'x'), payload];
    const message = await formFor({ script: 'scripts/main.py', args });
    expect(message).toContain(`sha256 ${sha12(payload)}; in full below`);
    expect(message).toContain('HIDDEN-TAIL');
    expect(message).toMatch(/^Risk: +LOW$/m);
  });

  it('raises the risk for a secret-named 9th key', async () => {
    const { c } = await start('approval:\n  mode: ask\n  secret_names: [api_token]\n', { era });
    let message = '';
    c.client.setRequestHandler('elicitation/create', (req) => {
      message = (req.params as { message: string }).message;
      return Promise.resolve({ action: 'decline' });
    });
    const input: Record<string, unknown> = {};
    for (let i = 0; i < 8; i++) input[`a${i}`] = 'ok';
    input.api_token = 'abc';
    await c.client.callTool({
      name: 'run_skill_script',
      arguments: { skill: 'echo', script: 'scripts/main.py', input },
    });
    expect(message).toMatch(/^Risk: +MEDIUM \(input-not-shown\)$/m);
  });
});
