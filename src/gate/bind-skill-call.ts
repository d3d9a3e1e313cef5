import type { Granularity } from '../config/approval-schema.js';
import { SkillsError } from '../errors.js';
import { approvalKey, sha256Hex, summarizeInput, type InputSummary } from './approval-key.js';
import { canonicalJson } from '../canonical-json.js';
import { hasOperatorGrants, type OperatorGrants } from './effective-requests.js';

/**
 * The tool name bound into every skill-call key. A per-skill tool of an executable skill and
 * `run_skill_script` of its entry point run the same thing, so they share keys: switching tools neither
 * dodges the loop guard nor reuses a grant for something else.
 */
export const SKILL_CALL_TOOL = 'run_skill_script';

/** A skill call as the runner has resolved it (step 2 of a gated call, see docs/architecture.md). */
export interface SkillCall {
  /** Skill name (frontmatter `name`). */
  skill: string;
  /** The skill's folder (realpath): with the name, its identity. A grant for one folder is void for another. */
  folder: string;
  /** Script path relative to the skill folder, POSIX (`scripts/main.py`). */
  script: string;
  /** Python module run with `-m` from the skill root (its file is `script`). */
  module?: string;
  /** Content binding of the skill folder (64 lowercase hex). */
  bundleSha256: string;
  /** Identity of the skill's environment (spec + interpreter + platform), when it declares packages. */
  envSha256?: string;
  /** What the operator's config (`skill_overrides`) set for the skill: bound, so a changed override asks again. */
  operator?: OperatorGrants;
  /** What the call's sandbox profile gives that neither the skill nor the operator's override asked for. */
  profileGrants?: ProfileGrants;
  /** The JSON input as received (absent = `null`). */
  input?: unknown;
  /** Extra argv from the model (`run_skill_script.args`), never a shell string. */
  args?: readonly string[];
}

/**
 * The sanitized request hashed into the key. No model free text, reasons, timestamps or ids; no values in
 * the clear. `exact` adds the input and args digests; `skill` leaves them out, so changing the input does
 * not make a new key.
 */
export interface SkillCallRequest {
  skill: string;
  /** The skill's folder: the key is only ever hashed, never stored, so the host path goes nowhere. */
  folder: string;
  script: string;
  /** Present only for `python3 -m` calls, so keys of other calls are unchanged. */
  module?: string;
  bundle_sha256: string;
  /** Present only for skills with an environment: a changed declaration is a new approval. */
  env_sha256?: string;
  /**
   * Present only for skills the operator set grants for (`skill_overrides`): the frontmatter's asks are in the bundle
   * hash, the operator's are here, so an approval never covers a grant it was not shown.
   */
  operator?: OperatorGrants;
  /**
   * Present only when the call's sandbox profile gives the host network to a skill that asks for none, or runs it
   * unconfined: an approval given under another profile never covers it.
   */
  profile_grants?: ProfileGrants;
  granularity: Granularity;
  input_sha256?: string;
  args_sha256?: string;
}

/** The grants of a sandbox profile bound into an approval key: its own network, or no sandbox. */
export interface ProfileGrants {
  network?: 'full';
  sandbox?: 'off';
}

export interface BoundSkillCall {
  /** Always {@link SKILL_CALL_TOOL}. */
  tool: string;
  request: SkillCallRequest;
  /** Lowercase hex sha256 of `canonicalJson({tool, request})`. */
  approvalKey: string;
  /** Digest, size and key names of the input (for `tool_call_requested` and the approval message). */
  input: InputSummary;
  /** sha256 of the canonical JSON array of args (`[]` when none). */
  argsSha256: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Binds a skill call to its content and (with `exact`) its input: the approval key and what it covers. */
export function bindSkillCall(call: SkillCall, granularity: Granularity): BoundSkillCall {
  if (!SHA256_HEX.test(call.bundleSha256)) {
    throw new SkillsError('KEY_INVALID', 'bundle_sha256 must be 64 lowercase hex digits', {
      details: { skill: call.skill },
    });
  }
  if (call.skill === '' || call.script === '' || call.folder === '') {
    throw new SkillsError('KEY_INVALID', 'a skill call needs a skill name, its folder and a script path');
  }
  const input = summarizeInput(call.input);
  const argsSha256 = sha256Hex(canonicalJson(call.args ?? []));
  const base = {
    skill: call.skill,
    folder: call.folder,
    script: call.script,
    ...(call.module === undefined ? {} : { module: call.module }),
    bundle_sha256: call.bundleSha256,
    ...(call.envSha256 === undefined ? {} : { env_sha256: call.envSha256 }),
    ...(call.operator === undefined || !hasOperatorGrants(call.operator) ? {} : { operator: call.operator }),
    ...(call.profileGrants === undefined || Object.keys(call.profileGrants).length === 0
      ? {}
      : { profile_grants: call.profileGrants }),
  };
  const request: SkillCallRequest =
    granularity === 'exact'
      ? { ...base, granularity, input_sha256: input.input_sha256, args_sha256: argsSha256 }
      : { ...base, granularity };
  return {
    tool: SKILL_CALL_TOOL,
    request,
    approvalKey: approvalKey(SKILL_CALL_TOOL, request),
    input,
    argsSha256,
  };
}
