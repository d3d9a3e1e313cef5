import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Route } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, sharedChromium, DESKTOP } from '../console/helpers/browser.js';
import { consoleServers, type ConsoleServer } from '../console/helpers/console-server.js';
import { addCanary, canaryRan } from './helpers/canary.js';
import { enrollWith, pageWithPasskey, type InPage } from './helpers/passkey-browser.js';

/** Where the passkey pages are saved for a person to look at. */
const SHOTS = join(process.env.CI_ARTIFACTS ?? '/tmp/ci-artifacts', 'passkeys');

/** Flips one bit of the byte at `at` of a base64url string. */
function flipByte(b64u: string, at: number): string {
  const bytes = Buffer.from(b64u, 'base64url');
  bytes[at % bytes.length]! ^= 0x01;
  return bytes.toString('base64url');
}

interface AssertionPost {
  csrf: string;
  decision: string;
  response: { id: string; response: Record<string, string> } & Record<string, unknown>;
}

/** The page's assertion post, rewritten by `edit` before it reaches the server. */
async function rewriteAssertion(page: Page, edit: (body: AssertionPost) => AssertionPost): Promise<void> {
  await page.route(/\/approvals\/[^/]+\/passkey$/, async (route: Route) => {
    const body = JSON.parse(route.request().postData() ?? '{}') as AssertionPost;
    await route.continue({ postData: JSON.stringify(edit(body)) });
  });
}

/** Presses Approve once and waits for what the page says. */
async function approveOnce(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Approve once' }).click();
  const said = page.getByText(/^Not approved: |Approved once/).first();
  await said.waitFor();
  return (await said.textContent()) ?? '';
}

describe.skipIf(!HAS_CHROMIUM)('refusing passkey approvals that do not hold', () => {
  const browser = sharedChromium();
  const startServer = consoleServers();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  /** A console server with the canary skill and alice's passkey enrolled in `page`'s authenticator. */
  async function enrolled(): Promise<{ s: ConsoleServer; page: Page }> {
    const s = await startServer({ setup: addCanary });
    const { context, page } = await pageWithPasskey(browser());
    closers.push(() => context.close());
    mkdirSync(SHOTS, { recursive: true });
    await enrollWith(page, s.fx.auditPath, 'alice laptop', join(SHOTS, 'enroll.png'));
    return { s, page };
  }

  const nothingRan = (s: ConsoleServer, waiting: number) => {
    expect(canaryRan(s.fx)).toBe(false);
    expect(s.decisions()).toEqual(Array<string>(waiting).fill('requested:-:-:console'));
  };

  it('refuses an assertion whose signature or authenticator data was changed: nothing runs', async () => {
    const { s, page } = await enrolled();
    const call = s.call({}, 'canary');
    await page.goto(await call.link);
    await page.screenshot({ path: join(SHOTS, 'approval.png') });
    await page.getByText('Approving asks for your enrolled passkey.').waitFor();
    let field = 'signature';
    await rewriteAssertion(page, (b) => {
      b.response.response[field] = flipByte(b.response.response[field]!, 7);
      return b;
    });
    expect(await approveOnce(page)).toBe('Not approved: the passkey assertion does not verify');
    await page.screenshot({ path: join(SHOTS, 'approval-refused.png') });
    nothingRan(s, 1);
    // The challenge was used up by the refused try: the next one is asked afresh, and refused again.
    field = 'authenticatorData';
    await page.reload();
    expect(await approveOnce(page)).toBe('Not approved: the passkey assertion does not verify');
    nothingRan(s, 1);
  }, 90_000);

  it('refuses a valid assertion made for one call when posted for another: nothing runs', async () => {
    const { s, page } = await enrolled();
    const a = s.call({}, 'canary');
    const linkA = await a.link;
    const b = s.call({ other: 'call' }, 'canary');
    const linkB = await b.link;
    // The assertion for A is taken on its way and never reaches the server.
    let captured: AssertionPost | undefined;
    await page.route(/\/approvals\/[^/]+\/passkey$/, async (route) => {
      captured = JSON.parse(route.request().postData() ?? '{}') as AssertionPost;
      await route.abort();
    });
    await page.goto(linkA);
    expect(await approveOnce(page)).toMatch(/^Not approved: /);
    expect(captured?.response.id).toBeTruthy();
    await page.unroute(/\/approvals\/[^/]+\/passkey$/);
    // B's page: its challenge asked for, then A's assertion posted with B's token.
    await page.goto(linkB);
    const refused = await page.evaluate(
      async ({ assertion }) => {
        const w = globalThis as unknown as InPage;
        const csrf = w.document.querySelector('input[name=csrf]')!.value;
        const at = w.location.pathname;
        const post = (url: string, body: unknown) =>
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string } }));
        await post(`${at}/passkey-options`, { csrf, decision: 'approved' });
        return post(`${at}/passkey`, { csrf, decision: 'approved', response: assertion.response });
      },
      { assertion: captured! },
    );
    expect(refused).toEqual({ status: 403, body: { error: 'the passkey assertion does not verify' } });
    nothingRan(s, 2);
  }, 90_000);

  it('refuses an assertion from an authenticator never enrolled: nothing runs', async () => {
    const { s } = await enrolled();
    const call = s.call({}, 'canary');
    // A second browser with its own authenticator and its own credential for the console's RP id.
    const stranger = await pageWithPasskey(browser());
    closers.push(() => stranger.context.close());
    await stranger.page.goto(await call.link);
    await stranger.page.evaluate(async () => {
      const w = globalThis as unknown as InPage;
      await w.navigator.credentials.create({
        publicKey: {
          rp: { id: 'localhost', name: 'not enrolled' },
          user: { id: new Uint8Array([1, 2, 3]), name: 'mallory', displayName: 'mallory' },
          challenge: new Uint8Array(32),
          pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
          authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        },
      });
    });
    // Its browser asks for any credential, not only the enrolled one.
    await stranger.page.route(/\/passkey-options$/, async (route) => {
      const res = await route.fetch();
      const options = (await res.json()) as Record<string, unknown>;
      await route.fulfill({ response: res, json: { ...options, allowCredentials: [] } });
    });
    expect(await approveOnce(stranger.page)).toBe('Not approved: this passkey is not enrolled');
    nothingRan(s, 1);
  }, 90_000);

  it('leaves nothing approvable to a second browser without the passkey: nothing runs', async () => {
    const { s } = await enrolled();
    const call = s.call({}, 'canary');
    const other = await browser().newContext({ viewport: DESKTOP });
    closers.push(() => other.close());
    const page = await other.newPage();
    const cdp = await other.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    // No authenticator: the browser's prompt ends when the (shortened) timeout runs out.
    await page.route(/\/passkey-options$/, async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, json: { ...((await res.json()) as object), timeout: 500 } });
    });
    await page.goto(await call.link);
    expect(await approveOnce(page)).toMatch(/^Not approved: /);
    // The plain form, without JavaScript's assertion: refused too.
    const form = await page.evaluate(async () => {
      const w = globalThis as unknown as InPage;
      const csrf = w.document.querySelector('input[name=csrf]')!.value;
      const r = await fetch(w.location.pathname, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `csrf=${encodeURIComponent(csrf)}&decision=approved_for_session`,
      });
      return { status: r.status, text: await r.text() };
    });
    expect(form.status).toBe(403);
    expect(form.text).toContain('Approving needs your passkey');
    nothingRan(s, 1);
  }, 90_000);
});
