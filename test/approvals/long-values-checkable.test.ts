import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approveEvery, gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

const SKILLS = join(import.meta.dirname, '..', '..', 'skills');
const example = JSON.parse(
  readFileSync(join(SKILLS, 'csv-stats', 'assets', 'example-input.json'), 'utf8'),
) as { csv: string; top: number };
const sha12 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 12);

/**
 * As a person in a client with forms sees it, the approval console off (the default): a nine-line CSV is an
 * ordinary input. The form shows it so it can be checked there (a shortened line with its digest, and every line
 * in full below), rates the call LOW, and never sends the person to a console that is not running. Only a value
 * the form cannot hold raises the risk.
 */
describe('long values on the approval form', () => {
  const start = gatedServers();
  const serve = (era: Era) => start('approval:\n  mode: ask\n', { era, args: ['--skills', SKILLS] });

  it.each<Era>(['legacy', 'auto'])(
    'shows the csv-stats example in full and rates it LOW (%s)',
    async (era) => {
      const { c } = await serve(era);
      let message = '';
      c.client.setRequestHandler('elicitation/create', (req) => {
        message = (req.params as { message: string }).message;
        return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
      });
      const r = await c.client.callTool({ name: 'csv-stats', arguments: example });
      expect(message).toMatch(/^Risk: +LOW$/m);
      expect(message).not.toMatch(/console/i);
      expect(message).toContain(`  csv: "order_id,region,product,units,unit_price,shipped\\n1001,`);
      expect(message).toContain(`(278 characters, 9 lines, sha256 ${sha12(example.csv)}; in full below)`);
      for (const line of example.csv.split('\n').filter(Boolean))
        expect(message).toContain(`\n    | ${line}\n`);
      expect(JSON.parse(textOf(r))).toMatchObject({ rows: 8 });
    },
  );

  it('raises the risk for a value too long for the form, and says where it can be read', async () => {
    const { c } = await serve('legacy');
    let message = '';
    approveEvery(c, 'denied');
    c.client.setRequestHandler('elicitation/create', (req) => {
      message = (req.params as { message: string }).message;
      return Promise.resolve({ action: 'decline' });
    });
    const csv = `a,b\n${'1,2\n'.repeat(5000)}`;
    await c.client.callTool({ name: 'csv-stats', arguments: { csv } });
    expect(message).toMatch(/^Risk: +MEDIUM \(input-not-shown\)$/m);
    expect(message).toContain(`sha256 ${sha12(csv)}; too long for this form`);
    expect(message).toContain('no screen here shows them in full');
    expect(message).toContain('approval.console: true');
  });
});
