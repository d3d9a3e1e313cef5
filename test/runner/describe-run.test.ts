import { describe, expect, it } from 'vitest';
import { describeRun } from '../../src/runner/describe-run.js';
import type { Finished } from '../../src/runner/execute-call.js';

function finished(written: string[], refused: string[]): Finished {
  return {
    result: {
      exitCode: 0,
      signal: null,
      stdout: Buffer.from('done\n'),
      stderr: Buffer.alloc(0),
      truncated: { stdout: false, stderr: false },
      bytes: { stdout: 5, stderr: 0 },
      durationMs: 10,
      timedOut: false,
      cancelled: false,
      oomKilled: false,
      workspace: {
        written,
        digests: new Map(written.map((p) => [p, { sha256: '0'.repeat(64), bytes: 0 }])),
        deleted: [],
        refused: refused.map((path) => ({ path, reason: 'path too long' })),
        applied: true,
      },
      evidence: {
        requested: 'required',
        effective: 'enforced',
        adapter: 'bwrap',
        active: true,
        profile: 'default',
        network: 'none',
        seccomp: true,
        limits: { wall: 30_000, cpu: 30, memory: 'cgroup', pids: 'cgroup' },
      },
    },
    output: {
      source: 'stdout-text',
      artifacts: [],
      leftOut: { listed: [], counts: {}, total: 0 },
      refusedNames: [],
    },
    stdoutSha256: '0'.repeat(64),
  };
}

describe('describeRun', () => {
  it('lists a few workspace changes by name', () => {
    const r = describeRun('c1', 'ok', finished(['a.txt', 'b\n.txt'], ['.git/config']), 30_000);
    expect(r.text).toContain('Workspace: wrote "a.txt", "b\\n.txt"; deleted nothing');
    expect(r.text).toContain('Workspace changes not applied: ".git/config" (path too long)');
  });

  it('spells out invisible and bidirectional characters in the names it lists', () => {
    const r = describeRun('c1', 'ok', finished(['.g\u200cit.txt', 'a\u202etxt.exe'], []), 30_000);
    expect(r.text).toContain('".g\\u200Cit.txt", "a\\u202Etxt.exe"');
  });

  it('keeps the result small when a run changed thousands of files with long paths', () => {
    const long = (i: number) => `${'d'.repeat(240)}/`.repeat(16) + `f${i}.txt`;
    const many = Array.from({ length: 20_000 }, (_, i) => long(i));
    const r = describeRun('c1', 'ok', finished(many, many), 30_000);
    expect(r.text.length).toBeLessThan(50_000);
    expect(r.text).toMatch(/… and 19\d{3} more/);
  });

  it('says a failed run applied nothing, what it would have changed and where its files are', () => {
    const f = finished(['doc.txt'], []);
    f.result.exitCode = 3;
    f.result.workspace = { ...f.result.workspace!, deleted: ['old.txt'], applied: false };
    const r = describeRun('c1', 'error', f, 30_000);
    expect(r.text).toContain(
      'Workspace: the run failed, so none of its changes were applied. It would have written "doc.txt"; deleted "old.txt". What it wrote is among the call\'s files, under workspace-changes/.',
    );
    expect(r.text).not.toContain('Workspace: wrote');
  });
});
