#!/usr/bin/env node
import { main } from './cli/main.js';

// A closed pipe (`skills-mcp list | head`) is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
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
    // The server may leave timers/watchers behind on purpose-free exits; a command is done when main returns.
    setImmediate(() => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(
      `skills-mcp: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
