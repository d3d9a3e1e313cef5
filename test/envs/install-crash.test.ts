import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTree } from '../../src/envs/env-store.js';
import { buildWheel, offlinePip } from '../helpers/build-packages.js';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';
import { trials } from '../helpers/trials.js';

const TRIALS = trials(20);
const ID = /^[0-9a-f]{64}$/;

describe('SIGKILL of the server while it installs a skill environment', () => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const wheels = join(t.dir, 'wheels');
  const audit = join(t.dir, 'state', 'audit.db');
  const envsDir = join(t.dir, 'state', 'envs');
  const config = join(t.dir, 'skills-mcp.yaml');
  const args = ['--skills', skills, '--config', config, '--audit', audit, '--no-watch'];

  beforeAll(() => {
    cpSync(join(repoRoot, 'test', 'fixtures', 'real-skills', 'req-skill'), join(skills, 'req-skill'), {
      recursive: true,
    });
    // Enough files that a kill can land while pip writes, while the build is sealed, or around the rename.
    const big = Array.from({ length: 400 }, (_, i) => `X${i} = ${i}`).join('\n');
    buildWheel(wheels, 'tinypkg', '1.0', `VALUE = "tinypkg 1.0"\n${big}\n`);
    writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  });
  afterAll(() => t.cleanup());

  const built = () => (existsSync(envsDir) ? readdirSync(envsDir).filter((n) => ID.test(n)) : []);
  /** Every folder named like an environment is complete: a manifest naming it, and the package inside. */
  const assertNoHalfEnv = () => {
    for (const n of built()) {
      const m = JSON.parse(readFileSync(join(envsDir, n, 'env.json'), 'utf8')) as {
        id: string;
        installed: string[];
      };
      expect(m.id).toBe(n);
      expect(m.installed).toEqual(['tinypkg==1.0']);
      expect(existsSync(join(envsDir, n, 'python', 'tinypkg', '__init__.py'))).toBe(true);
    }
  };

  it(`never leaves a half-built environment in ${TRIALS} kills; the next install succeeds; the audit chain verifies`, async () => {
    const outcomes: string[] = [];
    const builds = () => (existsSync(envsDir) ? readdirSync(envsDir).filter((n) => !ID.test(n)).length : 0);
    for (let i = 0; i < TRIALS; i++) {
      const c = await connectStdio({ era: 'legacy', args, env: offlinePip(wheels) });
      const pid = c.transport.pid!;
      const before = builds();
      const call = c.client
        .callTool({ name: 'run_skill_script', arguments: { skill: 'req-skill', script: 'scripts/use.py' } })
        .then(
          () => 'finished',
          () => 'killed',
        );
      // Wait for this trial's build folder, then kill at a spread of moments into the install (about 1 s here).
      await waitFor(() => builds() > before || built().length > 0, 60_000, 'an install to start');
      await new Promise((r) => setTimeout(r, (i * 73) % 1500));
      process.kill(pid, 'SIGKILL');
      outcomes.push(await call);
      await c.close().catch(() => undefined);
      assertNoHalfEnv();
      // The next trial starts from scratch: a complete environment would skip its install.
      for (const n of built()) {
        outcomes[outcomes.length - 1] += ':built';
        removeTree(join(envsDir, n));
      }
    }
    expect(outcomes.filter((o) => o.startsWith('killed')).length).toBeGreaterThanOrEqual(5);
    const c = await connectStdio({ era: 'legacy', args, env: offlinePip(wheels) });
    try {
      const r = await c.client.callTool({
        name: 'run_skill_script',
        arguments: { skill: 'req-skill', script: 'scripts/use.py' },
      });
      expect(r.structuredContent).toEqual({ value: 'tinypkg 1.0', in_env: true });
    } finally {
      await c.close();
    }
    assertNoHalfEnv();
    const prune = runCli(['deps', 'prune', '--skills', skills, '--audit', audit, '--config', config]);
    expect(prune.stdout).toMatch(/kept 1/);
    const verify = runCli(['audit', 'verify', '--audit', audit]);
    expect(verify.code).toBe(0);
    console.log(`install kills: ${outcomes.join(', ')}`);
  }, 600_000);
});
