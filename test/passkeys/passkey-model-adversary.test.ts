import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase, pendingLinks } from '../console/helpers/console-server.js';
import { rawRequest } from '../console/helpers/raw-request.js';
import { addCanary, canaryRan } from './helpers/canary.js';
import { enrollWith, pageWithPasskey, type InPage } from './helpers/passkey-browser.js';

const POLICY =
  'approval:\n  mode: ask\n  require: passkey\n  console: true\n  console_open_browser: false\n  console_wait_ms: 60000\n';

const URLS = /https?:\/\/(?:localhost|127\.0\.0\.1):\d+\/[^\s"'<>)\]]*/g;

describe.skipIf(!HAS_CHROMIUM)('the model as adversary, with approval.require: passkey', () => {
  const browser = sharedChromium();
  const start = gatedServers();

  it('cannot approve its own call with what it sees, its HTTP client or its own passkey', async () => {
    const s = await start(POLICY, { setup: addCanary, env: { SKILLS_MCP_LOG_LEVEL: 'debug' } });
    await waitFor(() => s.c.stderr().includes('approval console ready'), 10_000, 'the console to start');
    // The person enrolls; the model only ever gets the console's origin, never the link with its secret.
    const person = await pageWithPasskey(browser());
    const model = await pageWithPasskey(browser());
    try {
      await enrollWith(person.page, s.fx.auditPath, 'alice');
      const base = consoleBase(s.fx.auditPath);
      const origin = `http://localhost:${new URL(base).port}`;
      // What the model holds: every form answered with accept, every result, _meta, progress and log line.
      const seen: string[] = [];
      s.c.client.setRequestHandler('elicitation/create', (req) => {
        seen.push(JSON.stringify(req));
        return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
      });
      s.c.client.setNotificationHandler('notifications/message', (n: { params: unknown }) => {
        seen.push(JSON.stringify(n.params));
      });
      const result = s.c.client.callTool(
        { name: 'canary', arguments: {} },
        { onprogress: (p) => seen.push(JSON.stringify(p)) },
      );
      result.catch(() => undefined);
      const [link] = await waitFor(
        async () => {
          const l = await pendingLinks(base);
          return l.length > 0 ? l : undefined;
        },
        20_000,
        'the approval in the console',
      );
      const approvalId = link!.split('/').at(-1)!;
      const heard = () => [...seen, s.c.stderr()].join('\n');
      // The secret of the console is nowhere the model can read.
      const secret = new URL(base).pathname.split('/')[1]!;
      expect(heard()).not.toContain(secret);

      // Its HTTP client against the routes it can guess, with and without the approval's id.
      const guesses = [
        ...new Set([...heard().matchAll(URLS)].map((m) => m[0])),
        `${origin}/`,
        `${origin}/approve/${approvalId}`,
        `${origin}/approvals/${approvalId}`,
        `${origin}/approvals/${approvalId}/passkey-options`,
        `${origin}/approvals/${approvalId}/passkey`,
      ];
      // The one page outside the secret path (the link a URL elicitation carries) tells a browser without the
      // console's sign-in cookie nothing: the same page for this approval's id as for a made-up one.
      const hop = `${origin}/approve/${approvalId}`;
      const blank = await rawRequest(`${origin}/approve/${'x'.repeat(approvalId.length)}`);
      for (const url of guesses) {
        const got = await rawRequest(url);
        if (url === hop) expect([got.status, got.body], url).toEqual([blank.status, blank.body]);
        else expect(got.status, url).toBeGreaterThanOrEqual(400);
        for (const [type, body] of [
          ['application/x-www-form-urlencoded', 'csrf=x&decision=approved'],
          ['application/json', JSON.stringify({ csrf: 'x', decision: 'approved', response: {} })],
        ] as const) {
          const r = await rawRequest(url, {
            method: 'POST',
            headers: { origin, 'content-type': type },
            body,
          });
          expect(r.status, `POST ${url}`).toBeGreaterThanOrEqual(400);
        }
      }
      // Its own browser, with its own passkey for localhost, opening what it can reach.
      await model.page.goto(`${origin}/approvals/${approvalId}`);
      expect(await model.page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
      const made = await model.page.evaluate(async () => {
        const w = globalThis as unknown as InPage;
        const c = await w.navigator.credentials.create({
          publicKey: {
            rp: { id: 'localhost', name: 'model' },
            user: { id: new Uint8Array([9]), name: 'model', displayName: 'model' },
            challenge: new Uint8Array(32),
            pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
            authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
          },
        });
        return c !== null;
      });
      expect(made).toBe(true);

      expect(canaryRan(s.fx)).toBe(false);
      const a = s.fx.audit();
      try {
        expect(a.listCalls().map((r) => `${r.status ?? r.state}:${r.approvalDecision ?? '-'}`)).toEqual([
          'requested:-',
        ]);
      } finally {
        a.close();
      }
    } finally {
      await person.context.close();
      await model.context.close();
    }
  }, 90_000);
});
