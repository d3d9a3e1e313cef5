import { randomInt } from 'node:crypto';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  isAlive,
  isBelow,
  isLinux,
  isRoot,
  parentOf,
  pidsRunning,
  processes,
  sleeperFixture,
} from './helpers.js';

const temps: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of temps.splice(0)) cleanup();
});

/** How many bytes process `pid` has read (`rchar`), or -1 once it has ended (a zombie's is not readable). */
function charsRead(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return -1;
    return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return -1;
  }
}

/**
 * A folder with the skill `sleeper` (`sleeperFixture`): open to anyone, or (`closed`) one only root may pass through,
 * whose skills a root server stages ahead of the next call.
 */
function fixture(closed: boolean) {
  const t = tempDir('skills-mcp-gate-');
  temps.push(t.cleanup);
  chmodSync(t.dir, closed ? 0o700 : 0o755);
  const { args, audit } = sleeperFixture(t.dir);
  return { dir: t.dir, audit, args: [...args, '--no-watch'] };
}

/** How many calls the audit log records as started. */
function startedCalls(path: string): number {
  if (!existsSync(path)) return 0;
  let store;
  try {
    store = openAuditStore({ path, readOnly: true });
  } catch {
    return 0; // still being created
  }
  try {
    return store.listCalls().filter((c) => c.startedEventId !== null).length;
  } finally {
    store.close();
  }
}

// bubblewrap binds the sandbox to the server's life part-way through its start and never checks the server is still
// there, so the sandbox's first command asks the server before the script starts. Here the server is frozen right
// when its sandbox starts (the launcher, frozen first, is let go only then): the sandbox comes up and waits, and the
// script must not start; then the server is killed, and the script must never start.
describe.skipIf(!isLinux)("the sandbox's start gate", () => {
  it.each([
    { chain: 'an open skill', closed: false },
    // A root server's launcher for a skill only root can reach waits inside a stager that mounted its folders.
    ...(isRoot ? [{ chain: 'a skill staged ahead of the call', closed: true }] : []),
  ])(
    '$chain: starts no script while the server cannot answer, and none once the server is gone',
    async ({ closed }) => {
      const f = fixture(closed);
      const c = await connectStdio({ era: 'legacy', args: f.args });
      const server = c.transport.pid!;
      const seconds = `600.${randomInt(100_000, 999_999)}`;
      const script = ['sleep', seconds];
      let launchers: number[] = [];
      const send = (pid: number, signal: NodeJS.Signals) => {
        try {
          process.kill(pid, signal);
        } catch {
          // gone already
        }
      };
      try {
        const first = await c.client.callTool({ name: 'sleeper', arguments: { seconds: '0' } });
        expect(first.isError, JSON.stringify(first)).not.toBe(true);
        // After each run the server spawns the launchers of the next ones: each a bash that starts the three `cat`s
        // of its stdio, then waits for its run (in a stager that mounted the skill's folders, for a closed skill).
        const ready = (): string | undefined => {
          const all = processes();
          const found = all.filter((p) => p.argv.includes('skills-mcp-launcher') && isBelow(p.pid, [server]));
          const set = found.every(
            (l) =>
              !l.argv[0]!.endsWith('bash') ||
              all.filter((p) => p.argv[0] === 'cat' && parentOf(p.pid) === l.pid).length === 3,
          );
          const staged = found.some((p) => p.argv.some((a) => a.startsWith(`${f.dir}/`)));
          return found.length > 0 && set && (staged || !closed) ? found.map((p) => p.pid).join() : undefined;
        };
        // The same launchers, all waiting, twice 300 ms apart: none is on its way.
        for (let previous: string | undefined, tries = 0; ; tries++) {
          const now = ready();
          if (now !== undefined && now === previous) {
            launchers = now.split(',').map(Number);
            break;
          }
          if (tries > 40) throw new Error('no launchers waiting for the next runs');
          previous = now;
          await sleep(300);
        }
        for (const pid of launchers) process.kill(pid, 'SIGSTOP');
        // What the launchers' `cat`s (their stdio, fed from and to the server) have read so far: loading themselves.
        const cats = new Map(
          processes()
            .filter((p) => p.argv[0] === 'cat' && isBelow(p.pid, launchers))
            .map((p) => [p.pid, charsRead(p.pid)]),
        );

        const call = c.client.callTool({ name: 'sleeper', arguments: { seconds } }).catch(() => undefined);
        // Once the run is recorded as started, the server writes the launcher's start byte, then its stdin: the `cat`
        // that feeds the launcher's stdin from the server reads it then and ends, though the launcher itself is
        // stopped. Its read is the sign that the start byte is there.
        await waitFor(() => startedCalls(f.audit) === 2, 20_000, 'the second run recorded as started');
        await waitFor(
          () =>
            [...cats].some(([pid, loaded]) => {
              const read = charsRead(pid);
              return read > loaded || read === -1;
            }),
          10_000,
          'the server to hand the launcher its run',
        );
        process.kill(server, 'SIGSTOP');
        for (const pid of launchers) process.kill(pid, 'SIGCONT');

        // The sandbox comes up without the server; its first command says so and waits for the server's answer.
        const gate = (argv: string[]) => argv[0] === '/bin/sh' && argv[3] === 'skills-mcp-gate';
        const isScript = (argv: string[]) => argv.join('\0') === `${script.join('\0')}\0`;
        await waitFor(
          () => processes().some((p) => (gate(p.argv) || isScript(p.argv)) && isBelow(p.pid, launchers)),
          10_000,
          'the sandbox to come up',
        );
        // Kept: the script must not start; there is no event for something that does not happen.
        await sleep(500);
        expect(pidsRunning(script), 'the script started without the server').toEqual([]);
        expect(processes().some((p) => gate(p.argv) && isBelow(p.pid, launchers))).toBe(true);

        process.kill(server, 'SIGKILL');
        await call;
        await waitFor(
          () => launchers.every((pid) => !isAlive(pid)),
          10_000,
          'the sandbox to end with the server',
        );
        await sleep(300);
        expect(pidsRunning(script), 'the script started after the server was gone').toEqual([]);
      } finally {
        send(server, 'SIGKILL');
        for (const pid of launchers) send(pid, 'SIGCONT');
        for (const pid of pidsRunning(script)) send(pid, 'SIGKILL');
        await c.close().catch(() => undefined);
      }
    },
  );
});
