import { spawn, type ChildProcess } from 'node:child_process';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { builtCli } from '../../helpers/temp-dir.js';
import { waitFor } from '../../helpers/wait-for.js';
import { DESKTOP } from '../../console/helpers/browser.js';

/** A browser page with the DevTools virtual authenticator: a platform passkey that verifies its user. */
export async function pageWithPasskey(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; authenticatorId: string }> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page, authenticatorId };
}

export interface Enrolling {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** How to enroll: for whose sign-in subject (`--subject`), and with what more in the environment (`PGPASSWORD`). */
export interface EnrollOptions {
  subject?: string;
  env?: Record<string, string>;
}

/** `skills-mcp approvers enroll` running, with the link it printed on stderr. */
export async function startEnroll(
  auditPath: string,
  name: string,
  o: EnrollOptions = {},
): Promise<Enrolling> {
  const { subject } = o;
  const child = spawn(
    process.execPath,
    [
      builtCli,
      'approvers',
      'enroll',
      '--name',
      name,
      ...(subject === undefined ? [] : ['--subject', subject]),
      '--audit',
      auditPath,
    ],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await waitFor(() => /http:\/\/localhost:\d+\/\S+\//.test(err), 15_000, 'the enrolment link');
  const url = /http:\/\/localhost:\d+\/\S+\//.exec(err)![0];
  return { child, url, stdout: () => out, stderr: () => err, exited };
}

/** Enrolls the page's virtual passkey through the enrolment page. */
export async function enrollWith(
  page: Page,
  auditPath: string,
  name: string,
  shot?: string,
  o: EnrollOptions = {},
): Promise<Enrolling> {
  const e = await startEnroll(auditPath, name, o);
  await page.goto(e.url);
  if (shot !== undefined) await page.screenshot({ path: shot });
  await page.getByRole('button', { name: 'Create passkey' }).click();
  const status = page.locator('#enroll-status');
  await status.getByText(/^(Enrolled|Not enrolled)/).waitFor();
  const said = await status.textContent();
  if (!said?.startsWith('Enrolled')) throw new Error(`${said}\n${e.stderr()}`);
  await e.exited;
  return e;
}

/**
 * The few browser globals the tests' `page.evaluate` callbacks use (the test project compiles without the DOM
 * library): `const w = globalThis as unknown as InPage;` inside the callback, which runs in the page.
 */
export interface InPage {
  document: { querySelector(selector: string): { value: string } | null };
  location: { pathname: string };
  navigator: {
    credentials: {
      create(options: { publicKey: unknown }): Promise<unknown>;
      get(options: { publicKey: unknown }): Promise<unknown>;
    };
  };
}
