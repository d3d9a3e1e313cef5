import { main } from './main.js';

/** Runs the CLI for this process: argv, env, stdio and the exit code. The only place that touches `process` I/O. */
export function runProcess(): void {
  // A closed pipe (`skills-mcp list | head`) is not an error worth a stack trace. A stdio server's transport
  // listens too: there stdout is the protocol, and losing it is a failure the transport reports (exit 1).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (process.stdout.listenerCount('error') > 1) return;
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const io = {
    out: (text: string) => void process.stdout.write(text),
    err: (text: string) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    stdinIsTTY: process.stdin.isTTY === true,
  };
  main(process.argv.slice(2), io, process.stdin).then(
    (code) => {
      process.exitCode = code;
      // A command is done when main returns, even if a library left a timer or handle behind.
      setImmediate(() => process.exit(code));
    },
    (err: unknown) => {
      process.stderr.write(
        `skills-mcp: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}
