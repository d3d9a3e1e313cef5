import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashBundle } from '../../src/skills/bundle-hash.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A notes skill: writes the file the model names with the text it gives (in the run's copy of the workspace). */
const NOTE = `import json, os, sys
a = json.load(sys.stdin)
p = os.path.join(os.environ["SKILL_WORKSPACE"], a["path"])
os.makedirs(os.path.dirname(p), exist_ok=True)
open(p, "w").write(a["text"])
print("saved")
`;

type Text = { type: string; text?: string };
const textOf = (r: { content: unknown }) => (r.content as Text[]).map((x) => x.text ?? '').join('\n');

/**
 * Plays the model with an approved `workspace: write` skill, where the workspace holds the server's state folder
 * (and so its data folder with the bundle copies). The model computes the bundle hash of another skill from the
 * files it can read (`skill://` resources) and plants `<data dir>/bundles/<hash>/` with its own script, before
 * that skill's first call. The call the rules (or a person, shown the genuine files and hash) allow must run the
 * approved bytes, never the planted ones.
 */
describe('a bundle copy planted through the workspace never runs', () => {
  let c: Connected | undefined;
  const cleanups: (() => void)[] = [];
  afterEach(async () => {
    await c?.close();
    c = undefined;
    for (const f of cleanups.splice(0)) f();
  });

  it.each([
    ['before the first call (a copy named after the hash is planted)', false],
    ['after the copy was made (the sealed copy is rewritten)', true],
  ])('runs the approved script, %s', async (_when, warm) => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const skills = join(t.dir, 'skills');
    const add = (name: string, extra: string, script: string) => {
      mkdirSync(join(skills, name, 'scripts'), { recursive: true });
      writeFileSync(
        join(skills, name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: Test skill ${name}.\nentry_point: scripts/main.py\n${extra}---\n\n${name}.\n`,
      );
      writeFileSync(join(skills, name, 'scripts', 'main.py'), script);
    };
    add('note', 'workspace: write\ninput_schema:\n  type: object\n', NOTE);
    add('report', 'workspace: none\n', 'print("GENUINE report")\n');
    writeFileSync(
      join(t.dir, 'skills-mcp.yaml'),
      'approval:\n  mode: ask\n  fallback: rules-only\n  rules:\n' +
        '    - { skill: note, action: allow }\n    - { skill: report, action: allow }\n',
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
    // What the model computes from the skill's files: the hash the approval binds and the copy is named after.
    const sha = hashBundle(join(skills, 'report')).sha256;
    if (warm) expect(textOf(await c.client.callTool({ name: 'report', arguments: {} }))).toContain('GENUINE');
    const planted = await c.client.callTool({
      name: 'note',
      arguments: { path: `state/bundles/${sha}/scripts/main.py`, text: 'print("PLANTED by the model")\n' },
    });
    expect(planted.isError, textOf(planted)).toBeFalsy();
    const r = await c.client.callTool({ name: 'report', arguments: {} });
    expect(textOf(r)).not.toContain('PLANTED');
    expect(textOf(r)).toContain('GENUINE report');
  });
});
