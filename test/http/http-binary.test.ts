import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectClient } from './helpers/connect-client.js';
import { rawRequest } from './helpers/raw-request.js';
import { auditEvents } from './helpers/audit-events.js';
import { servedUrl, spawnCli } from './helpers/spawn-server.js';
import { copySkills } from './helpers/start-http.js';

const TOKEN = 'binary-test-token-abcdef0123456789';

describe('skills-mcp --http (built binary)', () => {
  let dir: string;
  beforeAll(() => {
    dir = copySkills();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('logs the URL it picked for --port 0, serves both eras, and stops cleanly on SIGTERM', async () => {
    const s = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch']);
    try {
      const url = await servedUrl(s);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      for (const era of ['legacy', 'auto'] as const) {
        const c = await connectClient(url, era);
        const { tools } = await c.client.listTools();
        expect(tools.map((t) => t.name)).toContain('csv-stats');
        const result = await c.client.callTool({ name: 'markdown-toc', arguments: {} });
        expect(result.isError).not.toBe(true);
        await c.client.close();
        expect(c.errors).toEqual([]);
      }
      const health = await rawRequest(url.replace(/\/mcp$/, '/healthz'));
      expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
    } finally {
      s.proc.kill('SIGTERM');
    }
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toContain('"msg":"stopped"');
  });

  it('records the end of every HTTP session in the audit log on SIGTERM', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'skills-mcp-audit-'));
    const db = join(tmp, 'audit.db');
    try {
      const s = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch', '--audit', db]);
      const url = await servedUrl(s);
      const legacy = await connectClient(url, 'legacy');
      const modern = await connectClient(url, 'auto');
      await legacy.client.callTool({ name: 'markdown-toc', arguments: {} });
      await modern.client.callTool({ name: 'markdown-toc', arguments: {} });
      // Read-only calls are audited just after they answer: wait until both are in the log.
      await vi.waitFor(
        () => expect(auditEvents(db).filter((e) => e.type === 'tool_call_finished')).toHaveLength(2),
        { timeout: 20_000, interval: 200 },
      );
      s.proc.kill('SIGTERM');
      expect(await s.exited).toBe(0);
      const ended = auditEvents(db)
        .filter((e) => e.type === 'session_ended')
        .map((e) => [e.session_id, e.payload.reason]);
      expect(ended).toEqual(
        expect.arrayContaining([
          [legacy.transport.sessionId, 'signal'],
          ['http-anonymous', 'signal'],
        ]),
      );
      await legacy.client.close();
      await modern.client.close();
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("keeps a read-only call's record when its session ends right after the call", async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'skills-mcp-audit-'));
    const db = join(tmp, 'audit.db');
    try {
      const s = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch', '--audit', db]);
      const url = await servedUrl(s);
      // The first call of the server: its record waits for the audit store to open while the session ends.
      const c = await connectClient(url, 'legacy');
      await c.client.callTool({ name: 'markdown-toc', arguments: {} });
      const sid = c.transport.sessionId;
      await c.transport.terminateSession();
      await c.client.close();
      await vi.waitFor(
        () =>
          expect(auditEvents(db).some((e) => e.type === 'session_ended' && e.session_id === sid)).toBe(true),
        { timeout: 20_000, interval: 200 },
      );
      s.proc.kill('SIGTERM');
      expect(await s.exited).toBe(0);
      expect(
        auditEvents(db)
          .filter((e) => e.session_id === sid)
          .map((e) => e.type),
      ).toEqual(['session_started', 'tool_call_requested', 'tool_call_finished', 'session_ended']);
      expect(s.stderr()).not.toContain('could not audit');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('requires SKILLS_MCP_TOKEN when set, and never logs it', async () => {
    const s = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch', '--log-level', 'debug'], {
      SKILLS_MCP_TOKEN: TOKEN,
    });
    try {
      const url = await servedUrl(s);
      expect(
        (
          await rawRequest(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(401);
      const c = await connectClient(url, 'legacy', TOKEN);
      expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
      await c.client.close();
    } finally {
      s.proc.kill('SIGTERM');
    }
    expect(await s.exited).toBe(0);
    expect(s.stderr()).not.toContain(TOKEN);
  });

  it('refuses to bind a non-loopback address without a token (exit 2)', async () => {
    const s = spawnCli(['--http', '--host', '0.0.0.0', '--port', '0', '--skills', dir, '--no-watch']);
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toContain('a token is required');
  });

  it('reads the token from --token-file and refuses a short one (exit 2)', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'skills-mcp-token-'));
    try {
      const file = join(tmp, 'token');
      writeFileSync(file, 'short\n');
      chmodSync(file, 0o600);
      const s = spawnCli(['--http', '--port', '0', '--skills', dir, '--no-watch', '--token-file', file]);
      expect(await s.exited).toBe(2);
      expect(s.stderr()).toContain('at least 16');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
