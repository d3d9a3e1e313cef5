import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtCli, repoRoot } from '../helpers/temp-dir.js';

const state = mkdtempSync(join(tmpdir(), 'skills-mcp-start-signal-'));
afterAll(() => rmSync(state, { recursive: true, force: true }));

/**
 * Starts the built server with stdin held open, sends SIGTERM the moment `line` appears on its stderr (the server is
 * then still starting: the transport is not up yet), and resolves with how it ended.
 */
async function signalDuringStartUp(args: string[], line: string) {
  const audit = join(mkdtempSync(join(state, 'run-')), 'audit.db');
  const proc = spawn(
    process.execPath,
    // The start-up lines it waits for are info lines, which stdio leaves out unless asked.
    [builtCli, ...args, '--skills', join(repoRoot, 'skills'), '--no-watch', '--log-level', 'info'],
    {
      env: { ...process.env, SKILLS_MCP_AUDIT: audit, SKILLS_MCP_TOKEN: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  let stdout = '';
  let sent = false;
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    if (!sent && stderr.includes(line)) {
      sent = true;
      proc.kill('SIGTERM');
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    proc.once('exit', (c, s) => r([c, s])),
  );
  proc.stdin.destroy();
  return { code, signal, sent, stderr, stdout, audit };
}

describe('a stop signal while the server is still starting', () => {
  it.each([
    ['stdio', [] as string[], '"msg":"skills loaded"'],
    ['HTTP', ['--http', '--port', '0'], '"msg":"skills loaded"'],
    [
      'HTTP with the approval console, right after the console is ready',
      ['--http', '--port', '0', '--approval-console'],
      '"msg":"approval console ready"',
    ],
    [
      'stdio with the approval console, right after the console is ready',
      ['--approval-console'],
      '"msg":"approval console ready"',
    ],
  ])('%s: stops cleanly with exit 0 instead of dying of the signal', async (_name, args, line) => {
    const r = await signalDuringStartUp(args, line);
    expect(r.sent).toBe(true);
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
    expect(r.stderr).toContain('"signal":"SIGTERM"');
    expect(r.stderr).toContain('"msg":"stopped"');
    expect(r.stdout).toBe('');
    if (existsSync(r.audit)) {
      const verify = spawnSync(process.execPath, [builtCli, 'audit', 'verify', '--audit', r.audit], {
        encoding: 'utf8',
      });
      expect(verify.stdout + verify.stderr).toContain('chain: ok');
      expect(verify.status).toBe(0);
    }
  });
});
