import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ARTIFACTS,
  DESKTOP,
  HAS_CHROMIUM,
  PHONE,
  sharedChromium,
  tabTo,
  watchErrors,
} from './helpers/browser.js';
import { consoleConfig, consoleServers, textOf } from './helpers/console-server.js';
import { rawRequest } from './helpers/raw-request.js';

if (!HAS_CHROMIUM) {
  console.warn(
    'SKIPPED: the approval console browser tests need Debian chromium at /usr/bin/chromium (apt-get install -y chromium).',
  );
}

describe.skipIf(!HAS_CHROMIUM)('approval console in headless Chromium (/usr/bin/chromium)', () => {
  const browser = sharedChromium();
  const startServer = consoleServers();
  let ctx: BrowserContext | undefined;
  afterEach(async () => {
    // The page first (it polls the console); the servers close after (hooks run last registered first).
    await ctx?.close();
    ctx = undefined;
  });

  const open = async (url: string, opts: { javaScriptEnabled?: boolean } = {}) => {
    ctx = await browser().newContext({ viewport: DESKTOP, ...opts });
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    await page.goto(url);
    return { page, errors };
  };

  const shot = async (page: Page, name: string, size: { width: number; height: number }) => {
    await page.setViewportSize(size);
    await page.screenshot({
      path: join(ARTIFACTS, `${name}-${size.width}x${size.height}.png`),
      fullPage: true,
    });
  };

  it('shows a pending approval, runs the call when a person clicks Approve once, and audits channel console', async () => {
    const s = await startServer();
    const pending = s.call({ text: 'hello', note: 'x'.repeat(100), token: 'tok-canary' });
    const { page, errors } = await open(await pending.link);

    const card = page.getByRole('region', { name: /Run scripts\/main\.py of skill echo/ });
    await expect(card.isVisible()).resolves.toBe(true);
    const text = await card.innerText();
    for (const fact of [
      'Skill',
      'Script',
      'bundle',
      'Command',
      'Input',
      '3 keys',
      'Sandbox',
      'profile default',
    ])
      expect(text).toContain(fact);
    for (const fact of ['Network', 'Writes', 'Risk', 'MEDIUM', 'not shown in full', 'Policy', 'ask, by'])
      expect(text.toLowerCase()).toContain(fact.toLowerCase());
    expect(text).toContain('"hello"');
    expect(text).toContain('(100 characters, 1 line, sha256 ');
    expect(text).toContain("; in full on the call's page)");
    expect(text.indexOf('Risk')).toBeLessThan(text.indexOf('Command'));
    expect(await page.content()).not.toContain('x'.repeat(100));
    await shot(page, 'approval-pending', DESKTOP);
    await shot(page, 'approval-pending', PHONE);
    await page.setViewportSize(DESKTOP);

    await page.getByRole('button', { name: 'Approve once' }).click();
    const r = await pending.result;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({
      echo: { text: 'hello', note: 'x'.repeat(100), token: 'tok-canary' },
      ok: true,
    });
    await page.getByText('ran: ok').waitFor();
    expect(s.decisions()).toEqual(['ok:approved:user:console']);

    await page.goto(s.base);
    const calls = page.getByRole('region', { name: 'Recent calls' });
    await calls.getByText('echo / scripts/main.py').waitFor();
    const row = await calls.innerText();
    expect(row).toContain('ok');
    expect(row).toContain('via console');
    expect(row).toContain('bwrap');
    await shot(page, 'audit', DESKTOP);
    await shot(page, 'audit', PHONE);
    await page.setViewportSize(DESKTOP);

    await calls.getByRole('link').first().click();
    await page.getByRole('heading', { name: 'Sandbox evidence' }).waitFor();
    const detail = await page.locator('main').innerText();
    for (const fact of [
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
      'adapter',
      'bwrap',
      'console',
    ])
      expect(detail).toContain(fact);
    await shot(page, 'call-detail', DESKTOP);
    expect(errors).toEqual([]);
  });

  it('reaches the decision buttons with the keyboard alone (Approve for this session)', async () => {
    const s = await startServer();
    const first = s.call();
    const { page, errors } = await open(await first.link);
    await tabTo(page, 'button[value="approved_for_session"]');
    await page.keyboard.press('Enter');
    expect((await first.result).isError).toBeFalsy();
    const again = await s.call().result;
    expect(again.isError).toBeFalsy();
    expect(s.decisions()).toEqual(['ok:approved_for_session:user:console', 'ok:approved:cached:session']);
    expect(errors).toEqual([]);
  });

  it('denies with JavaScript turned off (a plain form POST)', async () => {
    const s = await startServer();
    const pending = s.call();
    const link = await pending.link;
    const { page, errors } = await open(link, { javaScriptEnabled: false });
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    const r = await pending.result;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/user denied running echo\/scripts\/main\.py/);
    // Let the form POST's own navigation finish, then load the page afresh (a reload could race it).
    await page.waitForLoadState('load');
    await page.goto(link);
    await page.getByText('refused; not run').waitFor();
    expect(s.decisions()).toEqual(['denied:denied:user:console']);
    expect(errors).toEqual([]);
  });

  it('stops every later gated call of the session on "Deny and stop", without asking again', async () => {
    const s = await startServer();
    const pending = s.call();
    const { page, errors } = await open(await pending.link);
    await page.getByRole('button', { name: /Deny and stop all skill runs/ }).click();
    expect((await pending.result).isError).toBe(true);
    const later = await s.call({ text: 'other input' }).result;
    expect(later.isError).toBe(true);
    expect(textOf(later)).toMatch(/stopped all skill runs/);
    expect(s.decisions()).toEqual(['denied:abort:user:console', 'denied:denied:session_aborted:session']);
    expect(errors).toEqual([]);
  });

  it('keeps a decision made after the call answered "pending" for the retry, which runs that same call', async () => {
    const s = await startServer({ config: consoleConfig({ waitMs: 1000 }) });
    const asked = s.call({ text: 'later' });
    const first = await asked.result;
    expect(first.isError).toBe(true);
    expect(first._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    expect(textOf(first)).toMatch(/call this tool again with exactly the same arguments/);
    expect(textOf(first)).toMatch(/Only the user can decide, in the skills-mcp approval console/);
    const link = await asked.link;
    const { page, errors } = await open(link);
    await page.getByRole('button', { name: 'Approve once' }).click();
    await page.getByText('it runs when the tool is called again').waitFor();
    const retry = await s.call({ text: 'later' }).result;
    expect(retry.isError, textOf(retry)).toBeFalsy();
    expect(retry._meta?.['skills-mcp/call_id']).toBe(first._meta?.['skills-mcp/call_id']);
    expect(s.decisions()).toEqual(['ok:approved:user:console']);
    expect(errors).toEqual([]);
  });

  it('refuses a decision from another origin, and a GET to the decision URL changes nothing', async () => {
    const s = await startServer();
    const pending = s.call();
    const link = await pending.link;
    const { page, errors } = await open(link);
    const csrf = await page.locator('input[name="csrf"]').inputValue();

    // A page on another local origin that knows the link and even the token: its POST carries its own Origin.
    const evil = await serveEvilPage(link, csrf);
    try {
      const other = await ctx!.newPage();
      const refused = other.waitForResponse((res) => res.url() === link && res.request().method() === 'POST');
      await other.goto(evil.url);
      expect((await refused).status()).toBe(403);
      await other.close();
    } finally {
      evil.server.close();
    }

    // A model that can only fetch URLs: GETs with decision parameters change nothing.
    const host = { host: new URL(link).host };
    for (const url of [
      `${link}?decision=approved&csrf=${csrf}`,
      `${link}/approved`,
      `${s.base}?decision=approved`,
    ]) {
      expect((await rawRequest(url, { headers: host })).status).toBeLessThan(500);
    }
    // Without the secret, or from a foreign origin, or with the wrong token: refused.
    const form = `csrf=${encodeURIComponent(csrf)}&decision=approved`;
    const post = (headers: Record<string, string>, body = form) =>
      rawRequest(link, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    const origin = new URL(link).origin;
    expect((await post({})).status).toBe(403);
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ origin }, `csrf=wrong&decision=approved`)).status).toBe(403);
    expect((await rawRequest(link.replace(/\/[A-Za-z0-9_-]{40,}\//, '/'))).status).toBe(404);
    expect((await rawRequest(link, { headers: { host: `evil.example:${new URL(link).port}` } })).status).toBe(
      403,
    );

    // Still waiting for a person: the page still offers the buttons, and the audit has no decision.
    await page.reload();
    await expect(page.getByRole('button', { name: 'Approve once' }).isVisible()).resolves.toBe(true);
    expect(s.decisions()).toEqual(['requested:-:-:console']);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    expect((await pending.result).isError).toBe(true);
    expect(s.decisions()).toEqual(['denied:denied:user:console']);
    expect(errors).toEqual([]);
  });
});

/** A page on another 127.0.0.1 origin that auto-submits the decision form to the console. */
async function serveEvilPage(action: string, csrf: string): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><form id="f" method="post" action="${action}"><input name="csrf" value="${csrf}"><input name="decision" value="approved"></form><script>document.getElementById('f').submit()</script>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
