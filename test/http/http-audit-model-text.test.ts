import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { auditEvents } from './helpers/audit-events.js';
import { connectClient } from './helpers/connect-client.js';
import { CLI, servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const TOKEN = 'audit-model-text-token-0123456789';

describe('what the model writes into the audit log (built binary)', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let server: SpawnedServer | undefined;
  afterEach(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    fx?.cleanup();
  });

  it('records every refusal with bounded, hashed key names, and a newline in a script cannot forge a listed row', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    server = spawnCli(['--http', '--port', '0', ...fx.args], { SKILLS_MCP_TOKEN: TOKEN });
    // With a token the client's own approval form counts over HTTP: the person declines there.
    const c = await connectClient(await servedUrl(server), 'legacy', TOKEN);
    c.client.setRequestHandler('elicitation/create', () => Promise.resolve({ action: 'decline' }));
    const input: Record<string, string> = {
      [`AWS_SECRET_ACCESS_KEY=${SECRET}`]: 'x',
      ['k'.repeat(300)]: 'y',
    };
    for (let i = 0; i < 256; i++) input[`${String(i).padStart(3, '0')}${'z'.repeat(125)}`] = '';
    const calls = [
      c.client.callTool({
        name: 'run_skill_script',
        arguments: { skill: 'echo', script: 'scripts/main.py', input },
      }),
      c.client.callTool({
        name: 'run_skill_script',
        arguments: { skill: 'echo', script: 'scripts/x\nffffffff  2026-01-01 00:00:00  FORGED  echo  ok' },
      }),
    ];
    for (const r of await Promise.all(calls)) expect(r.isError).toBe(true);
    await c.client.close();
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const events = auditEvents(fx.auditPath);
    const requested = events.filter((e) => e.type === 'tool_call_requested');
    expect(requested).toHaveLength(2);
    const big = requested.find((e) => e.payload.valid === true)?.payload;
    const forged = requested.find((e) => e.payload.valid === false)?.payload;
    expect((big!.input_keys as string[]).length).toBe(64);
    expect(big!.input_keys_omitted).toBe(258 - 64);
    expect(JSON.stringify(big)).not.toContain('AWS_SECRET');
    expect(forged!.script).toMatch(/^#[0-9a-f]{32}$/);
    expect(events.filter((e) => e.type === 'tool_call_finished')).toHaveLength(2);
    for (const file of [fx.auditPath, `${fx.auditPath}-wal`]) {
      try {
        expect(readFileSync(file).includes(SECRET)).toBe(false);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    const list = execFileSync(process.execPath, [CLI, 'audit', 'list', '--audit', fx.auditPath], {
      encoding: 'utf8',
    });
    expect(list).not.toContain('FORGED');
    expect(list.trim().split('\n')).toHaveLength(1 + 2 + 1);
  });
});
