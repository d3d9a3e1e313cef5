import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const WRITER = fileURLToPath(new URL('../audit-writer.mjs', import.meta.url));

/** One JSON line of the writer's stdout. */
export type WriterLine =
  | { kind: 'recovery'; report: unknown; pid: number }
  | {
      kind: 'event';
      event_id: number;
      hash: string;
      type: string;
      call_id: string | null;
      session_id: string;
    }
  | { kind: 'victim'; call_id: string }
  | { kind: 'done' };

export interface WriterRun {
  child: ChildProcess;
  lines: WriterLine[];
  stderr: () => string;
  /** Resolves when the process has exited and its output is fully read. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns the writer; `onLine` sees each complete stdout line as it arrives. */
export function spawnWriter(
  args: string[],
  onLine: (line: WriterLine, run: WriterRun) => void = () => {},
): WriterRun {
  const child = spawn(process.execPath, [WRITER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let buffered = '';
  let err = '';
  const run: WriterRun = {
    child,
    lines: [],
    stderr: () => err,
    closed: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal }))),
  };
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffered += d;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, nl)) as WriterLine;
      buffered = buffered.slice(nl + 1);
      run.lines.push(line);
      onLine(line, run);
    }
  });
  return run;
}
