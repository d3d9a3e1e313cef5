import { describe, expect, it } from 'vitest';
import { DESKTOP, HAS_CHROMIUM, sharedChromium } from './helpers/browser.js';
import { consoleServers, textOf } from './helpers/console-server.js';

describe.skipIf(!HAS_CHROMIUM)('approval console index: the card under the pointer stays put', () => {
  const browser = sharedChromium();
  const startServer = consoleServers();

  it('approves the request the pointer rested on, though the model sent another one meanwhile', async () => {
    const s = await startServer();
    const a = s.call({ text: 'request A' });
    await a.link;
    const ctx = await browser().newContext({ viewport: DESKTOP });
    try {
      const page = await ctx.newPage();
      await page.goto(s.base);
      const button = page.getByRole('button', { name: 'Approve once' });
      const box = (await button.first().boundingBox())!;
      // The person rests the pointer on A's button; the model sends B; the page refreshes (every 2 s).
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      const b = s.call({ text: 'request B' });
      await b.link;
      await page.waitForTimeout(5000);
      await page.mouse.down();
      await page.mouse.up();
      const ran = await a.result;
      expect(ran.isError, textOf(ran)).toBeFalsy();
      expect(JSON.stringify(ran.structuredContent)).toContain('request A');
      // B is still waiting for its own decision.
      expect(s.decisions()).toEqual(['ok:approved:user:console', 'requested:-:-:console']);
    } finally {
      await ctx.close();
    }
  });
});
