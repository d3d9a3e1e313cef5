import { Writable } from 'node:stream';
import type { Level } from 'pino';
import { createLogger, type Logger, type LogLevel } from '../log.js';

const LEVELS = new Set<string>(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/**
 * The audit worker's logger: the same pino logger the server uses (level, redaction), writing each JSON line to
 * `post` instead of a file descriptor, so the server's own logger writes it (see `relayLogLine`).
 */
export function createWorkerLogger(level: string, post: (line: string) => void): Logger {
  const sink = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      post(String(chunk));
      done();
    },
  });
  return createLogger(level as LogLevel, sink);
}

/** Logs one line of the worker's log with the server's logger: same level, fields and message. */
export function relayLogLine(log: Logger, line: string): void {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const { level, time: _time, pid: _pid, hostname: _hostname, name: _name, msg, ...fields } = record;
  const label = typeof level === 'number' ? log.levels.labels[level] : undefined;
  if (label !== undefined && LEVELS.has(label))
    log[label as Level](fields, typeof msg === 'string' ? msg : '');
}
