import { describe, expect, it } from 'vitest';
import { gatedServers, type GatedServer, type GatedServerOptions } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';
import { waitFor } from '../helpers/wait-for.js';
import { DESKTOP, HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase, pendingLinks } from '../console/helpers/console-server.js';
import { rawRequest } from '../console/helpers/raw-request.js';
import { addCanary, canaryRan } from './helpers/canary.js';
import { callDecisions } from './helpers/call-decisions.js';
import { enrollWith, pageWithPasskey } from './helpers/passkey-browser.js';

const POLICY =
  'approval:\n  mode: ask\n  console: true\n  require: passkey\n  console_open_browser: false\n' +
  '  console_wait_ms: 60000\n';

/** What Codex declares: both elicitation modes. */
const URL_CLIENT = { elicitation: { form: {}, url: {} } };

/** The payloads of the events of `type`, from `audit export`. */
function payloads(auditPath: string, type: string): Record<string, unknown>[] {
  return runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', auditPath])
    .stdout.split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> })
    .filter((e) => e.type === type)
    .map((e) => e.payload);
}

interface Asked {
  params: Record<string, unknown>;
}

/** Answers every elicitation with `action`, keeping what was asked. */
function answerEvery(s: GatedServer, action: 'accept' | 'decline'): Asked[] {
  const asked: Asked[] = [];
  s.c.client.setRequestHandler('elicitation/create', (req) => {
    asked.push({ params: req.params });
    return Promise.resolve({ action });
  });
  return asked;
}

