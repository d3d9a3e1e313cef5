import { pino, type Logger, type Level } from 'pino';

export type { Logger };
export type LogLevel = Level | 'silent';

/**
 * The one logger. Always on fd 2: in stdio mode stdout carries only MCP messages.
 * Values that may hold secrets are redacted by key name.
 */
export function createLogger(
  level: LogLevel = 'info',
  destination: number | NodeJS.WritableStream = 2,
): Logger {
  const dest =
    typeof destination === 'number' ? pino.destination({ dest: destination, sync: true }) : destination;
  return pino(
    {
      level,
      base: { name: 'skills-mcp' },
      redact: {
        paths: ['token', '*.token', 'authorization', '*.authorization', 'env', '*.env'],
        censor: '[redacted]',
      },
    },
    dest,
  );
}

/** A logger that drops everything: for library use and tests that do not look at logs. */
export const silentLogger = (): Logger =>
  pino({ level: 'silent' }, pino.destination({ dest: 2, sync: true }));
