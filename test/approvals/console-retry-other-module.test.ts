import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  consoleConfig,
  startConsoleServer,
  textOf,
  type ConsoleServer,
} from '../console/helpers/console-server.js';
import { postDecision } from '../console/helpers/raw-request.js';

/**
 * Plays the model: it asks to run `python3 -m pk.a`; the person approves that in the console; the model then
 * "retries" with another module. The kept approval covers `pk.a` only: the other request must not be answered with
 * `pk.a`'s run (nor run anything without being asked).
 */
describe('a console retry naming another module is not the approved call', () => {
  let s: ConsoleServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('does not answer a retry for pk.b with the approved run of pk.a', async () => {
    s = await startConsoleServer({
      config: consoleConfig({ waitMs: 1000 }),
      setup: (fx) => {
        const pk = join(fx.skills, 'pk');
        mkdirSync(join(pk, 'pk'), { recursive: true });
        writeFileSync(
          join(pk, 'SKILL.md'),
          '---\nname: pk\ndescription: Two modules. Use in tests.\n---\n\nRun pk.a or pk.b.\n',
        );
        writeFileSync(join(pk, 'pk', '__init__.py'), '');
        writeFileSync(join(pk, 'pk', 'a.py'), 'print("RAN module a")\n');
        writeFileSync(join(pk, 'pk', 'b.py'), 'print("RAN module b")\n');
      },
    });
    const srv = s;
    const asked = srv.call({ skill: 'pk', module: 'pk.a' }, 'run_skill_script');
    const first = await asked.result;
    expect(first._meta?.['skills-mcp/code'], textOf(first)).toBe('APPROVAL_PENDING');
    expect((await postDecision(await asked.link, 'approved')).status).toBe(303);

    const other = await srv.call({ skill: 'pk', module: 'pk.b' }, 'run_skill_script').result;
    expect(textOf(other)).not.toContain('RAN module a');
  });
});
