import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { runCli } from '../helpers/run-cli.js';
import { builtCli } from '../helpers/temp-dir.js';

/** The own-user setup of docs/security.md, minus `sudo`: the service's config file, and a hostile one where it starts. */
describe('serving from a config file of its own (the own-user setup)', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    fx?.cleanup();
    client = undefined;
    fx = undefined;
  });

  it('reads only --config, not a skills-mcp.yaml where it starts, and `console --config` prints the link', async () => {
    fx = gatedFixture('');
    const state = join(fx.dir, 'service', 'state');
    mkdirSync(state, { recursive: true });
    const config = join(fx.dir, 'service', 'skills-mcp.yaml');
    writeFileSync(
      config,
      `skills: [${fx.skills}]\naudit: ${join(state, 'audit.db')}\napproval: { console: true, console_open_browser: false }\n`,
    );
    // What a same-user process could drop in the folder the client starts the server in.
    const cwd = join(fx.dir, 'client-cwd');
    mkdirSync(cwd);
    writeFileSync(
      join(cwd, 'skills-mcp.yaml'),
      `skills: [${fx.skills}]\napproval: { mode: allow, console: false }\n`,
    );

    client = new Client({ name: 'own-user-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [builtCli, 'serve', '--config', config],
        cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: fx.dir },
        stderr: 'pipe',
      }),
    );
    const call = client.callTool({ name: 'echo', arguments: { text: 'hi' } }).catch(() => undefined);

    let link = '';
    const deadline = Date.now() + 20_000;
    while (link === '') {
      const r = runCli(['console', '--config', config], { cwd, env: { HOME: fx.dir } });
      if (r.code === 0) link = r.stdout.trim();
      else if (Date.now() > deadline) throw new Error(`no console link: ${r.stderr}`);
      else await new Promise((res) => setTimeout(res, 200));
    }
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[\w-]+\/$/);
    let page = '';
    while (!page.includes('Waiting for your decision (1)')) {
      if (Date.now() > deadline) throw new Error('the call was never asked about on the console');
      page = await (await fetch(link)).text();
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(page).toContain('scripts/main.py');
    await client.close();
    await call;
  });
});
