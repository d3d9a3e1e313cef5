import { lstat, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyWorkspaceChanges } from '../../src/sandbox/apply-workspace-changes.js';
import { copyWorkspace, releaseWorkspaceCopy } from '../../src/sandbox/copy-workspace.js';
import { neverApplied } from '../../src/sandbox/never-applied.js';
import { tempDirs } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe('neverApplied', () => {
  it.each([
    ['.git/config', true],
    ['.git', true],
    ['sub/.git/HEAD', true],
    ['.evil/config', false],
    ['.envrc', true],
    ['app/.npmrc', true],
    ['.vscode/tasks.json', true],
    ['docs/.bashrc.md', false],
    ['src/main.py', false],
    ['gitignore/.git-notes', false],
    ['.GIT/commondir', true],
    ['sub/.Git', true],
    ['.Envrc', true],
    ['.git./config', true],
    ['.git::$INDEX_ALLOCATION/config', true],
    ['.g\u200cit/config', true],
    ['GIT~1/config', true],
    ['.VSCode/tasks.json', true],
    ['.husky/pre-commit', true],
    ['.pre-commit-config.yaml', true],
    ['lefthook.yml', true],
    ['.lfsconfig', true],
    ['src/gitlab.py', false],
    ['docs/git~history.md', false],
  ])('%s → refused: %s', (rel, refused) => {
    expect(neverApplied(rel) !== undefined).toBe(refused);
  });
});

async function workspace(): Promise<string> {
  const ws = await dirs.make('skills-mcp-wscopy-');
  await mkdir(join(ws, '.git'));
  await writeFile(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await mkdir(join(ws, 'src'));
  await writeFile(join(ws, 'src', 'a.txt'), 'a\n');
  await writeFile(join(ws, 'b.txt'), 'b\n');
  await symlink('src/a.txt', join(ws, 'to-a'));
  return ws;
}

describe('copyWorkspace and applyWorkspaceChanges', () => {
  it('copies files and links but no .git, and applies nothing when nothing changed', async () => {
    const ws = await workspace();
    const copy = await copyWorkspace(ws);
    try {
      expect(await readFile(join(copy.dir, 'src', 'a.txt'), 'utf8')).toBe('a\n');
      expect(await readlink(join(copy.dir, 'to-a'))).toBe('src/a.txt');
      // The .git folder the copy holds, bound by its fd: the path resolves to it while it is held.
      expect(copy.git).toBe(`/proc/${process.pid}/fd/${copy.gitFolder?.fd}`);
      expect(realpathSync(copy.git!)).toBe(join(realpathSync(ws), '.git'));
      expect((await lstat(join(copy.dir, '.git'))).isDirectory()).toBe(true);
      expect(await applyWorkspaceChanges(copy, false)).toEqual({
        written: [],
        digests: new Map(),
        deleted: [],
        refused: [],
        applied: true,
      });
    } finally {
      releaseWorkspaceCopy(copy);
      await rm(copy.dir, { recursive: true, force: true });
    }
  });

  it('never writes over a file the host changed during the run, nor through a parent made a link', async () => {
    const ws = await workspace();
    const copy = await copyWorkspace(ws);
    try {
      await writeFile(join(copy.dir, 'b.txt'), 'from the script\n');
      await writeFile(join(ws, 'b.txt'), 'from the person\n');
      await writeFile(join(copy.dir, 'new.txt'), 'script\n');
      await writeFile(join(ws, 'new.txt'), 'person\n');
      await mkdir(join(copy.dir, 'out'));
      await writeFile(join(copy.dir, 'out', 'x.txt'), 'x\n');
      await symlink('/tmp', join(ws, 'out')); // the host's own link, made during the run
      const changes = await applyWorkspaceChanges(copy, false);
      expect(changes.written).toEqual([]);
      expect(changes.refused).toEqual([
        { path: 'b.txt', reason: 'changed on the host during the run' },
        { path: 'new.txt', reason: 'changed on the host during the run' },
        { path: 'out/x.txt', reason: 'a parent folder on the host is not a plain folder' },
      ]);
      expect(await readFile(join(ws, 'b.txt'), 'utf8')).toBe('from the person\n');
    } finally {
      await rm(copy.dir, { recursive: true, force: true });
    }
  });

  it('writes new files as 0644 in new folders, keeps an existing file mode, never rewrites an executable', async () => {
    const ws = await workspace();
    await writeFile(join(ws, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(join(ws, 'notes.txt'), 'n\n', { mode: 0o600 });
    const copy = await copyWorkspace(ws);
    try {
      await mkdir(join(copy.dir, 'deep', 'er'), { recursive: true });
      await writeFile(join(copy.dir, 'deep', 'er', 'n.txt'), 'n\n', { mode: 0o4777 });
      await writeFile(join(copy.dir, 'run.sh'), '#!/bin/sh\necho hi\n');
      await writeFile(join(copy.dir, 'notes.txt'), 'more\n');
      const changes = await applyWorkspaceChanges(copy, false);
      expect(changes.written.sort()).toEqual(['deep/er/n.txt', 'notes.txt']);
      expect(changes.refused.map((r) => r.path)).toEqual(['run.sh']);
      expect((await lstat(join(ws, 'deep', 'er', 'n.txt'))).mode & 0o7777).toBe(0o644);
      expect((await lstat(join(ws, 'notes.txt'))).mode & 0o7777).toBe(0o600);
      expect(await readFile(join(ws, 'run.sh'), 'utf8')).toBe('#!/bin/sh\n');
    } finally {
      await rm(copy.dir, { recursive: true, force: true });
    }
  });
});
