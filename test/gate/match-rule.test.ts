import { describe, expect, it } from 'vitest';
import { describeRule, matchesRule } from '../../src/gate/match-rule.js';

describe('matchesRule', () => {
  it.each([
    [{ skill: 'pdf' }, 'pdf', 'scripts/fill.py', true],
    [{ skill: 'pdf' }, 'pdfx', 'scripts/fill.py', false],
    [{ skill: 'pd' }, 'pdf', 'scripts/fill.py', false],
    [{ skill: '*' }, 'anything', 'x.sh', true],
    [{ skill: 'data-*' }, 'data-clean', 'x.sh', true],
    [{ skill: 'data-*' }, 'metadata-x', 'x.sh', false],
    [{ skill: 'a.b' }, 'axb', 'x.sh', false],
    [{ skill: 'pdf', script: 'scripts/fill.py' }, 'pdf', 'scripts/fill.py', true],
    [{ skill: 'pdf', script: 'scripts/fill.py' }, 'pdf', 'scripts/other.py', false],
    [{ skill: 'pdf', script: 'fill.py' }, 'pdf', 'scripts/fill.py', true],
    [{ skill: 'pdf', script: 'fill.py' }, 'pdf', 'fill.py', true],
    [{ skill: 'pdf', script: 'scripts/*.py' }, 'pdf', 'scripts/fill.py', true],
    [{ skill: 'pdf', script: 'scripts/*.py' }, 'pdf', 'scripts/sub/fill.py', false],
    [{ skill: 'pdf', script: 'scripts/**' }, 'pdf', 'scripts/sub/fill.py', true],
    [{ skill: 'pdf', script: '*.sh' }, 'pdf', 'scripts/run.sh', true],
    [{ skill: 'pdf', script: '*.sh' }, 'pdf', 'scripts/run.py', false],
  ])('%o matches %s/%s: %s', (rule, skill, script, expected) => {
    expect(matchesRule(rule, skill, script)).toBe(expected);
  });
});

describe('describeRule', () => {
  it('names the rule by index and shape', () => {
    expect(describeRule({ skill: 'pdf', script: 'scripts/*.py', action: 'allow' }, 2)).toBe(
      'rules[2] (skill: pdf, script: scripts/*.py → allow)',
    );
    expect(describeRule({ skill: 'x', action: 'deny' }, 0)).toBe('rules[0] (skill: x → deny)');
  });
});
