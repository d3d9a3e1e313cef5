import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { gatedServers, type GatedServer } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { DESKTOP, HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase, pendingLinks } from '../console/helpers/console-server.js';
import { rawRequest } from '../console/helpers/raw-request.js';
import { addCanary, canaryRan } from './helpers/canary.js';
import { enrollWith, pageWithPasskey, type InPage } from './helpers/passkey-browser.js';

const policy = (waitMs: number) =>
  'approval:\n  mode: ask\n  console: true\n  require: passkey\n  console_open_browser: false\n' +
  `  console_wait_ms: ${waitMs}\n`;

const URL_CLIENT = { elicitation: { form: {}, url: {} } };

/** `status:decision` per call, oldest first. */
function decisions(s: GatedServer): string[] {
  const a = s.fx.audit();
  try {
    return a.listCalls().map((r) => `${r.status ?? r.state}:${r.approvalDecision ?? '-'}`);
  } finally {
    a.close();
  }
}

const canaryRuns = (s: GatedServer): number =>
  readdirSync(s.fx.dir, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('canary.txt')).length;

/** A page the model serves on another loopback port, keeping the `Cookie` header of every request it gets. */
async function modelSite(): Promise<{ server: Server; port: number; cookies: string[] }> {
  const cookies: string[] = [];
  const server = createServer((req, res) => {
    cookies.push(req.headers.cookie ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Report</title><p>Your report is ready.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, cookies };
}

/** What the model's HTTP client reaches with a leaked sign-in: the page the approval link leads to, its form token. */
async function replayed(url: string, cookie: string): Promise<{ page: string; csrf: string }> {
  const hop = await rawRequest(url, { headers: { cookie } });
  const page = new URL(String(hop.headers.location ?? '/approve/x'), url).href;
  const got = await rawRequest(page, { headers: { cookie } });
  return { page, csrf: /name="csrf" value="([^"]+)"/.exec(got.body)?.[1] ?? 'x' };
}

describe.skipIf(!HAS_CHROMIUM).each<Era>(['legacy', 'auto'])(
  'the model against a passkey approval sent as a URL elicitation (era %s)',
  (era) => {
    const browser = sharedChromium();
    const start = gatedServers();

    /** A server with a passkey enrolled and a call waiting; every URL elicitation answered accept with `content`. */
    async function waitingCall(waitMs: number) {
      const s = await start(policy(waitMs), {
        era,
        capabilities: URL_CLIENT,
        setup: addCanary,
        env: { SKILLS_MCP_LOG_LEVEL: 'info' },
      });
      await waitFor(() => s.c.stderr().includes('approval console ready'), 10_000, 'the console to start');
      const asked: Record<string, unknown>[] = [];
      s.c.client.setRequestHandler('elicitation/create', (req) => {
        asked.push(req.params);
        return Promise.resolve({ action: 'accept', content: { decision: 'approved_always' } });
      });
      const person = await pageWithPasskey(browser());
      await enrollWith(person.page, s.fx.auditPath, 'alice');
      const result = s.c.client.callTool({ name: 'canary', arguments: {} });
      result.catch(() => undefined);
      const first = await waitFor(() => asked[0], 20_000, 'the URL elicitation');
      return { s, person, result, url: String(first.url) };
    }

    it('approves nothing on an accept that carries an approving answer: the call stays pending', async () => {
      const { s, person, result } = await waitingCall(3000);
      try {
        const r = await result;
        expect(r.isError).toBe(true);
        expect(r._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
        expect(canaryRan(s.fx)).toBe(false);
        expect(decisions(s)).toEqual(['requested:-']);
        expect(await pendingLinks(consoleBase(s.fx.auditPath))).toHaveLength(1);
      } finally {
        await person.context.close();
      }
    }, 120_000);

    it('runs a call approved once exactly once, however often the model calls it meanwhile and after', async () => {
      const { s, person, result, url } = await waitingCall(60_000);
      try {
        const call = () => s.c.client.callTool({ name: 'canary', arguments: {} });
        // A second call with the same arguments while the first waits: the first is answered "pending".
        const second = call();
        second.catch(() => undefined);
        expect((await result)._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
        await person.page.goto(consoleBase(s.fx.auditPath));
        await person.page.goto(url);
        await person.page.getByRole('button', { name: 'Approve once' }).click();
        const r = await second;
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        expect(canaryRuns(s)).toBe(1);
        // Called again after it ran: the kept result, or a new approval to ask; never a second run.
        let answered = false;
        void call().then(
          () => (answered = true),
          () => (answered = true),
        );
        await waitFor(
          async () => answered || (await pendingLinks(consoleBase(s.fx.auditPath))).length > 0,
          20_000,
          'the third call to be answered or asked',
        );
        expect(canaryRuns(s)).toBe(1);
        expect(decisions(s).filter((d) => d.startsWith('ok:'))).toEqual(['ok:approved']);
      } finally {
        await person.context.close();
      }
    }, 120_000);

    it("refuses the person's passkey over the call when the model's page on another port asked for it", async () => {
      const { s, person, url } = await waitingCall(60_000);
      const site = await modelSite();
      try {
        const base = consoleBase(s.fx.auditPath);
        const origin = `http://localhost:${new URL(url).port}`;
        await person.page.goto(base);
        // The person opens the model's page (same tab: their authenticator answers there, as it would anywhere).
        await person.page.goto(`http://localhost:${site.port}/approve/report`);
        const cookie = await waitFor(
          () => site.cookies.find((c) => c.includes('skills-mcp-console')),
          10_000,
          'the sign-in at the model page',
        );
        const { page, csrf } = await replayed(url, cookie);
        const headers = { origin, cookie, 'content-type': 'application/json' };
        const o = await rawRequest(`${page}/passkey-options`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ csrf, decision: 'approved' }),
        });
        expect(o.status, o.body).toBe(200);
        // The model's page asks the person's passkey (RP id localhost, any port) to sign the console's challenge.
        const response = await person.page.evaluate(async (json) => {
          const w = globalThis as unknown as InPage;
          const opts = JSON.parse(json) as { challenge: string; allowCredentials?: { id: string }[] };
          const bytes = (b: string) =>
            Uint8Array.from(atob(b.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
          const b64u = (b: ArrayBuffer) =>
            btoa(String.fromCharCode(...new Uint8Array(b)))
              .replace(/\+/g, '-')
              .replace(/\//g, '_')
              .replace(/=+$/, '');
          const cred = (await w.navigator.credentials.get({
            publicKey: {
              ...opts,
              challenge: bytes(opts.challenge),
              allowCredentials: (opts.allowCredentials ?? []).map((c) => ({ ...c, id: bytes(c.id) })),
            },
          })) as {
            id: string;
            rawId: ArrayBuffer;
            type: string;
            response: Record<string, ArrayBuffer | null>;
          };
          const r = cred.response;
          return {
            id: cred.id,
            rawId: b64u(cred.rawId),
            type: cred.type,
            clientExtensionResults: {},
            response: {
              clientDataJSON: b64u(r.clientDataJSON!),
              authenticatorData: b64u(r.authenticatorData!),
              signature: b64u(r.signature!),
              ...(r.userHandle ? { userHandle: b64u(r.userHandle) } : {}),
            },
          };
        }, o.body);
        const post = await rawRequest(`${page}/passkey`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ csrf, decision: 'approved', response }),
        });
        expect(post.status, post.body).toBe(403);
        expect(canaryRan(s.fx)).toBe(false);
        expect(decisions(s)).toEqual(['requested:-']);
        expect(await pendingLinks(base)).toHaveLength(1);
      } finally {
        site.server.close();
        await person.context.close();
      }
    }, 120_000);

    it('lets no page of the model frame the approval link, signed in or not', async () => {
      const { s, person, url } = await waitingCall(60_000);
      const site = await modelSite();
      try {
        await person.page.goto(consoleBase(s.fx.auditPath));
        const trap = await person.context.newPage();
        await trap.goto(`http://127.0.0.1:${site.port}/approve/frame`);
        const hop = await rawRequest(url);
        expect(hop.headers['x-frame-options']).toBe('DENY');
        expect(String(hop.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
        await trap.evaluate((src) => {
          const d = (globalThis as unknown as { document: { body: { innerHTML: string } } }).document;
          d.body.innerHTML = `<iframe src="${src}" width="800" height="600"></iframe>`;
        }, url);
        const framed = await waitFor(
          () => trap.frames().find((f) => f !== trap.mainFrame() && /^[a-z-]+:\/\/./.test(f.url())),
          10_000,
          'the frame to be navigated',
        );
        // Chromium refuses to show the framed page (X-Frame-Options, frame-ancestors): its error page instead.
        expect(framed.url()).toMatch(/^chrome-error:/);
        const buttons = await framed
          .getByRole('button')
          .count()
          .catch(() => 0);
        expect(buttons).toBe(0);
        expect(canaryRan(s.fx)).toBe(false);
      } finally {
        site.server.close();
        await person.context.close();
      }
    }, 120_000);

    it('sends the console sign-in to no ordinary page of another loopback server', async () => {
      const { s, person } = await waitingCall(60_000);
      const site = await modelSite();
      try {
        await person.page.goto(consoleBase(s.fx.auditPath));
        const other = await person.context.newPage();
        for (const host of ['127.0.0.1', 'localhost']) await other.goto(`http://${host}:${site.port}/report`);
        await waitFor(() => site.cookies.length >= 2, 10_000, 'the other server to be visited');
        expect(site.cookies.join('\n')).not.toContain('skills-mcp-console');
      } finally {
        site.server.close();
        await person.context.close();
      }
    }, 120_000);

    it('runs nothing for a model holding the sign-in its own page on another loopback port received', async () => {
      const { s, person, url } = await waitingCall(60_000);
      const site = await modelSite();
      const model = await browser().newContext({ viewport: DESKTOP });
      try {
        const base = consoleBase(s.fx.auditPath);
        const origin = new URL(url).origin;
        // The person is signed in to the console, then opens the "report" the model told them about.
        await person.page.goto(base);
        // Its page sits under /approve/ to be sent the sign-in (cookies are not kept apart by port).
        const trap = await person.context.newPage();
        await trap.goto(`http://localhost:${site.port}/approve/report`);
        await trap.goto(`http://127.0.0.1:${site.port}/approve/report`);
        // The model's page drives the person's browser at the console (same site: the cookie goes along).
        const fromPage = await trap.evaluate(async (target) => {
          const out: string[] = [];
          for (const init of [
            { credentials: 'include', mode: 'no-cors' },
            { credentials: 'include', mode: 'no-cors', method: 'POST', body: 'decision=approved' },
          ] as RequestInit[]) {
            const r = await fetch(target, init).catch((e: unknown) => String(e));
            out.push(typeof r === 'string' ? r : r.type);
          }
          return out;
        }, url);
        expect(fromPage).toHaveLength(2);
        await waitFor(() => site.cookies.length > 0, 10_000, 'the model page to be loaded');
        // The case under test: its page was sent the sign-in (what a leak-free console would make moot).
        expect(site.cookies.join('\n')).toContain(`skills-mcp-console-${new URL(url).port}=`);

        // Whatever cookie its server got, replayed with the model's HTTP client and in its own browser.
        for (const cookie of site.cookies) {
          const { page, csrf } = await replayed(url, cookie);
          for (const decision of ['approved', 'approved_once', 'approved_always']) {
            const post = await rawRequest(page, {
              method: 'POST',
              headers: { origin, cookie, 'content-type': 'application/x-www-form-urlencoded' },
              body: `csrf=${encodeURIComponent(csrf)}&decision=${decision}`,
            });
            expect(post.status, `${decision}: ${post.body}`).toBeGreaterThanOrEqual(400);
          }
          for (const step of ['passkey-options', 'passkey']) {
            const post = await rawRequest(`${page}/${step}`, {
              method: 'POST',
              headers: { origin, cookie, 'content-type': 'application/json' },
              body: JSON.stringify({ csrf, decision: 'approved_once', response: {} }),
            });
            expect(post.status, `${step}: ${post.body}`).toBeGreaterThanOrEqual(400);
          }
          for (const part of cookie.split(';').filter((p) => p.includes('='))) {
            const [name, ...value] = part.trim().split('=');
            await model.addCookies([{ name: name!, value: value.join('='), url: origin }]);
          }
        }
        const own = await model.newPage();
        await own.goto(url);
        const approve = own.getByRole('button', { name: 'Approve once' });
        if ((await approve.count()) > 0) {
          await approve.click();
          await own
            .getByText(/Not approved|Not accepted|passkey/i)
            .first()
            .waitFor();
        }
        expect(canaryRan(s.fx)).toBe(false);
        expect(decisions(s)).toEqual(['requested:-']);
        expect(await pendingLinks(base)).toHaveLength(1);
      } finally {
        site.server.close();
        await model.close();
        await person.context.close();
      }
    }, 120_000);
  },
);
