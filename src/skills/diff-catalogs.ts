import type { Catalog } from './catalog.js';
import type { Skill } from './types.js';

export interface CatalogDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

/** What a client sees of a skill: its skill file's bytes stand for its frontmatter and instructions. */
const fingerprint = (s: Skill): string =>
  JSON.stringify([
    s.toolName,
    s.description,
    s.skillFileSha256,
    s.kind,
    s.entryPoint,
    s.inputSchema,
    s.dir,
    s.files.map((f) => [f.path, f.size, f.mode, f.mtimeMs]),
    s.frontmatter,
  ]);

/** The skill names added, removed and changed from `prev` to `next`. */
export function diffCatalogs(prev: Catalog, next: Catalog): CatalogDiff {
  const before = new Map(prev.skills.map((s) => [s.name, fingerprint(s)]));
  const after = new Map(next.skills.map((s) => [s.name, fingerprint(s)]));
  return {
    added: [...after.keys()].filter((n) => !before.has(n)),
    removed: [...before.keys()].filter((n) => !after.has(n)),
    changed: [...after.keys()].filter((n) => before.has(n) && before.get(n) !== after.get(n)),
  };
}
