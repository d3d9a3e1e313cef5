import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempDir } from '../helpers/temp-dir.js';
import { trials } from '../helpers/trials.js';

const TRIALS = trials(50);

describe('a server killed with SIGKILL in the middle of a run', () => {
  const t = tempDir();
  afterAll(t.cleanup);

  it(`restarts with tool_call_interrupted for that call, nothing lost or duplicated (${TRIALS} trials)`, async () => {
    const skills = join(t.dir, 'skills');
    mkdirSync(join(skills, 'slow', 'scripts'), { recursive: true });
    writeFileSync(
      join(skills, 'slow', 'SKILL.md'),
      '---\nname: slow\ndescription: Sleeps. Use in tests.\nentry_point: scripts/main.sh\n---\n\nSleeps.\n',
    );
    writeFileSync(join(skills, 'slow', 'scripts', 'main.sh'), 'echo started\nsleep 30\n');
    const config = join(t.dir, 'skills-mcp.yaml');
    writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
    const auditPath = join(t.dir, 'state', 'audit.db');
    const args = [
      '--skills',
      skills,
      '--config',
      config,
      '--audit',
      auditPath,
      '--no-watch',
      '--log-level',
      'warn',
    ];
    const startedCalls = (): Set<string> => {
      if (!existsSync(auditPath)) return new Set();
      let store;
      try {
        store = openAuditStore({ path: auditPath, readOnly: true });
      } catch {
        return new Set(); // the first server is still creating the file: look again
      }
      try {
        return new Set(
          store
            .listCalls()
            .filter((c) => c.startedEventId !== null)
            .map((c) => c.callId),
        );
      } finally {
        store.close();
      }
    };

    const killed: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const before = trial === 0 ? new Set<string>() : startedCalls();
      const c = await connectStdio({ era: 'legacy', args });
      // The call opens the audit log, which first recovers the previous trial's killed server.
      void c.client.callTool({ name: 'slow', arguments: {} }).catch(() => undefined);
      let current: string | undefined;
      await waitFor(
        () => {
          current = [...startedCalls()].find((id) => !before.has(id));
          return current !== undefined;
        },
        20_000,
        `trial ${trial}: tool_call_started`,
      );
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
      process.kill(c.transport.pid!, 'SIGKILL');
      await c.close().catch(() => undefined);
      killed.push(current!);
    }
    // One more start recovers the last trial.
    const last = await connectStdio({ era: 'legacy', args });
    await last.client.callTool({ name: 'read_skill_file', arguments: { skill: 'slow', path: 'SKILL.md' } });
    await last.close();

    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      expect(store.verify().ok).toBe(true);
      const events = [...store.exportEvents()];
      expect(events.map((e) => e.event_id)).toEqual(events.map((_, i) => i + 1));
      for (const callId of killed) {
        const detail = store.getCall(callId)!;
        const terminal = detail.events.filter(
          (e) => e.type === 'tool_call_finished' || e.type === 'tool_call_interrupted',
        );
        expect(
          terminal.map((e) => e.type),
          callId,
        ).toEqual(['tool_call_interrupted']);
      }
      for (const call of store.listCalls()) {
        const terminal = store
          .getCall(call.callId)!
          .events.filter((e) => e.type === 'tool_call_finished' || e.type === 'tool_call_interrupted');
        expect(terminal, call.callId).toHaveLength(1);
      }
    } finally {
      store.close();
    }
  }, 300_000);
});
