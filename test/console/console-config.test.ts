import type { spawn as spawnType } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { consoleEnabled, isDesktopSession } from '../../src/cli/approval-console.js';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { createBrowserOpener, openCommand } from '../../src/console/open-browser.js';
import { createLogger } from '../../src/log.js';
import { tempDir } from '../helpers/temp-dir.js';

const io = (env: NodeJS.ProcessEnv) => ({ out: () => {}, err: () => {}, env, cwd: '/', stdinIsTTY: false });

describe('approval console settings', () => {
  it.each<[NodeJS.Platform, NodeJS.ProcessEnv, boolean]>([
    ['darwin', {}, true],
    ['win32', {}, true],
    ['linux', { DISPLAY: ':0' }, true],
    ['linux', { WAYLAND_DISPLAY: 'wayland-0' }, true],
    ['linux', {}, false],
    ['freebsd', { DISPLAY: '' }, false],
  ])('detects a desktop session on %s with %j: %s', (platform, env, expected) => {
    expect(isDesktopSession(env, platform)).toBe(expected);
  });

  it('is off by default, on with true, and follows the desktop with auto', () => {
    const config = (console: unknown) => ConfigSchema.parse({ approval: { console } });
    expect(consoleEnabled(ConfigSchema.parse({}), io({ DISPLAY: ':0' }), 'linux')).toBe(false);
    expect(consoleEnabled(config(true), io({}), 'linux')).toBe(true);
    expect(consoleEnabled(config('auto'), io({}), 'linux')).toBe(false);
    expect(consoleEnabled(config('auto'), io({ DISPLAY: ':0' }), 'linux')).toBe(true);
    expect(() => config('sometimes')).toThrow();
  });

  it('refuses a console wait shorter than a second', () => {
    expect(ConfigSchema.safeParse({ approval: { console_wait_ms: 10 } }).success).toBe(false);
  });

  it.each<[NodeJS.Platform, string]>([
    ['linux', 'xdg-open'],
    ['darwin', 'open'],
    ['win32', 'rundll32'],
  ])('opens the browser on %s with %s (a file path, never the secret URL, on the command line)', (p, cmd) => {
    const [c, args] = openCommand(p, '/tmp/x/approval-console.html');
    expect(c).toBe(cmd);
    expect(args.at(-1)).toBe('/tmp/x/approval-console.html');
  });
});

describe('createBrowserOpener', () => {
  const capture = () => {
    const lines: string[] = [];
    const log = createLogger(
      'warn',
      new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }),
    );
    return { log, lines };
  };
  const URL_WITH_SECRET = 'http://127.0.0.1:4000/s3cr3t-s3cr3t/approvals/abc';
  let state: { dir: string; cleanup: () => void };
  beforeEach(() => (state = tempDir()));
  afterEach(() => state.cleanup());

  it('hands the opener a private redirect file, never the secret URL, on its command line', () => {
    const { log } = capture();
    const seen: { cmd: string; args: readonly string[] }[] = [];
    const spawn = ((cmd: string, args: readonly string[]) => {
      seen.push({ cmd, args });
      const child = new EventEmitter() as EventEmitter & { unref: () => void };
      child.unref = () => {};
      return child;
    }) as unknown as typeof spawnType;
    const opener = createBrowserOpener({ log, platform: 'linux', spawn, stateDir: state.dir });
    try {
      opener.open(URL_WITH_SECRET);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.cmd).toBe('xdg-open');
      const file = seen[0]!.args[0]!;
      expect(seen[0]!.args.join(' ')).not.toContain('s3cr3t');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
      expect(dirname(file)).toBe(join(state.dir, 'console'));
      expect(readFileSync(file, 'utf8')).toContain(`url=${URL_WITH_SECRET}`);
    } finally {
      opener.dispose();
    }
  });

  it('logs a failure to start the opener and never throws', async () => {
    const { log, lines } = capture();
    const spawn = (() => {
      const child = new EventEmitter() as EventEmitter & { unref: () => void };
      child.unref = () => {};
      setImmediate(() =>
        child.emit('error', Object.assign(new Error('spawn xdg-open ENOENT'), { code: 'ENOENT' })),
      );
      return child;
    }) as unknown as typeof spawnType;
    const opener = createBrowserOpener({ log, platform: 'linux', spawn, stateDir: state.dir });
    expect(() => opener.open(URL_WITH_SECRET)).not.toThrow();
    await new Promise((r) => setImmediate(r));
    opener.dispose();
    expect(lines.join('')).toContain('could not open the approval console in a browser');
    expect(lines.join('')).not.toContain('s3cr3t');
  });
});