describe.skipIf(!HAS_CHROMIUM).each<Era>(['legacy', 'auto'])(
  'a passkey approval sent as a URL elicitation (era %s)',
  (era) => {
    const browser = sharedChromium();
    const start = gatedServers();

    /** A server with the console on and a passkey enrolled, a call waiting, and the URL elicitation it sent. */
    async function waitingCall(
      action: 'accept' | 'decline',
      capabilities: GatedServerOptions['capabilities'] = URL_CLIENT,
    ) {
      const s = await start(POLICY, {
        era,
        capabilities,
        setup: addCanary,
        env: { SKILLS_MCP_LOG_LEVEL: 'info' },
      });
      await waitFor(() => s.c.stderr().includes('approval console ready'), 10_000, 'the console to start');
      const asked = answerEvery(s, action);
      const completed: string[] = [];
      s.c.client.setNotificationHandler('notifications/elicitation/complete', (n) => {
        completed.push(n.params.elicitationId);
        return Promise.resolve();
      });
      const { context, page } = await pageWithPasskey(browser());
      await enrollWith(page, s.fx.auditPath, 'alice');
      const result = s.c.client.callTool({ name: 'canary', arguments: {} });
      result.catch(() => undefined);
      const first = await waitFor(() => asked[0], 20_000, 'the URL elicitation');
      return { s, asked, completed, context, page, result, params: first.params };
    }

    it('sends the approval page as a secret-free URL; approved there with the passkey, the call runs', async () => {
      const { s, asked, completed, context, page, result, params } = await waitingCall('accept');
      try {
        const base = consoleBase(s.fx.auditPath);
        const secret = new URL(base).pathname.split('/')[1]!;
        expect(params.mode).toBe('url');
        expect(String(params.url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/approve\/[A-Za-z0-9_-]+$/);
        expect(new URL(String(params.url)).port).toBe(new URL(base).port);
        expect(JSON.stringify(params)).not.toContain(secret);
        expect(String(params.message)).toMatch(/canary[\s\S]*passkey/);
        if (era === 'legacy') expect(params.elicitationId).toMatch(/^[A-Za-z0-9_-]+$/);
        // The person's browser is signed in to the console (its link), then opens the URL the client got.
        await page.goto(base);
        await page.goto(String(params.url));
        await page.getByRole('button', { name: 'Approve once' }).waitFor();
        await page.getByRole('button', { name: 'Approve once' }).click();
        await page
          .getByText(/Approved once|Not approved: |Not accepted|Confirm with/)
          .first()
          .waitFor();
        expect(await page.getByText(/^Not approved: /).count(), await page.locator('main').innerText()).toBe(
          0,
        );
        const r = await result;
        expect(r.isError, textOf(r)).toBeFalsy();
        expect(canaryRan(s.fx)).toBe(true);
        expect(asked).toHaveLength(1);
        if (era === 'legacy')
          await waitFor(
            () => completed.includes(String(params.elicitationId)),
            10_000,
            'elicitation/complete',
          );
        await s.c.close();
        expect(callDecisions(s.fx)).toEqual(['ok:approved:user:console']);
        expect(payloads(s.fx.auditPath, 'approval_requested')).toEqual([
          expect.objectContaining({ channel: 'console', url_elicitation: true }),
        ]);
        const [decided] = payloads(s.fx.auditPath, 'approval_decided');
        expect((decided?.passkey as Record<string, unknown> | undefined)?.signature).toMatch(
          /^[A-Za-z0-9_-]+$/,
        );
        const verified = runCli(['audit', 'verify', '--audit', s.fx.auditPath]);
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);
        expect(verified.stdout).toContain('passkeys: ok, 1 passkey approval');
      } finally {
        await context.close();
      }
    }, 120_000);

    it('leads a browser without the console sign-in and the passkey nowhere: nothing runs', async () => {
      const { s, context, params } = await waitingCall('accept');
      const other = await browser().newContext({ viewport: DESKTOP });
      try {
        const page = await other.newPage();
        await page.goto(String(params.url));
        await page.getByText('Open the skills-mcp approval console first').waitFor();
        expect(new URL(page.url()).pathname).toBe(new URL(String(params.url)).pathname);
        expect(await page.getByRole('button').count()).toBe(0);
        expect(await page.locator('a').count()).toBe(0);
        // The same page for an id that does not exist: the URL tells its holder nothing.
        const unknown = await rawRequest(String(params.url).replace(/[^/]+$/, 'AAAAAAAAAAAAAAAA'));
        const known = await rawRequest(String(params.url));
        expect(known.status).toBe(200);
        expect(known.body).toBe(unknown.body);
        expect(canaryRan(s.fx)).toBe(false);
        expect(callDecisions(s.fx)).toEqual(['requested:-:-:console']);
        expect(await pendingLinks(consoleBase(s.fx.auditPath))).toHaveLength(1);
      } finally {
        await other.close();
        await context.close();
      }
    }, 120_000);

    it('tells a form-only client where to approve, with the secret-free link and no form', async () => {
      const s = await start(POLICY.replace('60000', '3000'), {
        era,
        setup: addCanary,
        env: { SKILLS_MCP_LOG_LEVEL: 'info' },
      });
      await waitFor(() => s.c.stderr().includes('approval console ready'), 10_000, 'the console to start');
      const asked = answerEvery(s, 'accept');
      const { context, page } = await pageWithPasskey(browser());
      try {
        await enrollWith(page, s.fx.auditPath, 'alice');
        const r = await s.c.client.callTool({ name: 'canary', arguments: {} });
        const base = consoleBase(s.fx.auditPath);
        expect(r.isError).toBe(true);
        expect(r._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
        const link = /http:\/\/127\.0\.0\.1:(\d+)\/approve\/[A-Za-z0-9_-]+/.exec(textOf(r));
        expect(link?.[1], textOf(r)).toBe(new URL(base).port);
        expect(textOf(r)).not.toContain(new URL(base).pathname.split('/')[1]!);
        expect(asked).toHaveLength(0);
        expect(canaryRan(s.fx)).toBe(false);
      } finally {
        await context.close();
      }
    }, 120_000);

    it('withdraws the request when a URL-only client declines the URL elicitation: nothing runs', async () => {
      const { s, context, result, params } = await waitingCall('decline', { elicitation: { url: {} } });
      try {
        expect(params.mode).toBe('url');
        const r = await result;
        expect(r.isError).toBe(true);
        expect(canaryRan(s.fx)).toBe(false);
        expect(await pendingLinks(consoleBase(s.fx.auditPath))).toEqual([]);
        await s.c.close();
        // Recorded as the client's answer: declined, or answered unseen when it came faster than a person reads.
        expect(callDecisions(s.fx)).toEqual([
          expect.stringMatching(/^denied:denied:(declined|answered_unseen):/),
        ]);
        expect(payloads(s.fx.auditPath, 'approval_decided')).toEqual([
          expect.objectContaining({ decision: 'denied', channel: 'elicitation' }),
        ]);
      } finally {
        await context.close();
      }
    }, 120_000);
  },
);
