import { extname } from 'node:path';
import type { Skill, SkillFile } from '../skills/types.js';

const LANGUAGE: Record<string, string> = {
  '.md': 'Markdown',
  '.markdown': 'Markdown',
  '.txt': 'text',
  '.py': 'Python',
  '.js': 'JavaScript',
  '.mjs': 'JavaScript',
  '.cjs': 'JavaScript',
  '.ts': 'TypeScript',
  '.sh': 'shell',
  '.bash': 'shell',
  '.json': 'JSON',
  '.yaml': 'YAML',
  '.yml': 'YAML',
  '.csv': 'CSV',
  '.tsv': 'TSV',
  '.html': 'HTML',
  '.css': 'CSS',
  '.xml': 'XML',
  '.svg': 'SVG',
  '.png': 'PNG',
  '.jpg': 'JPEG',
  '.jpeg': 'JPEG',
  '.gif': 'GIF',
  '.webp': 'WebP',
  '.pdf': 'PDF',
};

/** What the folder says the file is, by the Agent Skills layout. */
const ROLE: Record<string, string> = { scripts: 'script', references: 'reference', assets: 'asset' };

export const formatSize = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/**
 * A skill file's title and description as a client lists it: hosts cut URIs in their pickers, so the title names
 * the skill and the file, and the description says what kind of file it is, its size, and whose it is.
 */
export function skillFileMetadata(skill: Skill, file: SkillFile): { title: string; description: string } {
  const language = LANGUAGE[extname(file.path).toLowerCase()];
  const role = ROLE[file.path.split('/')[0] ?? ''] ?? 'file';
  const kind = language === undefined ? role : `${language} ${role}`;
  const entry =
    file.path === skill.entryPoint ? ` (its entry point, run through the ${skill.toolName} tool)` : '';
  return {
    title: `${skill.name}: ${file.path}`,
    description: `${kind[0]!.toUpperCase()}${kind.slice(1)}, ${formatSize(file.size)}, part of the ${skill.name} skill${entry}.`,
  };
}
