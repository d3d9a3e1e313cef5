import { spawn as nodeSpawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Logger } from '../log.js';
import { writeLinkFile } from './console-link-file.js';

export interface BrowserOpener {
  /** Opens `url` in the person's default browser. Failures are logged, never thrown. */
  open(url: string): void;
  /** Removes the forwarding file. */
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
 * processes can read those): the opener gets a private file in the state folder (0600 in a 0700 folder) that
 * forwards to it.
 */
export function createBrowserOpener(opts: {
  log: Logger;
  platform: NodeJS.Platform;
  /** The state folder: the forwarding file goes in its `console/` folder. */
  stateDir: string;
  /** The file's name there (default `<pid>-open`). */
  name?: string;
  /** The process spawner (tests pass their own). */
  spawn?: typeof nodeSpawn;
}): BrowserOpener {
  const { log } = opts;
  const spawn = opts.spawn ?? nodeSpawn;
  let file: string | undefined;
  return {
    open(url) {
      try {
        file = writeLinkFile(opts.stateDir, opts.name ?? `${process.pid}-open`, url);
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
      if (file !== undefined) rmSync(file, { force: true });
      file = undefined;
    },
  };
}
