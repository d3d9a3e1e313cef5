import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 40;

/**
 * A host-safe tool/prompt name for a skill: only `[a-zA-Z0-9_-]`, at most 40 chars. Names that fit are kept as they
 * are; others are sanitized, and shortened to a prefix plus 8 hex chars of the name's sha256 (deterministic).
 */
export function toolNameFor(skillName: string): string {
  const clean = skillName.replace(/[^a-zA-Z0-9_-]/g, '-');
  if (clean === skillName && clean.length <= MAX_TOOL_NAME && clean.length > 0) return clean;
  const hash = createHash('sha256').update(skillName).digest('hex').slice(0, 8);
  const prefix = clean.slice(0, MAX_TOOL_NAME - 9).replace(/-+$/, '');
  return `${prefix}-${hash}`;
}
