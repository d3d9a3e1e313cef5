import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import type { AuditStore } from '../../src/audit/audit-store.js';
import { tempDir } from './temp-dir.js';

const ECHO = `#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
print(json.dumps({"echo": data, "ok": True}))
`;

export interface TestSkill {
  description: string;
  /** The entry point, written to `scripts/main.py`. */
  script: string;
  /** More frontmatter (YAML lines ending in a newline), after `entry_point`. */
  frontmatter?: string;
  /** Mode 755 for the entry point (it is then run by its shebang). */
  executable?: boolean;
}

/** Writes the skill `name` under `root`: a SKILL.md whose entry point is `scripts/main.py`, and that script. */
export function writeTestSkill(root: string, name: string, skill: TestSkill): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: ${skill.description}\nentry_point: scripts/main.py\n${skill.frontmatter ?? ''}---\n\n${name}.\n`,
  );
  writeFileSync(
    join(dir, 'scripts', 'main.py'),
    skill.script,
    skill.executable === true ? { mode: 0o755 } : {},
  );
  return dir;
}

export interface GatedFixture {
  dir: string;
  skills: string;
  configFile: string;
  auditPath: string;
  /** The server's arguments for this fixture: skills, config, audit log, no watching. */
  args: string[];
  cleanup: () => void;
  audit: () => AuditStore;
}

/** A temp skills folder with a fast echo skill, a risky one, a writer, and a config file; plus the audit path. */
export function gatedFixture(config: string): GatedFixture {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  writeTestSkill(skills, 'echo', {
    description: 'Echoes its JSON input back. Use in tests.',
    frontmatter:
      'input_schema:\n  type: object\n  properties:\n    text: { type: string }\n    note: { type: string }\n',
    script: ECHO,
    executable: true,
  });
  writeTestSkill(skills, 'risky', {
    description: 'Reads a credential path. Use in tests.',
    script: `import os\npath = os.path.expanduser("~/.ssh/id_rsa")\nprint('{"checked": true}')\n`,
  });
  writeTestSkill(skills, 'writer', {
    description: 'Writes a file artifact. Use in tests.',
    script:
      'import os\nd = os.environ["SKILL_FILES_DIR"]\nopen(os.path.join(d, "out.txt"), "w").write("artifact body")\nprint("{}")\n',
  });
  const configFile = join(t.dir, 'skills-mcp.yaml');
  writeFileSync(configFile, config);
  const auditPath = join(t.dir, 'state', 'audit.db');
  return {
    dir: t.dir,
    skills,
    configFile,
    auditPath,
    args: ['--skills', skills, '--config', configFile, '--audit', auditPath, '--no-watch'],
    cleanup: t.cleanup,
    audit: () => openAuditStore({ path: auditPath, readOnly: true }),
  };
}
