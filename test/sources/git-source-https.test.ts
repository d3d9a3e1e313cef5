import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitSourceCase, pinned } from '../helpers/git-source-case.js';
import { selfSigned, serveGitHttps } from '../helpers/https-git-server.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { builtCli, tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

const t = tempDir();
const certs = join(t.dir, 'certs');
let https: Awaited<ReturnType<typeof serveGitHttps>>;
beforeAll(async () => {
  https = await serveGitHttps(t.dir, selfSigned(certs, 'server'));
  selfSigned(certs, 'other');
});
afterAll(async () => {
  await https.close();
  t.cleanup();
});

/** A case whose repository is fetched over https, trusting the certificate in `ca`. */
const setup = (label: string, ca: string) =>
  gitSourceCase(
    t.dir,
    label,
    (r) => `${pinned(`${https.base}/${label}/origin`, r.first)}    ca_file: ${ca}\n`,
  );

/** The built CLI, run without blocking this process (it serves the repository). */
const cli = (config: string, ...args: string[]) =>
  new Promise<{ code: number; stderr: string }>((ok) => {
    execFile(
      process.execPath,
      [builtCli, ...args, '--config', config],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.dir }, timeout: 60_000 },
      (e, _stdout, stderr) => ok({ code: e === null ? 0 : Number(e.code), stderr }),
    );
  });

describe('pinned git sources over https', () => {
  it('fetches over https trusting ca_file, serves the skill and runs it after approval', async () => {
    const s = setup('trusted', join(certs, 'server.pem'));
    const url = `${https.base}/trusted/origin`;
    const c = await connectStdio({
      era: 'auto',
      args: ['--config', s.config, '--audit', s.auditPath, '--no-watch'],
      capabilities: { elicitation: { form: {} } },
    });
    try {
      const asked: string[] = [];
      c.client.setRequestHandler('elicitation/create', (req) => {
        asked.push(String((req.params as { message?: unknown }).message));
        return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
      });
      expect((await c.client.listTools()).tools.map((x) => x.name)).toContain('gitecho');
      const r = await c.client.callTool({ name: 'gitecho', arguments: { text: 'hi' } });
      expect(textOf(r)).toContain('"from": "git"');
      expect(asked[0]).toContain(`Source:  git ${url}@${s.first.slice(0, 12)}`);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 60_000);

  it('refuses a server whose certificate ca_file does not vouch for, saying so', async () => {
    const s = setup('untrusted', join(certs, 'other.pem'));
    const r = await cli(s.config, 'list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `git source ${https.base}/untrusted/origin: its https server's certificate is not trusted (git fetch failed`,
    );
    expect(r.stderr).toContain('server certificate verification failed');
    expect(r.stderr).toContain('Set ca_file: to a PEM file of the authority that signed it');
  }, 60_000);

  it('refuses a self-signed server with no ca_file: the system authorities are trusted alone', async () => {
    const s = gitSourceCase(t.dir, 'no-ca', (r) => pinned(`${https.base}/no-ca/origin`, r.first));
    const r = await cli(s.config, 'list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("its https server's certificate is not trusted");
  }, 60_000);
});
