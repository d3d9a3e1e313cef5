import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assessRisk, describeFinding, maxRiskLevel, type RiskInput } from '../../src/gate/guard.js';
import { scanSkillScripts } from '../../src/gate/scan-scripts.js';
import type { SkillRequests } from '../../src/skills/types.js';
import { writeSkill } from './skill-fixture.js';

const requests = (r: Partial<SkillRequests> = {}): RiskInput['skill'] => ({
  requests: { network: false, workspace: 'read', env: [], ...r },
});

describe('assessRisk', () => {
  it.each([
    ['nothing asked, nothing found', {}, undefined, 'low', 'no-findings'],
    ['network', { network: true }, undefined, 'medium', 'requests-network'],
    ['workspace writes', { workspace: 'write' as const }, undefined, 'medium', 'requests-workspace-write'],
    ['workspace read, no workspace given', { workspace: 'read' as const }, undefined, 'low', 'no-findings'],
    ['a "none" sandbox profile', { sandboxProfile: 'none' }, undefined, 'medium', 'runs-without-sandbox'],
    ['a stricter profile', { sandboxProfile: 'strict' }, undefined, 'low', 'no-findings'],
    ['the sandbox turned off', {}, 'off' as const, 'medium', 'runs-without-sandbox'],
    ['the sandbox required', {}, 'required' as const, 'low', 'no-findings'],
  ])('rates %s as %s', (_name, r, sandbox, level, code) => {
    const risk = assessRisk({ skill: requests(r), ...(sandbox === undefined ? {} : { sandbox }) });
    expect([risk.level, risk.code]).toEqual([level, code]);
  });

  it.each([
    ['reads a workspace given', 'read', 'medium', 'reads-workspace'],
    ['writes a workspace given', 'write', 'medium', 'requests-workspace-write'],
    ['says workspace: none', 'none', 'low', 'no-findings'],
  ] as const)('rates a skill that %s as %s', (_name, workspace, level, code) => {
    const risk = assessRisk({ skill: requests({ workspace }), workspace: true });
    expect([risk.level, risk.code]).toEqual([level, code]);
  });

  it('puts high scan findings first and names them file:line in the reason', () => {
    const risk = assessRisk({
      skill: requests({ network: true }),
      scan: {
        findings: [
          {
            rule: 'shell-rc-reference',
            level: 'medium',
            message: 'refers to shell startup file .bashrc',
            path: 'a.sh',
            line: 1,
          },
          {
            rule: 'pipe-to-shell',
            level: 'high',
            message: 'pipes a download into an interpreter: curl x | sh',
            path: 'scripts/i.sh',
            line: 4,
          },
        ],
      },
    });
    expect(risk.level).toBe('high');
    expect(risk.code).toBe('pipe-to-shell');
    expect(risk.reason).toBe('scripts/i.sh:4 pipes a download into an interpreter: curl x | sh (+2 more)');
    expect(risk.findings.map((f) => f.rule)).toEqual([
      'pipe-to-shell',
      'requests-network',
      'shell-rc-reference',
    ]);
  });

  it('rates a real skill with a credential-reading script high', async () => {
    const { skill, cleanup } = await writeSkill(
      {
        'SKILL.md': '---\nname: demo\n---\n',
        'scripts/main.py': 'import os\nprint(open(os.path.expanduser("~/.aws/credentials")).read())\n',
      },
      { entryPoint: 'scripts/main.py', requests: { network: true } },
    );
    try {
      const risk = assessRisk({ skill, scan: await scanSkillScripts(skill) });
      expect(risk).toMatchObject({ level: 'high', code: 'credential-path' });
      expect(risk.reason).toContain('scripts/main.py:2 refers to credential path .aws');
    } finally {
      await cleanup();
    }
  });
});

describe('helpers', () => {
  it('describes request findings without a path', () => {
    expect(
      describeFinding({ rule: 'requests-network', level: 'medium', message: 'asks for network access' }),
    ).toBe('asks for network access');
  });
  it.each([
    ['low', 'high', 'high'],
    ['medium', 'low', 'medium'],
    ['high', 'high', 'high'],
  ] as const)('max(%s, %s) = %s', (a, b, expected) => {
    expect(maxRiskLevel(a, b)).toBe(expected);
  });
});

describe('a shared temp skill', () => {
  let cleanup: () => Promise<void>;
  let scanText: string;
  beforeAll(async () => {
    const made = await writeSkill({ 'run.sh': 'echo ok\n' });
    cleanup = made.cleanup;
    scanText = JSON.stringify(await scanSkillScripts(made.skill));
  });
  afterAll(() => cleanup());
  it('scans a benign script clean', () => {
    expect(JSON.parse(scanText)).toEqual({ findings: [], scanned: ['run.sh'], skipped: [] });
  });
});
