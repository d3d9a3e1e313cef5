import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { runCli } from '../helpers/run-cli.js';
import { startServer } from '../helpers/server-under-test.js';
import { waitFor } from '../helpers/wait-for.js';

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

    // The service's own audit log is the one its config names: the server gets none of its own.
    ({ client } = await startServer({
      transport: 'stdio',
      era: 'legacy',
      args: ['serve', '--config', config],
      cwd,
      env: { HOME: fx.dir },
      ownAudit: false,
    }));
    const call = client.callTool({ name: 'echo', arguments: { text: 'hi' } }).catch(() => undefined);

    const home = fx.dir;
    let last = '';
    const link = await waitFor(
      () => {
        const r = runCli(['console', '--config', config], { cwd, env: { HOME: home } });
        last = r.stderr;
        return r.code === 0 && r.stdout.trim();
      },
      20_000,
      'the console link',
    ).catch((e: Error) => {
      throw new Error(`no console link: ${last}`, { cause: e });
    });
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[\w-]+\/$/);
    const page = await waitFor(
      async () => {
        const text = await (await fetch(link)).text();
        return text.includes('Waiting for your decision (1)') && text;
      },
      20_000,
      'the call to be asked about on the console',
    );
    expect(page).toContain('scripts/main.py');
    await client.close();
    await call;
  });
});
