import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const temps: (() => void)[] = [];
const clients: Connected[] = [];
afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const cleanup of temps.splice(0)) cleanup();
});

describe("a session's first run", () => {
  it('finds the audit log open and the sandbox probed once the client is connected, before any call', async () => {
    const t = tempDir('skills-mcp-prepare-');
    temps.push(t.cleanup);
    const c = await connectStdio({
      era: 'legacy',
      args: [
        '--skills',
        join(repoRoot, 'skills'),
        '--audit',
        join(t.dir, 'audit.db'),
        '--no-watch',
        '--log-level',
        'info',
      ],
    });
    clients.push(c);
    await waitFor(() => c.stderr().includes('"msg":"audit log opened"'), 20_000, 'the audit log to open');
    await waitFor(
      () => /"msg":"(sandbox ready|sandbox unavailable[^"]*)"/.test(c.stderr()),
      20_000,
      'the sandbox probe',
    );
    const r = await c.client.callTool({ name: 'markdown-toc', arguments: {} });
    expect(r.isError).toBeFalsy();
  });
});
