import { mkdirSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forbiddenMounts, readOnlyPathProblem } from '../../src/sandbox/check-read-only-path.js';
import { parseProfile } from '../../src/sandbox/load-profile.js';
import { isSkillsError } from '../../src/errors.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

const t = tempDir();
afterAll(() => t.cleanup());
const home = join(t.dir, 'home');
const state = join(t.dir, 'state');
const fonts = join(t.dir, 'fonts');
const shared = join(t.dir, 'shared');
for (const d of [join(home, '.ssh'), join(home, 'docs'), join(state, 'runs'), fonts, shared])
  mkdirSync(d, { recursive: true });
chmodSync(shared, 0o777);
symlinkSync(fonts, join(t.dir, 'fonts-link'));
const forbidden = forbiddenMounts({ home, serverPaths: [state] });

describe('read-only paths an operator may add to the sandbox', () => {
  it.each([
    ['a folder of fonts', fonts],
    ['a system folder outside /usr', '/etc/fonts'],
    ['a folder inside a home folder', join(home, 'docs')],
  ])('accepts %s', (_what, p) => {
    expect(readOnlyPathProblem(p, forbidden)).toBeUndefined();
  });

  it.each([
    ['a relative path', 'fonts', /absolute/],
    ['/', '/', /absolute, normalized path other than \//],
    ['a missing path', join(t.dir, 'nope'), /does not exist/],
    ['a symbolic link', join(t.dir, 'fonts-link'), /symbolic link; give the real path/],
    ['/proc', '/proc/self', /never mounted/],
    ['/dev', '/dev/shm', /never mounted/],
    ["root's home", '/root', /is or holds \/root/],
    ['the shadow file', '/etc/shadow', /is or holds \/etc\/shadow/],
    ['/etc as a whole', '/etc', /is or holds \/etc\//],
    ['an .ssh folder', join(home, '.ssh'), /\.ssh/],
    ['a home folder holding .ssh', home, /\.ssh/],
    ["the server's state", state, /is or holds/],
    ['a folder below the state', join(state, 'runs'), /is or holds/],
    ['a folder every user may write', shared, /writable by its group or by every user/],
  ])('refuses %s', (_what, p, why) => {
    expect(readOnlyPathProblem(p, forbidden)).toMatch(why);
  });

  it('refuses a profile whose read-only path holds secrets, as path: message lines', () => {
    const base = { description: 'x', sandbox: 'required', network: 'none', wallTimeMs: 1000, cpuSeconds: 1 };
    const limits = { memoryMiB: 64, pids: 16, tmpfsMiB: 8, fileSizeMiB: 8, maxOutputBytes: 4096 };
    const err = (() => {
      try {
        parseProfile('extra', { ...base, ...limits, readOnlyPaths: [fonts, '/root'] });
      } catch (e) {
        return e;
      }
    })();
    expect(isSkillsError(err) && err.code).toBe('SANDBOX_PROFILE_INVALID');
    expect(isSkillsError(err) && err.details?.issues).toEqual([
      'readOnlyPaths.1: "/root" is or holds /root, which is never mounted into the sandbox',
    ]);
    expect(parseProfile('extra', { ...base, ...limits, readOnlyPaths: [fonts] }).readOnlyPaths).toEqual([
      fonts,
    ]);
  });

  it('stops the server with exit 2 and a path: message line for a bad sandbox.read_only_paths', () => {
    const file = join(t.dir, 'skills-mcp.yaml');
    writeFileSync(
      file,
      `sandbox:\n  read_only_paths:\n    - ${fonts}\n    - /etc/shadow\n    - ${join(t.dir, 'nope')}\n`,
    );
    const r = runCli(['--config', file, '--skills', t.dir, '--audit', join(state, 'audit.db')], {
      env: { HOME: home },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `${file}: sandbox.read_only_paths.1: "/etc/shadow" is or holds /etc/shadow, which is never mounted into the sandbox`,
    );
    expect(r.stderr).toContain(`${file}: sandbox.read_only_paths.2: "${join(t.dir, 'nope')}" does not exist`);
  });
});
