import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { connectClient, type Connected } from '../http/helpers/connect-client.js';
import { CLI, servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';
import { stop, TOKEN } from './helpers/anchored-server.js';

const CLIENTS = 20;
const GATED = 6;

/** `skills-mcp audit verify` as a child process, without blocking the clients' event loop. */
function verifyLive(db: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'audit', 'verify', '--audit', db], { stdio: 'pipe' });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/**
 * `audit verify` on a SQLite log that a real server writes while 20 real clients call it (gated runs in the real
 * sandbox, read-only reads), anchoring every 200 ms: the events, the summary tables, the writer marks and the
 * database's anchor copy come from one snapshot, and anchors written while it reads are not taken for tampering.
 */
describe('audit verify on a live log (built binary, 20 clients)', () => {
  let fx: ReturnType<typeof gatedFixture>;
  let server: SpawnedServer;
  let clients: Connected[] = [];
  let running = true;
  let loops: Promise<void>[] = [];
  const counts = { gated: 0, reads: 0, errors: 0 };

  beforeAll(async () => {
    fx = gatedFixture('approval:\n  mode: allow\naudit_anchors:\n  interval_ms: 200\n');
    server = spawnCli(['--http', '--port', '0', ...fx.args], { SKILLS_MCP_TOKEN: TOKEN });
    const url = await servedUrl(server);
    clients = await Promise.all(Array.from({ length: CLIENTS }, () => connectClient(url, 'legacy', TOKEN)));
    loops = clients.map(async (c, i) => {
      while (running) {
        const r =
          i < GATED
            ? await c.client.callTool({ name: 'echo', arguments: { text: `load ${i}` } })
            : await c.client.callTool({
                name: 'read_skill_file',
                arguments: { skill: 'echo', path: 'SKILL.md' },
              });
        if (r.isError === true) counts.errors++;
        else if (i < GATED) counts.gated++;
        else counts.reads++;
      }
    });
    // Under way: some of each kind answered.
    while (counts.gated < GATED || counts.reads < CLIENTS) await new Promise((r) => setImmediate(r));
  }, 120_000);
  afterAll(async () => {
    running = false;
    await Promise.all(loops);
    await Promise.all(clients.map((c) => c.client.close()));
    await stop(server);
    fx.cleanup();
  }, 60_000);

  it('verifies ok ten times in a row while the log is written, then fails once a writer without the key appends', async () => {
    const results: string[] = [];
    for (let i = 0; i < 10; i++) {
      const before = counts.gated + counts.reads;
      const r = await verifyLive(fx.auditPath);
      results.push(`${r.code}: ${(r.code === 0 ? r.out : r.err).trim().split('\n').slice(0, 4).join(' | ')}`);
      expect(r.code, results.join('\n')).toBe(0);
      expect(r.out).toMatch(/\nok\n$/);
      // The load went on while it read.
      expect(counts.gated + counts.reads).toBeGreaterThan(before);
    }
    expect(counts.errors).toBe(0);

    // A writer without the key, through the store's API, while the server goes on writing.
    const forger = openAuditStore({ path: fx.auditPath, recover: false, verifyOnOpen: false });
    const forged = forger.startSession({ transport: 'http', server_version: '0.1.0' });
    forger.close();
    const r = await verifyLive(fx.auditPath);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(new RegExp(`writers: 1 event NOT VOUCHED FOR: ${forged.eventId}\\b`));
    expect(r.err).toMatch(/FAILED: the audit log does not verify\n$/);
  }, 300_000);
});
