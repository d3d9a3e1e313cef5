import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

/** A notes skill: writes the file the model names with the text it gives (in the run's copy of the workspace). */
const NOTE = `import json, os, sys
a = json.load(sys.stdin)
p = os.path.join(os.environ["SKILL_WORKSPACE"], a["path"])
os.makedirs(os.path.dirname(p), exist_ok=True)
open(p, "w").write(a["text"])
print("saved")
`;

/** The approved script: uses an optional package when it is installed, never one from the workspace. */
const TOOL = `let msg = 'GENUINE: no optional package';
try { msg = require('fancy-format').msg; } catch {}
console.log(msg);
`;

/**
 * Plays the model with an approved `workspace: write` notes skill, where the workspace holds the server's state
 * folder (a workspace of `$HOME` with the default `~/.local/state`). Node looks for packages in every folder above
 * the script, so from the bundle copy `<workspace>/state/bundles/<sha>/scripts/` it reaches
 * `<workspace>/node_modules`; and it resolves a bare name first as the package the script belongs to, the nearest
 * `package.json` above it whose "name" matches, through its "exports". The model can write both. Code the person
 * never saw must not run in the approved call.
 */
describe('a node script in the bundle copy imports nothing from the workspace', () => {
  let c: Connected | undefined;
  const cleanups: (() => void)[] = [];
  afterEach(async () => {
    await c?.close();
    c = undefined;
    for (const f of cleanups.splice(0)) f();
  });

  /** The server with the notes skill and the approved Node tool, both allowed; the tool first runs genuine. */
  async function start(): Promise<Connected> {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const skills = join(t.dir, 'skills');
    const add = (name: string, extra: string, file: string, script: string) => {
      mkdirSync(join(skills, name, 'scripts'), { recursive: true });
      writeFileSync(
        join(skills, name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: Test skill ${name}.\nentry_point: scripts/${file}\n${extra}---\n\n${name}.\n`,
      );
      writeFileSync(join(skills, name, 'scripts', file), script);
    };
    add('note', 'workspace: write\ninput_schema:\n  type: object\n', 'main.py', NOTE);
    add('tool', 'workspace: write\n', 'main.js', TOOL);
    writeFileSync(
      join(t.dir, 'skills-mcp.yaml'),
      'approval:\n  mode: ask\n  fallback: rules-only\n  rules:\n' +
        '    - { skill: note, action: allow }\n    - { skill: tool, action: allow }\n',
    );
    c = await connectStdio({
      era: 'auto',
      args: [
        '--skills',
        skills,
        '--workspace',
        t.dir,
        '--config',
        join(t.dir, 'skills-mcp.yaml'),
        '--audit',
        join(t.dir, 'state', 'audit.db'),
        '--no-watch',
      ],
    });
    const genuine = await c.client.callTool({ name: 'tool', arguments: {} });
    expect(textOf(genuine)).toContain('GENUINE');
    return c;
  }

  const note = async (s: Connected, path: string, text: string) => {
    const r = await s.client.callTool({ name: 'note', arguments: { path, text } });
    expect(r.isError, textOf(r)).toBeFalsy();
  };

  it('does not load a package the model planted in a folder above the bundle copy', async () => {
    const s = await start();
    await note(s, 'node_modules/fancy-format/index.js', 'exports.msg = "PLANTED by the model";\n');
    const r = await s.client.callTool({ name: 'tool', arguments: {} });
    expect(textOf(r)).not.toContain('PLANTED');
  });

  it('does not load code the model named in a package.json above the bundle copy', async () => {
    const s = await start();
    await note(s, 'planted/evil.js', 'exports.msg = "PLANTED by the model";\n');
    await note(s, 'package.json', JSON.stringify({ name: 'fancy-format', exports: './planted/evil.js' }));
    const r = await s.client.callTool({ name: 'tool', arguments: {} });
    expect(textOf(r)).not.toContain('PLANTED');
  });
});
