import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const temps: (() => void)[] = [];
const clients: Connected[] = [];
afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const cleanup of temps.splice(0)) cleanup();
});

/** The types of the events in the audit log at `path`, in order (read-only: the server may still hold it). */
function eventTypes(path: string): string[] {
  if (!existsSync(path)) return [];
  const store = openAuditStore({ path, readOnly: true });
  try {
    return [...store.exportEvents()].map((e) => e.type);
  } finally {
    store.close();
  }
}

async function connect(extra: string[] = []) {
  const t = tempDir('skills-mcp-prepare-');
  temps.push(t.cleanup);
  const audit = join(t.dir, 'audit.db');
  const config = join(t.dir, 'skills-mcp.yaml');
  writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  const c = await connectStdio({
    era: 'legacy',
    args: [
      '--skills',
      join(repoRoot, 'skills'),
      '--config',
      config,
      '--audit',
      audit,
      '--no-watch',
      '--log-level',
      'info',
      ...extra,
    ],
  });
  clients.push(c);
  return { c, audit };
}

describe("a session's first run", () => {
  it('finds the audit log open and the sandbox probed once the client is connected, before any call', async () => {
    const { c } = await connect();
    await waitFor(() => c.stderr().includes('"msg":"audit log opened"'), 20_000, 'the audit log to open');
    await waitFor(
      () => /"msg":"(sandbox ready|sandbox unavailable[^"]*)"/.test(c.stderr()),
      20_000,
      'the sandbox probe',
    );
    const r = await c.client.callTool({ name: 'markdown-toc', arguments: {} });
    expect(r.isError).toBeFalsy();
  });

  it("finds its session recorded and the executable skills' calls prepared before any call, and then runs", async () => {
    const { c, audit } = await connect();
    await waitFor(
      () => c.stderr().includes('"msg":"first calls prepared"'),
      30_000,
      'the first calls prepared',
    );
    const line = c
      .stderr()
      .split('\n')
      .find((l) => l.includes('"msg":"first calls prepared"'))!;
    // The bundled skills with scripts: csv-stats and the others that run (at most four are prepared).
    expect((JSON.parse(line) as { skills: number }).skills).toBeGreaterThan(0);
    await waitFor(() => eventTypes(audit).includes('session_started'), 20_000, 'the session record');
    expect(eventTypes(audit)).toEqual(['session_started']);
    const input = JSON.parse(
      readFileSync(join(repoRoot, 'skills/csv-stats/assets/example-input.json'), 'utf8'),
    ) as Record<string, unknown>;
    const r = await c.client.callTool({ name: 'csv-stats', arguments: input });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    await c.close();
    const types = eventTypes(audit);
    expect(types.filter((t) => t === 'session_started')).toHaveLength(1);
    expect(types.at(-1)).toBe('session_ended');
    expect(types).toContain('tool_call_started');
  });

  it('leaves no session open for a client that leaves while its session is being recorded', async () => {
    const { c, audit } = await connect();
    // The session's record starts once the log is open: the client leaves at about that moment.
    await waitFor(() => c.stderr().includes('"msg":"audit log opened"'), 20_000, 'the audit log to open');
    await c.close();
    // The server has exited: every session it started, it ended.
    const types = eventTypes(audit);
    expect(types.filter((t) => t === 'session_started').length).toBe(
      types.filter((t) => t === 'session_ended').length,
    );
  });
});
