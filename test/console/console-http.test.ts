import { spawn, type ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { waitFor } from '../helpers/stdio-client.js';
import { builtCli } from '../helpers/temp-dir.js';
import { postDecision } from './helpers/raw-request.js';

const LINK = /(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/approvals\/[A-Za-z0-9_-]+)/;

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

  it('asks a client without elicitation through the console (flag --approval-console) and runs once approved', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n  console_open_browser: false\n');
    let stderr = '';
    proc = spawn(
      process.execPath,
      [
        builtCli,
        '--http',
        '--port',
        '0',
        '--approval-console',
        '--skills',
        fx.skills,
        '--config',
        fx.configFile,
        '--audit',
        fx.auditPath,
        '--no-watch',
      ],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await waitFor(() => /over Streamable HTTP at http:\/\/\S+\/mcp/.test(stderr), 10_000, 'the HTTP server');
    expect(stderr).toContain('approval console ready');
    const url = /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(stderr)![1]!;

    const client = new Client(
      { name: 'console-http-test', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: era } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      let gotLink!: (l: string) => void;
      const link = new Promise<string>((r) => (gotLink = r));
      const result = client.callTool(
        { name: 'echo', arguments: { text: 'over http' } },
        {
          onprogress: (p) => {
            const m = LINK.exec(p.message ?? '');
            if (m?.[1] !== undefined) gotLink(m[1]);
          },
        },
      );
      expect((await postDecision(await link, 'approved')).status).toBe(303);
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
  });
});
