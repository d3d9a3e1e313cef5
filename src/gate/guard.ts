import type { Skill } from '../skills/types.js';
import { RISK_ORDER, type RiskFinding, type RiskLevel } from './risk-patterns.js';
import type { ScriptScan } from './scan-scripts.js';
import type { OperatorGrants } from './effective-requests.js';

export type { RiskFinding, RiskLevel } from './risk-patterns.js';

/** The guard's verdict on a skill call; part of `policy_decided` and of the approval message. */
export interface Risk {
  level: RiskLevel;
  /** Rule id of the first most severe finding, or `no-findings`. */
  code: string;
  /** One line for people: the most severe findings, e.g. `scripts/install.sh:3 pipes a download…`. */
  reason: string;
  /** Every finding, most severe first (request findings before scan findings at the same level). */
  findings: RiskFinding[];
}

export interface RiskInput {
  /** The skill's asks as they apply (`effectiveRequests`), and which of them the operator set. */
  skill: Pick<Skill, 'requests'> & { operator?: OperatorGrants };
  /** Result of `scanSkillScripts` for this skill's bundle (cache it per `bundle_sha256`). */
  scan?: Pick<ScriptScan, 'findings'>;
  /** The effective sandbox of this call, once resolved: `off` when the operator turned it off. */
  sandbox?: 'required' | 'off';
  /** True when the operator gave a workspace (`--workspace`): a skill reads it unless it says `workspace: none`. */
  workspace?: boolean;
  /**
   * The profile the call runs with, once resolved: its own `network: full` gives the host network to a skill that
   * asks for none, and its `sandbox: off` runs it unconfined, whatever the profile is called.
   */
  profile?: { name: string; network: 'none' | 'full'; sandbox: 'required' | 'off' };
}

const NO_SANDBOX_PROFILES = new Set(['off', 'none', 'unsandboxed']);

/**
 * Risk of one skill call. Asking for network, reading or writing a workspace, or no sandbox ⇒ at least `medium`
 * (the policy asks unless a rule allows); scan findings such as credential paths, `curl | sh`, encoded exec
 * or shell rc writes ⇒ `high`. Pure: the scan is passed in.
 */
export function assessRisk({ skill, scan, sandbox, workspace, profile: resolved }: RiskInput): Risk {
  const requested: RiskFinding[] = [];
  const medium = (rule: string, message: string): void => {
    requested.push({ rule, level: 'medium', message });
  };
  const op = skill.operator ?? {};
  if (skill.requests.network)
    medium(
      'requests-network',
      op.network === undefined ? 'asks for network access' : 'has network access (granted by the operator)',
    );
  else if (op.network !== 'none' && resolved?.network === 'full')
    medium('requests-network', `has network access (its sandbox profile ${resolved.name} has the network)`);
  if (skill.requests.workspace === 'write')
    medium(
      'requests-workspace-write',
      op.workspace === undefined
        ? 'asks to write to the workspace'
        : 'may write to the workspace (granted by the operator)',
    );
  else if (skill.requests.workspace === 'read' && workspace === true)
    // Whatever it reads (a `.env`, keys, private notes) can come back to the model in the result.
    medium('reads-workspace', 'can read every file of the workspace, and its result goes back to the model');
  const profile = skill.requests.sandboxProfile ?? op.profile;
  if (
    sandbox === 'off' ||
    resolved?.sandbox === 'off' ||
    (profile !== undefined && NO_SANDBOX_PROFILES.has(profile))
  ) {
    medium('runs-without-sandbox', 'runs without a sandbox');
  }
  const findings = [...requested, ...(scan?.findings ?? [])]
    .map((f, i) => ({ f, i }))
    .sort((a, b) => RISK_ORDER[b.f.level] - RISK_ORDER[a.f.level] || a.i - b.i)
    .map(({ f }) => f);
  const top = findings[0];
  if (top === undefined) return { level: 'low', code: 'no-findings', reason: 'no risk found', findings };
  const worst = findings.filter((f) => f.level === top.level);
  const shown = worst.slice(0, 3).map(describeFinding).join('; ');
  const rest = findings.length - Math.min(3, worst.length);
  const more = rest > 0 ? ` (+${rest} more)` : '';
  return { level: top.level, code: top.rule, reason: shown + more, findings };
}

/** `scripts/x.sh:3 pipes a download…` or the bare message for request findings. */
export function describeFinding(f: RiskFinding): string {
  if (f.path === undefined || f.path === '') return f.message;
  return `${f.path}${f.line === undefined ? '' : `:${f.line}`} ${f.message}`;
}

/** The higher of two levels. */
export function maxRiskLevel(a: RiskLevel, b: RiskLevel): RiskLevel {
  return RISK_ORDER[a] >= RISK_ORDER[b] ? a : b;
}
