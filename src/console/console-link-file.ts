import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml } from './html.js';

/**
 * The person's own route to the console: a private page (0600, in a 0700 folder of the state folder) that forwards
 * to the secret URL. The browser is opened on this file, never on the URL (a command line is readable by every
 * process), and `skills-mcp console` reads it. The secret never goes to a log, a tool result or the audit log.
 */
export const consoleFolder = (stateDir: string): string => join(stateDir, 'console');

/** The redirect page for `url`. */
export const redirectPage = (url: string): string => {
  const u = escapeHtml(url);
  return `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${u}"><title>skills-mcp approval console</title><a href="${u}">Open the skills-mcp approval console</a>\n`;
};

/** Writes `<state>/console/<name>.html` forwarding to `url`; returns its path. */
export function writeLinkFile(stateDir: string, name: string, url: string): string {
  const dir = consoleFolder(stateDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = join(dir, `${name}.html`);
  rmSync(file, { force: true });
  writeFileSync(file, redirectPage(url), { mode: 0o600, flag: 'wx' });
  return file;
}

/** The console URLs of the servers running now, from their link files (`<pid>.html`), newest pid last. */
export function readConsoleLinks(
  stateDir: string,
  isAlive: (pid: number) => boolean,
): { pid: number; url: string }[] {
  let names: string[];
  try {
    names = readdirSync(consoleFolder(stateDir));
  } catch {
    return [];
  }
  const links: { pid: number; url: string }[] = [];
  for (const name of names) {
    const m = /^(\d+)\.html$/.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    if (!isAlive(pid)) continue;
    let text: string;
    try {
      text = readFileSync(join(consoleFolder(stateDir), name), 'utf8').slice(0, 4096);
    } catch {
      continue;
    }
    const url = /href="(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)"/.exec(text)?.[1];
    if (url !== undefined) links.push({ pid, url });
  }
  return links.sort((a, b) => a.pid - b.pid);
}
