import { createHash } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { connectClient } from './helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';
import { auditEvents } from './helpers/audit-events.js';

const TOKEN = 'auth-modes-token-0123456789abcdef';

type Mode = 'no token (loopback, http_elicitation: any)' | 'token in SKILLS_MCP_TOKEN' | 'token file';
const MODES: Mode[] = [
  'no token (loopback, http_elicitation: any)',
  'token in SKILLS_MCP_TOKEN',
  'token file',
];

describe('skills run over HTTP in every auth mode (built binary, real sandbox)', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let server: SpawnedServer | undefined;
  afterEach(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    fx?.cleanup();
  });

  it.each(MODES)('runs an approved skill and audits every call, both eras: %s', async (mode) => {
    // Without a token the client's own approval form counts only with the explicit setting.
    const noToken = mode === 'no token (loopback, http_elicitation: any)';
    fx = gatedFixture(`approval:\n  mode: ask\n${noToken ? '  http_elicitation: any\n' : ''}`);
    const args = ['--http', '--port', '0', '--skills', fx.skills, '--config', fx.configFile];
    const env: Record<string, string> = {};
    if (mode === 'token in SKILLS_MCP_TOKEN') env.SKILLS_MCP_TOKEN = TOKEN;
    if (mode === 'token file') {
      const file = join(fx.dir, 'token');
      writeFileSync(file, `${TOKEN}\n`);
      chmodSync(file, 0o600);
      args.push('--token-file', file);
    }
    server = spawnCli([...args, '--audit', fx.auditPath, '--no-watch'], env);
    const url = await servedUrl(server);
    const token = noToken ? undefined : TOKEN;

    const sessions: string[] = [];
    for (const era of ['legacy', 'auto'] as const) {
      const c = await connectClient(url, era, token);
      c.client.setRequestHandler('elicitation/create', () =>
        Promise.resolve({ action: 'accept', content: { decision: 'approved' } }),
      );
      const run = await c.client.callTool({ name: 'echo', arguments: { text: `via ${era}` } });
      expect(run.isError, JSON.stringify(run.content)).toBeFalsy();
      expect(run.structuredContent).toEqual({ echo: { text: `via ${era}` }, ok: true });
      const read = await c.client.callTool({
        name: 'read_skill_file',
        arguments: { skill: 'echo', path: 'SKILL.md' },
      });
      expect(read.isError).toBeFalsy();
      if (era === 'legacy') sessions.push(c.transport.sessionId!);
      await c.client.close();
      expect(c.errors).toEqual([]);
    }
    // The modern era's session is the principal's (or the anonymous one on loopback without a token).
    const modern = auditEvents(fx.auditPath).find(
      (e) => e.type === 'session_started' && e.session_id !== sessions[0],
    );
    sessions.push(modern!.session_id);

    // Read-only calls are recorded just after they answer.
    await vi.waitFor(
      () =>
        expect(
          auditEvents(fx!.auditPath).filter(
            (e) => e.type === 'tool_call_requested' && e.payload.tool === 'read_skill_file',
          ),
        ).toHaveLength(2),
      { timeout: 20_000, interval: 200 },
    );
    const events = auditEvents(fx.auditPath);
    const digest = token === undefined ? undefined : createHash('sha256').update(token).digest('hex');
    for (const sid of sessions) {
      const mine = events.filter((e) => e.session_id === sid);
      const started = mine.find((e) => e.type === 'session_started')!;
      if (token === undefined) expect(started.payload.principal_sha256).toBeUndefined();
      else {
        expect(started.payload.principal_sha256).toMatch(/^[0-9a-f]{64}$/);
        // Neither the token nor its plain digest is stored.
        expect(started.payload.principal_sha256).not.toBe(digest);
      }
      const finished = mine.filter((e) => e.type === 'tool_call_finished').map((e) => e.payload.status);
      expect(finished).toEqual(['ok', 'ok']);
      expect(mine.map((e) => e.type)).toEqual(
        expect.arrayContaining(['approval_requested', 'approval_decided', 'tool_call_started']),
      );
    }
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(server.stderr()).not.toContain(TOKEN);
  });
});
