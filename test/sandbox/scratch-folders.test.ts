import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyScope } from '../../src/sandbox/collect-binds.js';
import { makeScratchFolder } from '../../src/sandbox/scratch-folders.js';
import { tempDir } from '../helpers/temp-dir.js';

const temps: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of temps.splice(0)) cleanup();
});

// The folders are bubblewrap's, and a pid namespace is read from /proc: both only on Linux.
describe.skipIf(process.platform !== 'linux')('scratch folders of the sandbox', () => {
  it('removes what dead servers left, and nothing that is not exactly that', async () => {
    const t = tempDir('skills-mcp-scratch-');
    temps.push(t.cleanup);
    const parent = t.dir;
    // A pid that was just in use and is now gone stands for a server killed with SIGKILL.
    const dead = spawnSync('true').pid;
    const live = process.ppid;
    // Folders are named after their server's pid and pid namespace: a pid is dead or alive only in its namespace.
    const ns = statSync('/proc/self/ns/pid').ino;
    const at = (name: string) => join(parent, name);
    mkdirSync(at(`skills-mcp-empty-${dead}-${ns}-aB3dE6`));
    writeFileSync(emptyScope(at(`skills-mcp-empty-${dead}-${ns}-aB3dE6`)), '{}\n');
    mkdirSync(at(`skills-mcp-stage-${dead}-${ns}-Zz9Yy8`));
    // Kept: a live server's, one in another pid namespace (a container sharing the folder), one with something in
    // it, a link and a file under a leftover's name, other names.
    mkdirSync(at(`skills-mcp-empty-${live}-${ns}-qwErty`));
    mkdirSync(at(`skills-mcp-empty-${dead}-${ns + 1}-contnr`));
    mkdirSync(at(`skills-mcp-empty-${dead}-${ns}-full00`));
    writeFileSync(join(at(`skills-mcp-empty-${dead}-${ns}-full00`), 'keep'), 'x');
    mkdirSync(at('target'));
    writeFileSync(join(at('target'), 'keep'), 'x');
    symlinkSync(at('target'), at(`skills-mcp-empty-${dead}-${ns}-link00`));
    writeFileSync(at(`skills-mcp-empty-${dead}-${ns}-file00`), 'x');
    mkdirSync(at(`skills-mcp-empty-${dead}-${ns}-toolong0`));
    mkdirSync(at(`skills-mcp-other-${dead}-${ns}-abcdef`));

    const made = await makeScratchFolder(parent, 'skills-mcp-empty-', emptyScope);
    expect(made.startsWith(at(`skills-mcp-empty-${process.pid}-${ns}-`))).toBe(true);
    expect(lstatSync(made).isDirectory()).toBe(true);
    expect(readdirSync(parent).sort()).toEqual(
      [
        made.slice(parent.length + 1),
        `skills-mcp-empty-${live}-${ns}-qwErty`,
        `skills-mcp-empty-${dead}-${ns + 1}-contnr`,
        `skills-mcp-empty-${dead}-${ns}-full00`,
        `skills-mcp-empty-${dead}-${ns}-link00`,
        `skills-mcp-empty-${dead}-${ns}-file00`,
        `skills-mcp-empty-${dead}-${ns}-toolong0`,
        `skills-mcp-other-${dead}-${ns}-abcdef`,
        `skills-mcp-stage-${dead}-${ns}-Zz9Yy8`,
        'target',
      ].sort(),
    );
    expect(existsSync(join(at('target'), 'keep'))).toBe(true);

    // The other prefix sweeps its own.
    const stage = await makeScratchFolder(parent, 'skills-mcp-stage-');
    expect(existsSync(at(`skills-mcp-stage-${dead}-${ns}-Zz9Yy8`))).toBe(false);
    expect(existsSync(stage)).toBe(true);
  });
});
