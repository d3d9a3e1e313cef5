/** The skill model shared by every domain module. Produced by the catalog; read-only elsewhere. */

export type Severity = 'error' | 'warning';

/** One lint/load finding, printed as `path:line: rule: message`. */
export interface Finding {
  /** Host path of the file the finding is about. */
  path: string;
  /** 1-based line, when known. */
  line?: number;
  /** Stable rule id, e.g. `name-format`, `description-too-long`, `frontmatter-yaml`. */
  rule: string;
  severity: Severity;
  message: string;
}

/** A regular file of a skill (no symlinks escaping, no VCS/caches). */
export interface SkillFile {
  /** POSIX path relative to the skill folder, e.g. `scripts/main.py`. */
  path: string;
  size: number;
  /** File mode bits (`st_mode & 0o777`). */
  mode: number;
  /** Modification time when the skill was listed (ms since the epoch), so reloads see same-size edits. */
  mtimeMs?: number;
  /** Status-change time (ms since the epoch) and inode when listed: with size and mtime, what a reload compares. */
  ctimeMs?: number;
  ino?: number;
}

export type SkillKind = 'instruction' | 'executable';

/** JSON Schema object (draft 2020-12 subset) as written in frontmatter `input_schema`. */
export type JsonSchemaObject = Record<string, unknown> & { type?: 'object' };

/** What a skill asks of the sandbox, from its frontmatter. A skill may ask for stricter, never looser. */
export interface SkillRequests {
  /** `network: true` or `network: full` in frontmatter. */
  network: boolean;
  /** Sandbox profile name the skill asks for (`sandbox:` in frontmatter), if any. */
  sandboxProfile?: string;
  /** `workspace: none|read|write` in frontmatter (default `read` when a workspace is configured). */
  workspace: 'none' | 'read' | 'write';
  /** `timeout` in frontmatter, in milliseconds (seconds are converted). */
  timeoutMs?: number;
  /** Env var names the skill wants passed through (names only; the operator's allow-list still applies). */
  env: string[];
}

export interface Skill {
  /** Frontmatter `name` (may break the spec's format; lint says so). */
  name: string;
  /** Tool/prompt name: `[a-zA-Z0-9_-]`, ≤ 40 chars; equals `name` unless it had to be shortened. */
  toolName: string;
  /** Frontmatter `description`, trimmed. */
  description: string;
  /** realpath of the skill folder. */
  dir: string;
  /** The root (as configured, resolved) under which it was found. */
  root: string;
  /** `SKILL.md` or `skill.md`. */
  skillFile: string;
  /**
   * sha256 (base64) of the skill file's bytes when it was validated. The body after the frontmatter is not kept in
   * memory: `readSkillBody` reads it again and serves it only while the file still holds these bytes.
   */
  skillFileSha256: string;
  /** 1-based line where the body starts in the skill file. */
  bodyLine: number;
  /** Every frontmatter field as parsed (unknown fields kept). */
  frontmatter: Record<string, unknown>;
  kind: SkillKind;
  /** POSIX path of the entry point relative to `dir` (executable skills). */
  entryPoint?: string;
  /** Frontmatter `input_schema`, if given and an object schema. */
  inputSchema?: JsonSchemaObject;
  /** `allowed-tools`, normalized to a list. */
  allowedTools: string[];
  requests: SkillRequests;
  /** Regular files, sorted by path. */
  files: SkillFile[];
  /** Soft violations found while loading (the skill still loads). */
  warnings: Finding[];
}

/** A folder under a root that may hold a skill, as discovery found it. */
export interface SkillCandidate {
  /** realpath of the skill folder. */
  dir: string;
  /** The configured root it was found under (resolved). */
  root: string;
  /** The folder name as found (a symlink's own name). */
  folderName: string;
  /** `SKILL.md` or `skill.md`; undefined for a plain subfolder, which holds a skill only if it has one of them. */
  skillFile?: string;
}
