/** What a CLI command may touch. Commands never reach for `process` themselves. */
export interface CliIo {
  /** Writes to stdout. Never used by `serve` in stdio mode (stdout is the protocol there). */
  out: (text: string) => void;
  /** Writes to stderr. */
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** True when stdin is a terminal (interactive approval in `run`). */
  stdinIsTTY: boolean;
}

/** A command's result: the process exit code (0 ok, 1 failure, 2 usage/config error). */
export type ExitCode = 0 | 1 | 2;
