import { readFileSync, statSync } from 'node:fs';
import { SkillsError } from '../errors.js';
import { resolveSkillPath } from '../skills/resolve-skill-path.js';
import type { Catalog } from '../skills/catalog.js';
import type { Skill } from '../skills/types.js';
import { mimeTypeOf } from './skill-uri.js';

export interface SkillContent {
  skill: Skill;
  path: string;
  mimeType: string;
  /** Set for UTF-8 text files. */
  text?: string;
  /** Set (base64) for binary files. */
  blob?: string;
  size: number;
  /** The bytes read: `text` and `blob` carry exactly these (a BOM is kept). */
  bytes: Buffer;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function findSkill(catalog: Catalog, name: string): Skill {
  const skill = catalog.get(name) ?? catalog.byToolName(name);
  if (skill !== undefined) return skill;
  const names = catalog.skills.map((s) => s.name);
  const close = names.filter((n) => n.includes(name) || name.includes(n)).slice(0, 5);
  throw new SkillsError('SKILL_NOT_FOUND', `no skill named "${name.slice(0, 100)}"`, {
    hint:
      close.length > 0
        ? `Did you mean ${close.map((n) => `"${n}"`).join(', ')}?`
        : `Known skills: ${names.slice(0, 20).join(', ') || '(none)'}.`,
  });
}

/** Reads a file of a skill, contained to the skill folder, as text or base64. */
export function readSkillContent(
  catalog: Catalog,
  skillName: string,
  path: string,
  maxBytes: number,
): SkillContent {
  const skill = findSkill(catalog, skillName);
  const real = resolveSkillPath(skill.dir, path, skill.name);
  const size = statSync(real).size;
  if (size > maxBytes) {
    throw new SkillsError('FILE_TOO_LARGE', `"${path}" is ${size} bytes; the limit here is ${maxBytes}`, {
      hint: 'Large files cannot be returned inline; ask the user to open the file directly.',
    });
  }
  const bytes = readFileSync(real);
  const rel = path.replace(/\\/g, '/').replace(/^\.\//, '');
  const base = { skill, path: rel, mimeType: mimeTypeOf(rel), size, bytes };
  try {
    if (bytes.includes(0)) throw new Error('binary');
    return { ...base, text: decoder.decode(bytes) };
  } catch {
    return { ...base, blob: bytes.toString('base64') };
  }
}
