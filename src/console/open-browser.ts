import { spawn as nodeSpawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { escapeHtml } from './html.js';

export interface BrowserOpener {
  /** Opens `url` in the person's default browser. Failures are logged, never thrown. */
  open(url: string): void;
  /** Removes the redirect file. */
  dispose(): void;
}

/** The platform's "open with the default app" command. */
export function openCommand(platform: NodeJS.Platform, target: string): [string, string[]] {
  if (platform === 'darwin') return ['open', [target]];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', target]];
  return ['xdg-open', [target]];
}

/**
 * Opens the console with `xdg-open` / `open` / `start`. The secret URL never goes on a command line (other
 * users can read those): the opener gets a private file (0600 in a 0700 folder) that redirects to it.
 */
export function createBrowserOpener(opts: {
  log: Logger;
  platform: NodeJS.Platform;
  /** The process spawner (tests pass their own). */
  spawn?: typeof nodeSpawn;
}): BrowserOpener {
  const { log } = opts;
  const spawn = opts.spawn ?? nodeSpawn;
  let dir: string | undefined;
  return {
    open(url) {
      try {
        dir ??= mkdtempSync(join(tmpdir(), 'skills-mcp-console-'));
        const file = join(dir, 'approval-console.html');
        const u = escapeHtml(url);
        writeFileSync(
          file,
          `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${u}"><title>skills-mcp approval console</title><a href="${u}">Open the skills-mcp approval console</a>\n`,
          { mode: 0o600 },
        );
        const [cmd, args] = openCommand(opts.platform, file);
        const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
        child.on('error', (err) =>
          log.warn({ err, cmd }, 'could not open the approval console in a browser'),
        );
        child.on('exit', (code) => {
          if (code !== 0 && code !== null)
            log.warn({ cmd, code }, 'could not open the approval console in a browser');
        });
        child.unref();
      } catch (err) {
        log.warn({ err }, 'could not open the approval console in a browser');
      }
    },
    dispose() {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}
