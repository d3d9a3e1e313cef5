import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { consoleConfig, consoleServers } from './helpers/console-server.js';
import { rawRequest } from './helpers/raw-request.js';

describe('the approval console card of a skill with an operator override', () => {
  const start = consoleServers();

  it('says which grants the operator set in skills-mcp.yaml', async () => {
    const s = await start({
      config: consoleConfig({ extra: 'skill_overrides:\n  scribe: { workspace: write, network: none }\n' }),
      setup: (fx) => {
        writeTestSkill(fx.skills, 'scribe', {
          description: 'Writes a report. Use in tests.',
          script: 'print("{}")\n',
        });
        mkdirSync(join(fx.dir, 'ws'));
      },
      args: (fx) => ['--workspace', join(fx.dir, 'ws')],
    });
    const pending = s.call({}, 'scribe');
    const page = (await rawRequest(await pending.link)).body;
    expect(page).toContain('<dt>Operator</dt>');
    expect(page).toContain('<li>Workspace: write (set by the operator in skills-mcp.yaml)</li>');
    expect(page).toContain('<li>Network: none (set by the operator in skills-mcp.yaml)</li>');
  });
});
