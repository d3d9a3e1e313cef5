import { spawn, type ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { waitFor } from '../helpers/wait-for.js';
import { builtCli } from '../helpers/temp-dir.js';
import { consoleBase, pendingLinks } from './helpers/console-server.js';
import { postDecision } from './helpers/raw-request.js';

describe.each(['legacy', 'auto'] as const)('approval console with --http (%s era)', (era) => {
  let proc: ChildProcess | undefined;
  let fx: ReturnType<typeof gatedFixture> | undefined;
  afterEach(async () => {
    if (proc?.exitCode === null) {
      const exited = new Promise((r) => proc!.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    fx?.cleanup();
    proc = undefined;
    fx = undefined;
  });

  const approveInConsole = async (declaresElicitation: boolean) => {
    fx = gatedFixture('approval:\n  mode: ask\n  console_open_browser: false\n');
    let stderr = '';
    proc = spawn(process.execPath, [builtCli, '--http', '--port', '0', '--approval-console', ...fx.args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await waitFor(() => /over Streamable HTTP at http:\/\/\S+\/mcp/.test(stderr), 10_000, 'the HTTP server');
    expect(stderr).toContain('approval console ready');
    const url = /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(stderr)![1]!;

    const client = new Client(
      { name: 'console-http-test', version: '1.0.0' },
      {
        capabilities: declaresElicitation ? { elicitation: { form: {} } } : {},
        versionNegotiation: { mode: era },
      },
    );
    // Without a token, a client's own approval form is never asked: the console is the approver.
    if (declaresElicitation)
      client.setRequestHandler('elicitation/create', () => Promise.reject(new Error('asked the client')));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const result = client.callTool({ name: 'echo', arguments: { text: 'over http' } });
      // The person's route: `skills-mcp console` prints the link; the waiting request is on its index.
      const base = consoleBase(fx.auditPath);
      let link: string | undefined;
      for (let i = 0; link === undefined && i < 200; i++) {
        link = (await pendingLinks(base))[0];
        if (link === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect((await postDecision(link!, 'approved')).status).toBe(303);
      const r = await result;
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual({ echo: { text: 'over http' }, ok: true });
      const store = fx.audit();
      try {
        const [row] = store.listCalls();
        expect(row?.approvalDecision).toBe('approved');
        expect(store.getCall(row!.callId)?.approval?.channel).toBe('console');
      } finally {
        store.close();
      }
    } finally {
      await client.close();
    }
  };

  it('asks a client without elicitation through the console (flag --approval-console) and runs once approved', () =>
    approveInConsole(false));

  it('asks through the console, not the form, for a tokenless client that declares elicitation', () =>
    approveInConsole(true));
});
