import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { tempDir } from '../helpers/temp-dir.js';
import { waitFor } from '../helpers/wait-for.js';

type Text = { type: 'text'; text: string };
const textOf = (r: { content?: unknown }) => ((r.content ?? []) as Text[]).map((c) => c.text).join('\n');

/** The same bytes in every folder: only the folder tells the two skills apart. */
function pdfSkill(folder: string): void {
  mkdirSync(join(folder, 'scripts'), { recursive: true });
  writeFileSync(
    join(folder, 'SKILL.md'),
    '---\nname: pdf\ndescription: Fills PDF forms. Use in tests.\n---\n\nRun scripts/fill.py or scripts/other.py.\n',
  );
  writeFileSync(join(folder, 'scripts', 'fill.py'), 'print(\'{"ran": "fill"}\')\n');
  writeFileSync(join(folder, 'scripts', 'other.py'), 'print(\'{"ran": "other"}\')\n');
}

describe('a folder that takes a skill name while the server runs', () => {
  let t: ReturnType<typeof tempDir> | undefined;
  let c: Connected | undefined;
  afterEach(async () => {
    await c?.close();
    t?.cleanup();
    c = undefined;
    t = undefined;
  });

  it('inherits neither the allow rule nor the session grant of the folder that held the name: it is asked', async () => {
    t = tempDir();
    const first = join(t.dir, 'skills');
    const second = join(t.dir, 'more-skills');
    mkdirSync(second, { recursive: true });
    pdfSkill(join(first, 'pdf'));
    const config = join(t.dir, 'skills-mcp.yaml');
    writeFileSync(
      config,
      'approval:\n  mode: ask\n  rules:\n    - { skill: pdf, script: scripts/fill.py, action: allow }\n',
    );
    const asked: string[] = [];
    const answers = ['approved_for_session', 'denied', 'denied'];
    c = await connectStdio({
      era: 'auto',
      args: ['--skills', first, '--skills', second, '--config', config, '--audit', join(t.dir, 'audit.db')],
      capabilities: { elicitation: { form: {} } },
    });
    c.client.setRequestHandler('elicitation/create', (req: { params: { message: string } }) => {
      asked.push(req.params.message);
      const decision = answers.shift();
      if (decision === undefined) throw new Error('unexpected approval request');
      return Promise.resolve({ action: 'accept', content: { decision } });
    });
    const run = (script: string) =>
      c!.client.callTool({ name: 'run_skill_script', arguments: { skill: 'pdf', script } });

    // Folder A: the rule allows fill.py; other.py is asked once and granted for the session.
    const allowed = await run('scripts/fill.py');
    expect(allowed.isError, textOf(allowed)).toBeFalsy();
    expect(asked).toHaveLength(0);
    expect((await run('scripts/other.py')).isError).toBeFalsy();
    expect((await run('scripts/other.py')).isError).toBeFalsy();
    expect(asked).toHaveLength(1);

    // A is removed; B, byte for byte the same skill, takes the name from another root while the server runs.
    rmSync(join(first, 'pdf'), { recursive: true });
    pdfSkill(join(second, 'pdf'));
    mkdirSync(join(second, 'marker'));
    writeFileSync(
      join(second, 'marker', 'SKILL.md'),
      '---\nname: marker\ndescription: Shows that the reload saw the new folders. Use in tests.\n---\n\nNothing.\n',
    );
    const served = async () => (await c!.client.listPrompts()).prompts.map((p) => p.name);
    await waitFor(
      async () => (await served()).includes('marker'),
      20_000,
      'the reload to show the new folders',
    );

    const ruled = await run('scripts/fill.py');
    expect(asked).toHaveLength(2);
    expect(asked[1]).toContain('not for this folder');
    expect(ruled.isError).toBe(true);
    const granted = await run('scripts/other.py');
    expect(asked).toHaveLength(3);
    expect(granted.isError).toBe(true);
    expect(textOf(granted)).not.toContain('"ran"');
  });
});
