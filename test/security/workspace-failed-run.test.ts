/**
 * A run that fails halfway leaves its workspace as it was: its writes and deletions are not applied (unless the
 * operator opted in), the result says what would have changed, and the files it wrote stay readable among the
 * call's files (`workspace-changes/`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe } from 'vitest';
import { UNAPPLIED_FOLDER } from '../../src/sandbox/keep-unapplied.js';
import { canaryToken, exists } from './harness/host.js';
import { blocked, breach, securitySuite, type CaseContext } from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

/** A workspace with one document; a script that rewrites it, adds a file, deletes one and exits 3. */
async function failingRun(ctx: CaseContext, applyFailed: boolean) {
  const ws = await ctx.h.dirs.make('skills-mcp-sec-failed-', 0o777);
  await writeFile(join(ws, 'doc.txt'), 'original\n', { mode: 0o666 });
  await writeFile(join(ws, 'old.txt'), 'old\n', { mode: 0o666 });
  const out = await ctx.out();
  const files = join(out, 'files');
  const token = canaryToken();
  const r = await ctx.run(
    'workspace_write',
    {
      workspace: ws,
      files: { 'doc.txt': `half-edited ${token}\n`, 'new/n.txt': token },
      delete: ['old.txt'],
      exit: 3,
    },
    {
      plan: {
        workspace: { path: ws, write: true, applyFailed, keepIn: files },
        writablePaths: [out],
        cwd: files,
      },
    },
  );
  return { r, ws, files, token };
}

describe('filesystem: a failed run applies nothing', () => {
  securityCase(
    {
      id: 'fs-workspace-failed-run',
      category: 'filesystem',
      title:
        'a script that fails after editing the workspace: nothing applied, its writes kept as call files',
    },
    async (ctx) => {
      const { r, ws, files, token } = await failingRun(ctx, false);
      if (r.exitCode !== 3) throw new Error(`the script did not fail as planned (exit ${r.exitCode})`);
      const doc = await readFile(join(ws, 'doc.txt'), 'utf8');
      const changed = [
        doc !== 'original\n' && 'doc.txt rewritten',
        (await exists(join(ws, 'new'))) && 'new/ created',
        !(await exists(join(ws, 'old.txt'))) && 'old.txt deleted',
      ].filter((x): x is string => typeof x === 'string');
      if (changed.length > 0) return breach(`a failed run changed the workspace: ${changed.join(', ')}`);
      const w = r.workspace;
      if (
        w?.applied !== false ||
        w.written.sort().join() !== 'doc.txt,new/n.txt' ||
        w.deleted.join() !== 'old.txt'
      )
        throw new Error(`the result does not say what would have changed: ${JSON.stringify(w)}`);
      const kept = await readFile(join(files, UNAPPLIED_FOLDER, 'new', 'n.txt'), 'utf8').catch(() => '');
      if (kept !== token) throw new Error('the failed run’s file is not kept among the call files');
      return blocked('workspace unchanged; result lists 2 writes and 1 deletion not applied; files kept');
    },
  );

  securityControl(
    {
      id: 'fs-workspace-failed-run-opt-in',
      category: 'filesystem',
      title: 'with the operator setting, a failed run’s changes are applied',
    },
    async (ctx) => {
      const { r, ws, token } = await failingRun(ctx, true);
      return (
        r.exitCode === 3 &&
        r.workspace?.applied === true &&
        (await readFile(join(ws, 'new', 'n.txt'), 'utf8').catch(() => '')) === token &&
        !(await exists(join(ws, 'old.txt')))
      );
    },
  );
});
