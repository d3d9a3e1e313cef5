import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { HAS_CHROMIUM, sharedChromium } from './helpers/browser.js';
import { consoleBase, consoleConfig, consoleServers, textOf } from './helpers/console-server.js';
import { csrfOf, rawRequest } from './helpers/raw-request.js';

const DUMP = `import json, os, sys
print(json.dumps({"argv": sys.argv, "env": dict(os.environ)}))
`;

/**
 * Plays the model: it holds every tool result (text and `_meta`), every progress and log message, the server's
 * stderr, the audit log, the environment and argv its own skills see and the browser opener's command line; it has
 * an HTTP client and a browser. It must not be able to get its pending call approved.
 */
describe.skipIf(!HAS_CHROMIUM)('a model holding everything it can see cannot approve its own call', () => {
  const browser = sharedChromium();
  // Registered before the servers', so it runs after them: a server is closed before its folders go.
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });
  const startServer = consoleServers();

  it('never sees the console secret, and nothing it can reach approves the call', async () => {
    const binDir = tempDir();
    cleanups.push(binDir.cleanup);
    // A stand-in for xdg-open that records its command line, as any process of the user could read it.
    const bin = binDir.dir;
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" >> "${bin}/argv.log"\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const s = await startServer({
      config:
        consoleConfig({ waitMs: 1500 }).replace('console_open_browser: false', 'console_open_browser: true') +
        '  rules:\n    - { skill: dump, action: allow }\n',
      setup: (fx) =>
        writeTestSkill(fx.skills, 'dump', {
          description: 'Prints its argv and environment. Use in tests.',
          script: DUMP,
        }),
      env: { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    });
    const seen: string[] = [];
    const asked = s.call({ text: 'approve me' });
    const first = await asked.result;
    seen.push(JSON.stringify(first), ...asked.progress);
    expect(first._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    expect(textOf(first)).toMatch(/Only the user can decide/);
    const dumped = await s.c.client.callTool({ name: 'dump', arguments: {} });
    expect(dumped.isError, textOf(dumped)).toBeFalsy();
    seen.push(JSON.stringify(dumped));
    seen.push(JSON.stringify(s.logs), s.c.stderr());
    seen.push(runCli(['audit', 'export', '--jsonl', '--audit', s.fx.auditPath]).stdout);
    let opened = '';
    try {
      opened = readFileSync(join(bin, 'argv.log'), 'utf8');
    } catch {
      // The opener did not run: nothing on a command line to read.
    }
    seen.push(opened);
    const corpus = seen.join('\n');

    // The person's own route: `skills-mcp console` in their terminal. Its secret is nowhere in the model's view.
    const base = consoleBase(s.fx.auditPath);
    const secret = new URL(base).pathname.split('/')[1]!;
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(corpus).not.toContain(secret);
    expect(corpus).not.toMatch(/"url":"http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{20,}/);
    for (const line of opened.split('\n').filter(Boolean)) {
      // The browser is opened on a private file in the state folder, which forwards to the console.
      expect(line.startsWith(join(s.fx.dir, 'state', 'console'))).toBe(true);
      expect(statSync(line).mode & 0o777).toBe(0o600);
    }

    // Generous: the model knows the console's port (it could scan for it). It tries every URL and every token-like
    // string it holds, with an HTTP client (GET for the form, POST with a loopback Origin) and with a browser.
    const origin = new URL(base).origin;
    const urls = new Set(corpus.match(/http:\/\/(?:127\.0\.0\.1|localhost):\d+\/[^\s"'\\<>)]*/g) ?? []);
    for (const token of new Set(corpus.match(/[A-Za-z0-9_-]{20,}/g) ?? [])) {
      urls.add(`${origin}/${token}/`);
    }
    urls.add(`${origin}/`);
    const page = await (await browser().newContext()).newPage();
    let forms = 0;
    for (const url of urls) {
      const got = await rawRequest(url).catch(() => undefined);
      if (got?.status === 200 && got.body.includes('name="csrf"')) {
        forms++;
        await rawRequest(url, {
          method: 'POST',
          headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: `csrf=${encodeURIComponent(csrfOf(got.body))}&decision=approved_for_session`,
        });
      }
      await page.goto(url).catch(() => undefined);
      const approve = page.getByRole('button', { name: 'Approve once' });
      if ((await approve.count()) > 0) {
        forms++;
        await approve.first().click();
      }
    }
    await page.context().close();
    expect(forms).toBe(0);

    // Its retry is still waiting for a person: nothing ran.
    const retry = await s.call({ text: 'approve me' }).result;
    expect(retry._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    expect(s.decisions()).toEqual(['requested:-:-:console', 'ok:approved:rules:rules']);
  });
});
