import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

/** A skill with `scripts/danger.py`, a harmless `scripts/safe.py`, and `scripts/alias.py -> danger.py`. */
function addAliasedSkill(fx: GatedFixture): void {
  const dir = join(fx.skills, 'links');
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: links\ndescription: Has links. Use in tests.\n---\n\nlinks.\n',
  );
  writeFileSync(join(dir, 'scripts', 'danger.py'), 'print("DANGER-RAN")\n');
  writeFileSync(join(dir, 'scripts', 'safe.py'), 'print("SAFE-RAN")\n');
  writeFileSync(join(dir, 'scripts', '__init__.py'), '');
  symlinkSync('danger.py', join(dir, 'scripts', 'alias.py'));
}

const DENY_DANGER =
  'approval:\n  mode: allow\n  rules:\n    - { skill: links, script: scripts/danger.py, action: deny }\n';

/**
 * Plays the model: the operator denied `scripts/danger.py`; the model names a link to it instead, as a script or as
 * a module. Rules, the form and the audit must see the file the link stands for.
 */
describe.each<Era>(['legacy', 'auto'])('a link to a denied script, %s era', (era) => {
  const start = gatedServers();
  const forms: string[] = [];

  const run = async (config: string, args: Record<string, unknown>) => {
    forms.length = 0;
    const s = await start(config, { era, setup: addAliasedSkill });
    s.c.client.setRequestHandler('elicitation/create', (req: { params: { message: string } }) => {
      forms.push(req.params.message);
      return Promise.resolve({ action: 'decline' });
    });
    const r = await s.c.client.callTool({ name: 'run_skill_script', arguments: { skill: 'links', ...args } });
    await s.c.close();
    const store = s.fx.audit();
    try {
      return { r, calls: store.listCalls().filter((c) => c.skill === 'links') };
    } finally {
      store.close();
    }
  };

  it.each([
    ['script', { script: 'scripts/alias.py' }],
    ['module', { module: 'scripts.alias' }],
  ])('does not run danger.py through the link (%s)', async (_how, args) => {
    const { r, calls } = await run(DENY_DANGER, args);
    expect(textOf(r)).not.toContain('DANGER-RAN');
    expect(r.isError).toBe(true);
    expect(calls.map((c) => [c.script, c.policyDecision, c.startedEventId])).toEqual([
      ['scripts/danger.py', 'deny', null],
    ]);
  });

  it('applies a deny rule written for the link to the file it points to', async () => {
    const { r, calls } = await run(
      'approval:\n  mode: allow\n  rules:\n    - { skill: links, script: scripts/alias.py, action: deny }\n',
      { script: 'scripts/danger.py' },
    );
    expect(textOf(r)).not.toContain('DANGER-RAN');
    expect(calls.map((c) => [c.script, c.policyDecision])).toEqual([['scripts/danger.py', 'deny']]);
  });

  it('still runs an allowed file that is not linked', async () => {
    const { r } = await run(DENY_DANGER, { script: 'scripts/safe.py' });
    expect(textOf(r)).toContain('SAFE-RAN');
  });

  it('shows and records the file the link points to', async () => {
    const { calls } = await run('approval:\n  mode: ask\n', { script: 'scripts/alias.py' });
    expect(forms).toHaveLength(1);
    expect(forms[0]).toMatch(/^Script: +scripts\/danger\.py {2}\(bundle /m);
    expect(calls.map((c) => [c.script, c.approvalDecision])).toEqual([['scripts/danger.py', 'denied']]);
  });
});
