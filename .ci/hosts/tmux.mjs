// A terminal program in tmux on a socket of its own (`tmux -L NAME`), read through capture-pane and typed into
// with send-keys. Waits poll the screen until a pattern shows or a deadline passes; stopping kills that server only.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

const pause = (ms) => new Promise((resolvePause) => setTimeout(resolvePause, ms));

export function startTmux({ command, cwd, env, width = 140, height = 45 }) {
  const socket = `hosts-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (...args) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env });
  tmux(
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    'host',
    '-x',
    String(width),
    '-y',
    String(height),
    '-c',
    cwd,
    command,
  );
  tmux('set-option', '-t', 'host', 'remain-on-exit', 'on');
  const screen = () => tmux('capture-pane', '-p', '-t', 'host');
  return {
    socket,
    screen,
    /** Keys as tmux names them (`Enter`, `Down`, `Escape`), or literal text with `{ literal: true }`. */
    send(keys, { literal = false } = {}) {
      tmux('send-keys', '-t', 'host', ...(literal ? ['-l', keys] : [keys]));
    },
    async waitFor(pattern, { timeoutMs = 30_000, what = String(pattern) } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline)
          throw new Error(`screen never showed ${what} in ${timeoutMs} ms; it shows:\n${text}`);
        await pause(100);
      }
    },
    /**
     * Sends a key until the screen shows `pattern`: a TUI that is still redrawing can drop a key, so a key that
     * changed nothing after `settleMs` is sent again, up to `tries` times.
     */
    async press(key, pattern, { tries = 3, settleMs = 2000, what = String(pattern) } = {}) {
      for (let attempt = 1; ; attempt++) {
        this.send(key);
        try {
          return await this.waitFor(pattern, { timeoutMs: settleMs, what });
        } catch (error) {
          if (attempt >= tries) throw error;
        }
      }
    },
    stop() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
}
