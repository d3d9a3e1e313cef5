import type { Skill as SkillEntry } from '@modelcontextprotocol/server/ext/skills';
import { isSkillsError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { DigestCache } from '../../skills/digest-cache.js';
import { resolveSkillPath } from '../../skills/resolve-skill-path.js';
import type { Skill } from '../../skills/types.js';
import { skillUri } from '../skill-uri.js';

export type { SkillEntry };

/** One published file: the skill, its relative path and what the entry said about it. */
export interface PublishedFile {
  skill: string;
  path: string;
  digest: string;
  size: number;
}

/**
 * The extension entry of a served skill, with digests as the files are now (hashed on first need, then cached by
 * path, size and mtime). The frontmatter is the catalog's, so the entry is only built while SKILL.md is still the
 * file the catalog parsed: once it changed on disk (a reload is due) the skill is left out of this answer, since
 * no entry could match both. A file that vanished or left the skill folder since the catalog was loaded is no
 * longer one of its files. Undefined when SKILL.md is stale or unreadable.
 */
export function skillEntry(
  skill: Skill,
  digests: DigestCache,
  log: Logger,
): { entry: SkillEntry; files: PublishedFile[] } | undefined {
  const files: PublishedFile[] = [];
  for (const f of skill.files) {
    let state;
    try {
      state = digests.digestOf(resolveSkillPath(skill.dir, f.path, skill.name));
    } catch (err) {
      if (f.path === skill.skillFile) return undefined;
      log.debug(
        { err: isSkillsError(err) ? err.message : err, skill: skill.name, path: f.path },
        'skill file left out of its entry',
      );
      continue;
    }
    if (
      f.path === skill.skillFile &&
      f.mtimeMs !== undefined &&
      (state.size !== f.size || state.mtimeMs !== f.mtimeMs)
    ) {
      log.debug(
        { skill: skill.name },
        'SKILL.md changed since the catalog was loaded; entry held back until the reload',
      );
      return undefined;
    }
    files.push({ skill: skill.name, path: f.path, digest: state.digest, size: state.size });
  }
  const entry: SkillEntry = {
    uri: skillUri(skill.name, skill.skillFile),
    frontmatter: skill.frontmatter as SkillEntry['frontmatter'],
    resources: files.map((f) => ({ uri: skillUri(skill.name, f.path), digest: f.digest, size: f.size })),
  };
  return { entry, files };
}
