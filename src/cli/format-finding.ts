import { relative } from 'node:path';
import type { Finding } from '../skills/types.js';

/** A path as the user typed it when inside cwd, else absolute. */
export const displayPath = (path: string, cwd: string): string => {
  const rel = relative(cwd, path);
  return rel === '' || rel.startsWith('..') ? path : rel;
};

/** `path:line: rule: message`, warnings marked. */
export const formatFinding = (f: Finding, cwd: string): string =>
  `${displayPath(f.path, cwd)}:${f.line ?? 1}: ${f.rule}: ${f.message}${f.severity === 'warning' ? ' (warning)' : ''}`;
