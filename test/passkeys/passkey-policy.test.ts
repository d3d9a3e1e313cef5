import { describe, expect, it } from 'vitest';
import { gatedServers, type GatedServer } from '../helpers/gated-server.js';
import { textOf } from '../helpers/text-of.js';
import { waitFor } from '../helpers/wait-for.js';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase, pendingLinks } from '../console/helpers/console-server.js';
import { postDecision } from '../console/helpers/raw-request.js';
import { addCanary, canaryRan } from './helpers/canary.js';
import { callDecisions } from './helpers/call-decisions.js';
import { enrollWith, pageWithPasskey } from './helpers/passkey-browser.js';

const policy = (extra = '') =>
  'approval:\n  mode: ask\n  require: passkey\n  console_open_browser: false\n  console_wait_ms: 60000\n' +
  extra;

/** Counts the approval forms the client is shown, and approves each one. */
function approveEveryForm(s: GatedServer): { asked: number } {
  const seen = { asked: 0 };
  s.c.client.setRequestHandler('elicitation/create', () => {
    seen.asked++;
    return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
  });
  return seen;
}

const PASSKEY_HELP = /requires a passkey approval[\s\S]*skills-mcp approvers enroll[\s\S]*--approval-console/;

describe('approval.require: passkey', () => {
  const start = gatedServers();

  it('never runs a call on an approving answer in the client form: refused, passkey_required', async () => {
    const s = await start(policy(), { setup: addCanary });
    const seen = approveEveryForm(s);
    const r = await s.c.client.callTool({ name: 'canary', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(PASSKEY_HELP);
    expect(seen.asked).toBe(0);
    expect(canaryRan(s.fx)).toBe(false);
    await s.c.close();
    expect(callDecisions(s.fx)).toEqual(['denied:denied:passkey_required:none']);
  }, 60_000);

  it('refuses before asking anyone when the console runs but no passkey is enrolled', async () => {
    const s = await start(policy('  console: true\n'), {
      setup: addCanary,
      env: { SKILLS_MCP_LOG_LEVEL: 'info' },
    });
    await waitFor(() => s.c.stderr().includes('approval console ready'), 10_000, 'the console to start');
    const seen = approveEveryForm(s);
    const r = await s.c.client.callTool({ name: 'canary', arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(PASSKEY_HELP);
    expect(seen.asked).toBe(0);
    expect(await pendingLinks(consoleBase(s.fx.auditPath))).toEqual([]);
    expect(canaryRan(s.fx)).toBe(false);
    await s.c.close();
    expect(callDecisions(s.fx)).toEqual(['denied:denied:passkey_required:none']);
  }, 60_000);

  it('still asks in the client form a call outside a scoped requirement', async () => {
    const scoped = 'approval:\n  mode: ask\n  require: { passkey: { skills: [deploy] } }\n';
    const s = await start(scoped, { setup: addCanary });
    const seen = approveEveryForm(s);
    const r = await s.c.client.callTool({ name: 'canary', arguments: {} });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(seen.asked).toBe(1);
    expect(canaryRan(s.fx)).toBe(true);
  }, 60_000);
});

describe.skipIf(!HAS_CHROMIUM)('approval.require: passkey, with a passkey enrolled', () => {
  const browser = sharedChromium();
  const start = gatedServers();

  /** A server whose client approves every form it is shown, with the console on and a passkey enrolled. */
  async function enrolledServer() {
    const s = await start(policy('  console: true\n'), {
      setup: addCanary,
      env: { SKILLS_MCP_LOG_LEVEL: 'info' },
    });
    await waitFor(() => s.c.stderr().includes('approval console ready'), 10_000, 'the console to start');
    const seen = approveEveryForm(s);
    const { context, page } = await pageWithPasskey(browser());
    await enrollWith(page, s.fx.auditPath, 'alice');
    const base = consoleBase(s.fx.auditPath);
    const result = s.c.client.callTool({ name: 'canary', arguments: {} });
    result.catch(() => undefined);
    const link = await waitFor(
      async () => (await pendingLinks(base))[0],
      20_000,
      'the approval in the console',
    );
    return { s, seen, context, page, result, link };
  }

  it('asks in the console, not the client form, and runs the call approved with the passkey', async () => {
    const { s, seen, context, page, result, link } = await enrolledServer();
    try {
      await page.goto(link);
      await page.getByRole('button', { name: 'Approve once' }).waitFor();
      await page.getByRole('button', { name: 'Approve once' }).click();
      await page
        .getByText(/Approved once|Not approved: |Not accepted|Confirm with/)
        .first()
        .waitFor()
        .catch(async (e: unknown) => {
          throw new Error(`${String(e)}\n${page.url()}\n${await page.locator('body').innerText()}`);
        });
      expect(await page.getByText(/^Not approved: /).count(), await page.locator('main').innerText()).toBe(0);
      const r = await result;
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(seen.asked).toBe(0);
      expect(canaryRan(s.fx)).toBe(true);
      await s.c.close();
      expect(callDecisions(s.fx)).toEqual(['ok:approved:user:console']);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('asks for a passkey again on the next call after "Approve for this session": each call needs its own assertion', async () => {
    const { s, seen, context, page, result, link } = await enrolledServer();
    try {
      await page.goto(link);
      await page.getByRole('button', { name: 'Approve for this session' }).click();
      const r = await result;
      expect(r.isError, textOf(r)).toBeFalsy();
      // The same call again, in the same session: it waits in the console for a passkey, it does not run.
      const base = consoleBase(s.fx.auditPath);
      const again = s.c.client.callTool({ name: 'canary', arguments: {} });
      again.catch(() => undefined);
      const second = await waitFor(
        async () => (await pendingLinks(base))[0],
        20_000,
        'the second call in the console',
      );
      await page.goto(second);
      await page.getByRole('button', { name: 'Approve once' }).click();
      const r2 = await again;
      expect(r2.isError, textOf(r2)).toBeFalsy();
      expect(seen.asked).toBe(0);
      await s.c.close();
      expect(callDecisions(s.fx)).toEqual([
        'ok:approved_for_session:user:console',
        'ok:approved:user:console',
      ]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('refuses an approving form post without a passkey assertion: nothing runs', async () => {
    const { s, seen, context, link } = await enrolledServer();
    try {
      const posted = await postDecision(link, 'approved');
      expect(posted.status).toBe(403);
      expect(seen.asked).toBe(0);
      expect(canaryRan(s.fx)).toBe(false);
      expect(callDecisions(s.fx)).toEqual(['requested:-:-:console']);
    } finally {
      await context.close();
    }
  }, 90_000);
});
