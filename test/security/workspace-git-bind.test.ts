/**
 * A run that writes the workspace works on a private copy, with the workspace's real `.git` bound read-only on top.
 * A local user who may write the workspace swaps `.git` for a link to a folder outside it after the copy was made
 * and before the sandbox binds it (here at the worst moment: while the run waits for its go, before bubblewrap
 * starts). Judged by a canary folder outside the workspace: its token never shows inside the sandbox.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { canaryToken } from './harness/host.js';
import { blocked, breach, securitySuite, type CaseContext } from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

const canaryHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The run's go, which the adapter awaits once the copy is made and its binds chosen, just before bubblewrap starts:
 * a thenable that runs `swap` only then.
 */
function goAfter(swap: () => Promise<void>): Promise<void> {
  let started: Promise<void> | undefined;
  const go = () => (started ??= swap());
  return {
    then: (ok?: () => unknown, ko?: (e: unknown) => unknown) => go().then(ok, ko),
    // Only marks a failure handled (the sandbox does so first): the swap waits for the adapter's `then`.
    catch: () => undefined,
  } as unknown as Promise<void>;
}

interface Report {
  files: Array<{ readable: boolean; tokens?: string[] }>;
}

/** A workspace (mode `mode`) with a `.git` holding `HEAD`; a canary folder outside it with a token. */
async function gitWorkspace(ctx: CaseContext, mode: number) {
  const token = canaryToken();
  const ws = await ctx.h.dirs.make('skills-mcp-sec-gitbind-', mode);
  await mkdir(join(ws, '.git'));
  await writeFile(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(ws, 'doc.txt'), 'doc\n');
  const canary = await ctx.h.dirs.make('skills-mcp-sec-gitbind-canary-', 0o755);
  await writeFile(join(canary, 'HEAD'), token, { mode: 0o644 });
  return { ws, canary, token };
}

/** Reads `<ws>/.git/HEAD` inside a writing run; `swap` runs once the copy is made, before bubblewrap binds. */
async function readGit(ctx: CaseContext, ws: string, swap?: () => Promise<void>) {
  return ctx.probe<Report>(
    'read',
    { paths: [join(ws, '.git', 'HEAD')] },
    {
      plan: { workspace: { path: ws, write: true } },
      ...(swap === undefined ? {} : { run: { ready: goAfter(swap) } }),
    },
  );
}

describe('filesystem: the read-only .git over a workspace copy', () => {
  for (const mode of [0o700, 0o755]) {
    securityCase(
      {
        id: `fs-workspace-git-swapped-${mode.toString(8)}`,
        category: 'filesystem',
        title: `.git swapped for a link outside between the copy and the bind (workspace mode ${mode.toString(8)})`,
      },
      async (ctx) => {
        const { ws, canary, token } = await gitWorkspace(ctx, mode);
        const swap = async () => {
          await rename(join(ws, '.git'), join(ws, 'git-moved'));
          await symlink(canary, join(ws, '.git'));
        };
        let r: Report;
        try {
          r = await readGit(ctx, ws, swap);
        } catch (e) {
          // A sandbox that refuses to start is safe; the canary's token is the judge. (SANDBOX_DENIED, when the
          // sandbox is forced unavailable, is the harness's to judge.)
          if (!isSkillsError(e) || e.code === 'SANDBOX_DENIED') throw e;
          if (String(e).includes(token)) return breach('the canary token shows in the error');
          return blocked(`the run did not start: ${String(e).slice(0, 200)}`);
        }
        const f = r.files[0];
        if (f?.readable === true && JSON.stringify(f).includes(canaryHash(token)))
          return breach('the canary folder outside the workspace was bound at <workspace>/.git');
        return blocked(`.git inside is the workspace's own (${JSON.stringify(f)})`);
      },
    );
  }

  securityControl(
    {
      id: 'fs-workspace-git-bound',
      category: 'filesystem',
      title: 'the workspace’s .git is readable inside a writing run',
    },
    async (ctx) => {
      const { ws } = await gitWorkspace(ctx, 0o700);
      const r = await readGit(ctx, ws);
      return r.files[0]?.readable === true;
    },
  );
});
