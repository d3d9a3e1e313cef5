import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * Writes its file, says it has started (a marker beside its files folder), waits for the test's go (a file the test
 * writes there), then answers. The test fills the audit log's file system in between.
 */
const WAITER = `import json, os, time
files = os.environ["SKILL_FILES_DIR"]
out = os.path.dirname(files)
open(os.path.join(files, "report.txt"), "w").write("the report")
open(os.path.join(out, "started"), "w").close()
while not os.path.exists(os.path.join(out, "go")):
    time.sleep(0.02)
print(json.dumps({"made": "report.txt"}))
`;

const canMount = process.platform === 'linux' && process.getuid?.() === 0;

/** Fills the file system holding `path` with one file, to the last byte it takes. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 8, 1]) {
      const chunk = Buffer.alloc(size, 0x78);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

// Mounting a tmpfs needs root on Linux; elsewhere the file system cannot be filled on purpose.
describe.skipIf(!canMount)(
  'the audit log filling up during a run (built binary, real sandbox, tmpfs)',
  () => {
    const t = tempDir();
    const logDir = join(t.dir, 'log');
    let mounted = false;

    beforeAll(() => {
      mkdirSync(logDir);
      const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', logDir]);
      if (m.status !== 0) throw new Error(`mount failed: ${m.stderr.toString()}`);
      mounted = true;
    });
    afterAll(() => {
      // The exact path mounted; lazily if a process still holds it (the server of a failed test).
      if (mounted && spawnSync('umount', [logDir]).status !== 0) spawnSync('umount', ['-l', logDir]);
      t.cleanup();
    });

    it('answers with what the run produced, marked not recorded, and records its end once space returns', async () => {
      const skills = join(t.dir, 'skills');
      writeTestSkill(skills, 'waiter', { description: 'Waits for a go. Use in tests.', script: WAITER });
      const data = join(t.dir, 'data');
      const config = join(t.dir, 'skills-mcp.yaml');
      writeFileSync(config, `approval:\n  mode: allow\n  fallback: rules-only\ndata_dir: ${data}\n`);
      const auditPath = join(logDir, 'audit.db');
      const c = await connectStdio({
        era: 'legacy',
        args: ['--skills', skills, '--config', config, '--no-watch'],
        env: { SKILLS_MCP_AUDIT: auditPath },
      });
      const filler = join(logDir, 'filler');
      let early: unknown;
      try {
        const answer = c.client.callTool({ name: 'waiter', arguments: {} });
        void answer.then((r) => (early = r));
        const runs = data;
        const callFolder = () =>
          existsSync(runs) ? readdirSync(runs).find((n) => n.startsWith('skills-mcp-out-')) : undefined;
        await waitFor(
          () => {
            const f = callFolder();
            return f !== undefined && existsSync(join(runs, f, 'started'));
          },
          30_000,
          'the script to start',
        );
        fill(filler);
        closeSync(openSync(join(runs, callFolder()!, 'go'), 'w'));

        const r = await answer;
        const text = (r.content as { type: string; text?: string }[]).map((p) => p.text ?? '').join('\n');
        expect(text).toContain('The script ran, but the audit log has not recorded how it ended');
        expect(text).toContain('not recorded yet');
        expect(text).toContain('"made": "report.txt"');
        expect(text).toContain('report.txt (10 bytes)');
        expect(r.isError).toBeFalsy();
        expect(r._meta).toMatchObject({ 'skills-mcp/recorded': false, 'skills-mcp/status': 'ok' });
        const callId = (r._meta as Record<string, string>)['skills-mcp/call_id']!;
        const links = (r.content as { type: string; name?: string }[]).filter(
          (p) => p.type === 'resource_link',
        );
        expect(links.map((l) => l.name)).toEqual(['report.txt']);

        const finishedOf = () => {
          const store = openAuditStore({ path: auditPath, readOnly: true });
          try {
            return store.getCall(callId)?.events.find((e) => e.type === 'tool_call_finished');
          } finally {
            store.close();
          }
        };
        expect(finishedOf()).toBeUndefined();

        rmSync(filler);
        await waitFor(() => finishedOf() !== undefined, 30_000, 'the end of the run to be recorded');
        expect(finishedOf()?.payload).toMatchObject({
          status: 'ok',
          exit_code: 0,
          artifacts: [{ path: 'report.txt', bytes: 10, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }],
        });
        await c.close();
        expect(c.errors).toEqual([]);
        const verify = runCli(['audit', 'verify', '--audit', auditPath]);
        expect(verify.stdout).toMatch(/^chain: ok/);
        expect(verify.code).toBe(0);
      } catch (e) {
        const said = `answer so far: ${JSON.stringify(early)}\nserver log:\n${c.stderr().slice(-4000)}`;
        throw new Error(`${(e as Error).message}\n${said}`, { cause: e });
      } finally {
        rmSync(filler, { force: true });
        await c.close().catch(() => undefined);
      }
    }, 120_000);

    it('logs the end of a run it could never record when it stops while the disk is still full', async () => {
      const skills = join(t.dir, 'skills2');
      writeTestSkill(skills, 'waiter', { description: 'Waits for a go. Use in tests.', script: WAITER });
      const data = join(t.dir, 'data2');
      const config = join(t.dir, 'skills-mcp-2.yaml');
      writeFileSync(config, `approval:\n  mode: allow\n  fallback: rules-only\ndata_dir: ${data}\n`);
      const c = await connectStdio({
        era: 'legacy',
        args: ['--skills', skills, '--config', config, '--no-watch'],
        env: { SKILLS_MCP_AUDIT: join(logDir, 'audit-2.db') },
      });
      const filler = join(logDir, 'filler-2');
      try {
        const answer = c.client.callTool({ name: 'waiter', arguments: {} });
        const callFolder = () =>
          existsSync(data) ? readdirSync(data).find((n) => n.startsWith('skills-mcp-out-')) : undefined;
        await waitFor(
          () => {
            const f = callFolder();
            return f !== undefined && existsSync(join(data, f, 'started'));
          },
          30_000,
          'the script to start',
        );
        fill(filler);
        closeSync(openSync(join(data, callFolder()!, 'go'), 'w'));
        const r = await answer;
        expect(r._meta).toMatchObject({ 'skills-mcp/recorded': false });
        const callId = (r._meta as Record<string, string>)['skills-mcp/call_id']!;
        await c.close();
        await waitFor(
          () => c.transport.pid === null || c.stderr().includes('"stopped"'),
          30_000,
          'the server to stop',
        );
        const lost = c
          .stderr()
          .split('\n')
          .filter((l) => l.includes('the end of a run was never recorded'));
        expect(lost).toHaveLength(1);
        // The record itself is in the log line, for the operator: exit code and artifact digest.
        expect(JSON.parse(lost[0]!)).toMatchObject({
          level: 50,
          callId,
          event: {
            type: 'tool_call_finished',
            payload: { exit_code: 0, artifacts: [{ path: 'report.txt' }] },
          },
        });
      } finally {
        rmSync(filler, { force: true });
        await c.close().catch(() => undefined);
      }
    }, 120_000);
  },
);
