import { escapeForDisplay } from '../escape-for-display.js';
import { relative } from 'node:path';
import type { Finding } from '../skills/types.js';

/** A path as the user typed it when inside cwd, else absolute. */
export const displayPath = (path: string, cwd: string): string => {
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') ? path : rel;
};

/** `path:line: rule: message`, warnings marked; escaped for the terminal (names and paths come from skill authors). */
export const formatFinding = (f: Finding, cwd: string): string =>
  escapeForDisplay(
    `${displayPath(f.path, cwd)}:${f.line ?? 1}: ${f.rule}: ${f.message}${f.severity === 'warning' ? ' (warning)' : ''}`,
  );
