import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

/**
 * A skill holding both `scripts/foo.py` and a package `scripts/foo/` (`__init__.py` + `__main__.py`). Python runs
 * the package for `-m scripts.foo`: the package wins over the module file of the same name.
 */
function addShadowedSkill(fx: GatedFixture): void {
  const dir = join(fx.skills, 'mod');
  mkdirSync(join(dir, 'scripts', 'foo'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: mod\ndescription: Runs its modules. Use in tests.\n---\n\nmod.\n',
  );
  writeFileSync(join(dir, 'scripts', '__init__.py'), '');
  writeFileSync(join(dir, 'scripts', 'foo.py'), 'print("MODULE-FILE-RAN")\n');
  writeFileSync(join(dir, 'scripts', 'foo', '__init__.py'), '');
  writeFileSync(join(dir, 'scripts', 'foo', '__main__.py'), 'print("PACKAGE-RAN")\n');
}

/**
 * Plays the model: it asks for `{"module": "scripts.foo"}` where the approved, allowed or shown file is
 * `scripts/foo.py` but Python would run the package. What the person approves, the policy matches and the audit
 * records must be the file that runs.
 */
describe.each<Era>(['legacy', 'auto'])('python -m of a package shadowing a module file, %s era', (era) => {
  const start = gatedServers();
  const forms: string[] = [];

  const run = async (config: string) => {
    forms.length = 0;
    const s = await start(config, { era, setup: addShadowedSkill });
    s.c.client.setRequestHandler('elicitation/create', (req: { params: { message: string } }) => {
      forms.push(req.params.message);
      return Promise.resolve({ action: 'decline' });
    });
    const r = await s.c.client.callTool({
      name: 'run_skill_script',
      arguments: { skill: 'mod', module: 'scripts.foo' },
    });
    await s.c.close();
    const store = s.fx.audit();
    try {
      return { r, calls: store.listCalls().filter((c) => c.skill === 'mod') };
    } finally {
      store.close();
    }
  };

  it('does not run the package under an allow rule for scripts/foo.py', async () => {
    const { r, calls } = await run(
      'approval:\n  mode: deny\n  rules:\n    - { skill: mod, script: scripts/foo.py, action: allow }\n',
    );
    expect(textOf(r)).not.toContain('PACKAGE-RAN');
    expect(r.isError).toBe(true);
    expect(calls.map((c) => [c.script, c.policyDecision, c.startedEventId])).toEqual([
      ['scripts/foo/__main__.py', 'deny', null],
    ]);
  });

  it('does not run the package past a deny rule on scripts/foo/**', async () => {
    const { r, calls } = await run(
      'approval:\n  mode: allow\n  rules:\n    - { skill: mod, script: "scripts/foo/**", action: deny }\n',
    );
    expect(textOf(r)).not.toContain('PACKAGE-RAN');
    expect(r.isError).toBe(true);
    expect(calls.map((c) => [c.script, c.policyDecision, c.startedEventId])).toEqual([
      ['scripts/foo/__main__.py', 'deny', null],
    ]);
  });

  it('shows and records the package file that Python runs', async () => {
    const { r, calls } = await run('approval:\n  mode: ask\n');
    expect(r.isError).toBe(true);
    expect(forms).toHaveLength(1);
    expect(forms[0]).toMatch(/^Script: +scripts\/foo\/__main__\.py {2}\(bundle /m);
    expect(forms[0]).toMatch(/^Command: +python3 -m scripts\.foo/m);
    expect(calls.map((c) => [c.script, c.policyDecision, c.approvalDecision])).toEqual([
      ['scripts/foo/__main__.py', 'ask', 'denied'],
    ]);
  });
});
