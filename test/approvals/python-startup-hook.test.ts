import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import type { Era } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

/**
 * Plays the model, which wrote a `sitecustomize.py` into the skill root. The root is on PYTHONPATH, so Python ran it
 * before `scripts/main.py`, under an allow rule for `scripts/main.py` only and on a form that names that script
 * only (Risk LOW). A file the person is never shown must not run.
 */
describe.each<Era>(['legacy', 'auto'])('a sitecustomize in the skill root, %s era', (era) => {
  const start = gatedServers();

  it.each(['sitecustomize.py', 'usercustomize.py'])('does not run %s', async (hook) => {
    const s = await start(
      'approval:\n  mode: deny\n  rules:\n    - { skill: echo, script: scripts/main.py, action: allow }\n',
      {
        era,
        setup: (fx) => writeFileSync(join(fx.skills, 'echo', hook), 'print("HOOK-RAN")\n'),
      },
    );
    const r = await s.c.client.callTool({
      name: 'run_skill_script',
      arguments: { skill: 'echo', script: 'scripts/main.py', input: {} },
    });
    expect(textOf(r)).not.toContain('HOOK-RAN');
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`holds ${hook}`);
  });
});
