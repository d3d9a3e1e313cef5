import { extname } from 'node:path';

/** The largest skill file `resources/read` serves. */
export const MAX_RESOURCE_BYTES = 5 * 1024 * 1024;

export const SKILL_URI_TEMPLATE = 'skill://{skill}/{+path}';

/** `skill://<name>/<path>`, each path segment percent-encoded. */
export const skillUri = (skill: string, path: string): string =>
  `skill://${encodeURIComponent(skill)}/${path.split('/').map(encodeURIComponent).join('/')}`;

const MIME: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.py': 'text/x-python',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.cjs': 'text/javascript',
  '.ts': 'text/typescript',
  '.sh': 'text/x-shellscript',
  '.bash': 'text/x-shellscript',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.html': 'text/html',
  '.css': 'text/css',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
};

export const mimeTypeOf = (path: string): string =>
  MIME[extname(path).toLowerCase()] ?? 'application/octet-stream';
