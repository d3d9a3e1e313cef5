/**
 * Which folder each skill name stands for while the server runs: the folder that held the name when the server
 * started, or, for a name first seen later, the first folder to claim it. An allow rule written for a name keeps
 * applying to that folder only, so a folder that later takes the name (after the first one was removed, or in
 * another root) never inherits it.
 */
export interface SkillPins {
  /** Records the folder of every name not seen before. */
  observe(skills: Iterable<{ name: string; dir: string }>): void;
  /** The folder `name` stands for, once observed. */
  folderOf(name: string): string | undefined;
}

export function createSkillPins(): SkillPins {
  const pins = new Map<string, string>();
  return {
    observe(skills) {
      for (const s of skills) if (!pins.has(s.name)) pins.set(s.name, s.dir);
    },
    folderOf: (name) => pins.get(name),
  };
}
