import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createSandbox, type HostFacts } from '../../src/sandbox/index.js';
import { startInProcess } from '../helpers/in-process-server.js';
import { tempDirs } from '../sandbox/helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const HOST: HostFacts = { maxUserNamespaces: '63766', unprivilegedUsernsClone: '1', distro: ['debian'] };

/** A skill folder whose entry point, when it runs, creates `canary` (an absolute host path). */
async function canarySkill() {
  const root = await dirs.make('skills-mcp-prepare-ahead-');
  const skills = join(root, 'skills');
  const canary = join(root, 'ran');
  mkdirSync(join(skills, 'touch', 'scripts'), { recursive: true });
  writeFileSync(
    join(skills, 'touch', 'SKILL.md'),
    '---\nname: touch\ndescription: Creates a file. Use in tests.\nentry_point: scripts/main.sh\n---\n\nTouches.\n',
  );
  writeFileSync(join(skills, 'touch', 'scripts', 'main.sh'), `touch ${canary}\necho '{}'\n`);
  return { root, skills, canary };
}

/** A bwrap that fails its probe the way a host without user namespaces does. */
async function failingBwrap(): Promise<string> {
  const dir = await dirs.make('skills-mcp-stub-bwrap-');
  await chmod(dir, 0o755);
  const bwrap = join(dir, 'bwrap');
  await writeFile(bwrap, `#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n`);
  await chmod(bwrap, 0o755);
  return bwrap;
}

const textOf = (r: { content?: unknown }) => (r.content as Array<{ text: string }>)[0]!.text;

describe("preparing a session's first run ahead of it", () => {
  it('scans the bundle but runs none of the skill, even unconfined', async () => {
    const { root, skills, canary } = await canarySkill();
    const sandbox = createSandbox({ mode: 'off', log: silentLogger(), env: process.env });
    const server = startInProcess({
      skills: [skills],
      root,
      sandbox,
      config: {
        sandbox: { mode: 'off' },
        approval: { mode: 'allow', fallback: 'rules-only', rules: [{ skill: 'touch', action: 'allow' }] },
      },
    });
    try {
      await server.prepareRuns();
      expect(existsSync(canary)).toBe(false);
      // Nor does it copy the bundle: the copy a run executes from is made once the call is approved.
      expect(readdirSync(join(root, 'bundles')).filter((f) => /^[0-9a-f]{64}$/.test(f))).toHaveLength(0);
      const client = await server.connect('prepare-ahead');
      const r = await client.callTool({ name: 'touch', arguments: {} });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(existsSync(canary)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('gets a sandboxed first call ready without running it, and the call then runs', async () => {
    const { root, skills, canary } = await canarySkill();
    const server = startInProcess({ skills: [skills], root });
    try {
      await server.prepareRuns();
      expect(existsSync(canary)).toBe(false);
      const client = await server.connect('prepare-ahead-sandboxed');
      const r = await client.callTool({ name: 'touch', arguments: {} });
      expect(r.isError, textOf(r)).toBeFalsy();
    } finally {
      await server.close();
    }
  });

  it('fails quietly when the sandbox probe fails: the first call reports the refusal as without it', async () => {
    const refusal = async (prepared: boolean) => {
      const { root, skills, canary } = await canarySkill();
      const sandbox = createSandbox({
        bwrapCandidates: [await failingBwrap()],
        hostFacts: () => Promise.resolve(HOST),
        log: silentLogger(),
        env: process.env,
      });
      const server = startInProcess({ skills: [skills], root, sandbox });
      try {
        if (prepared) await expect(server.prepareRuns()).resolves.toBeUndefined();
        const client = await server.connect('prepare-ahead-denied');
        const r = await client.callTool({ name: 'touch', arguments: {} });
        expect(existsSync(canary)).toBe(false);
        return { isError: r.isError, code: r._meta?.['skills-mcp/code'], text: textOf(r) };
      } finally {
        await server.close();
      }
    };
    const after = await refusal(true);
    expect(after.isError).toBe(true);
    expect(after.code).toBe('SANDBOX_DENIED');
    expect(after).toEqual(await refusal(false));
  });
});
