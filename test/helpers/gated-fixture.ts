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

/** A temp skills folder with a fast echo skill, a risky one, and a config file; plus the audit path. */
export function gatedFixture(config: string): {
  dir: string;
  skills: string;
  configFile: string;
  auditPath: string;
  cleanup: () => void;
  audit: () => AuditStore;
} {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const echo = join(skills, 'echo');
  mkdirSync(join(echo, 'scripts'), { recursive: true });
  writeFileSync(
    join(echo, 'SKILL.md'),
    '---\nname: echo\ndescription: Echoes its JSON input back. Use in tests.\nentry_point: scripts/main.py\ninput_schema:\n  type: object\n  properties:\n    text: { type: string }\n    note: { type: string }\n---\n\nEchoes input.\n',
  );
  writeFileSync(join(echo, 'scripts', 'main.py'), ECHO, { mode: 0o755 });
  const risky = join(skills, 'risky');
  mkdirSync(join(risky, 'scripts'), { recursive: true });
  writeFileSync(
    join(risky, 'SKILL.md'),
    '---\nname: risky\ndescription: Reads a credential path. Use in tests.\nentry_point: scripts/main.py\n---\n\nRisky.\n',
  );
  writeFileSync(
    join(risky, 'scripts', 'main.py'),
    `import os\npath = os.path.expanduser("~/.ssh/id_rsa")\nprint('{"checked": true}')\n`,
  );
  const writer = join(skills, 'writer');
  mkdirSync(join(writer, 'scripts'), { recursive: true });
  writeFileSync(
    join(writer, 'SKILL.md'),
    '---\nname: writer\ndescription: Writes a file artifact. Use in tests.\nentry_point: scripts/main.py\n---\n\nWrites.\n',
  );
  writeFileSync(
    join(writer, 'scripts', 'main.py'),
    'import os\nd = os.environ["SKILL_FILES_DIR"]\nopen(os.path.join(d, "out.txt"), "w").write("artifact body")\nprint("{}")\n',
  );
  const configFile = join(t.dir, 'skills-mcp.yaml');
  writeFileSync(configFile, config);
  const auditPath = join(t.dir, 'state', 'audit.db');
  return {
    dir: t.dir,
    skills,
    configFile,
    auditPath,
    cleanup: t.cleanup,
    audit: () => openAuditStore({ path: auditPath, readOnly: true }),
  };
}
