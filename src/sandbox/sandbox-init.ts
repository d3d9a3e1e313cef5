import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** The sandbox's pid 1 as the host sees it: its pid, and its start time so a reused pid is never mistaken for it. */
export interface SandboxInit {
  pid: number;
  startTime: string;
}

/** State and start time from `/proc/<pid>/stat` (after the command name, which may hold spaces and parentheses). */
function readStat(pid: number): { state: string; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = fields[19];
  return state === undefined || startTime === undefined ? undefined : { state, startTime };
}

/**
 * Reads the pid bwrap writes on `--info-fd` (`"child-pid": N`, the first one; the script never sees that fd) and
 * identifies that process right away, while bwrap, its parent, still holds it.
 */
export function identifyInit(info: string): SandboxInit | undefined {
  const m = /"child-pid":\s*(\d+)/.exec(info);
  if (m === null) return undefined;
  const pid = Number(m[1]);
  const st = readStat(pid);
  return st === undefined ? undefined : { pid, startTime: st.startTime };
}

const POLL_MS = 5;
const GIVE_UP_MS = 10_000;

/**
 * Ends the sandbox and waits until every process of it is gone. The kernel kills every process of a pid namespace
 * when its pid 1 exits, and pid 1 becomes a zombie (or disappears) only once they all have: so this kills pid 1
 * (a signal from the host cannot be ignored there) and waits for that. When a run is stopped from outside (wall-clock
 * limit, cancellation), the processes inside die a moment after bwrap, and for longer still when pid 1 has much memory
 * to free: until then they can still change the folders they had writable. False when pid 1 outlived the wait.
 */
export async function endSandbox(init: SandboxInit): Promise<boolean> {
  const deadline = performance.now() + GIVE_UP_MS;
  for (;;) {
    const st = readStat(init.pid);
    if (st === undefined || st.startTime !== init.startTime || st.state === 'Z' || st.state === 'X')
      return true;
    if (performance.now() > deadline) return false;
    try {
      process.kill(init.pid, 'SIGKILL');
    } catch {
      // gone since the read
    }
    await sleep(POLL_MS);
  }
}
