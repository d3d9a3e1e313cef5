import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

/** A skill whose `tools/` is a link to its folder `scripts/`, which holds `danger.py`. */
function addLinkedFolderSkill(fx: GatedFixture): void {
  const dir = join(fx.skills, 'links');
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: links\ndescription: Has a linked folder. Use in tests.\n---\n\nRun tools/danger.py.\n',
  );
  writeFileSync(join(dir, 'scripts', 'danger.py'), 'print("DANGER-RAN")\n');
  symlinkSync('scripts', join(dir, 'tools'));
}

/**
 * Plays the model: the operator denied what the skill calls `tools/danger.py` (`tools/` is a link to `scripts/`).
 * Rules matched only the real path and links to the file itself, so naming the script as denied, or by its real
 * path, ran it. A rule on any name of the file applies.
 */
describe.each<Era>(['legacy', 'auto'])('a deny rule through a linked folder, %s era', (era) => {
  const start = gatedServers();

  it.each(['tools/danger.py', 'scripts/danger.py'])('does not run %s', async (script) => {
    const s = await start(
      'approval:\n  mode: allow\n  rules:\n    - { skill: links, script: "tools/**", action: deny }\n',
      { era, setup: addLinkedFolderSkill },
    );
    const r = await s.c.client.callTool({ name: 'run_skill_script', arguments: { skill: 'links', script } });
    await s.c.close();
    expect(textOf(r)).not.toContain('DANGER-RAN');
    expect(r.isError).toBe(true);
    const store = s.fx.audit();
    try {
      const calls = store.listCalls().filter((c) => c.skill === 'links');
      expect(calls.map((c) => [c.script, c.policyDecision, c.startedEventId])).toEqual([
        ['scripts/danger.py', 'deny', null],
      ]);
    } finally {
      store.close();
    }
  });

  it('still runs it where no rule names it', async () => {
    const s = await start('approval:\n  mode: allow\n', { era, setup: addLinkedFolderSkill });
    const r = await s.c.client.callTool({
      name: 'run_skill_script',
      arguments: { skill: 'links', script: 'tools/danger.py' },
    });
    expect(textOf(r)).toContain('DANGER-RAN');
  });
});
