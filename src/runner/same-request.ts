import { canonicalJson } from '../canonical-json.js';
import { checkRelativePath } from '../skills/resolve-skill-path.js';
import type { CallRequest, PreparedCall } from './prepare-call.js';

const canonical = (v: unknown): string | undefined => {
  try {
    return canonicalJson(v ?? null, { allowFloats: true });
  } catch {
    return undefined;
  }
};

/**
 * Whether a retry asks for exactly the call that is pending: same tool, same skill (folder and name), same script or module,
 * same arguments and same input. An approval covers that call only; a retry asking for anything else runs nothing.
 */
export function isSameRequest(call: PreparedCall, retry: CallRequest): boolean {
  // The names asked for, as given: `call.script` is the real file, which several names (links) may stand for.
  const asked = (r: CallRequest) =>
    r.script === undefined ? r.skill.entryPoint : checkRelativePath(r.script);
  let script: string | undefined;
  try {
    script = asked(retry);
  } catch {
    return false;
  }
  const input = canonical(retry.input);
  return (
    retry.tool === call.req.tool &&
    retry.skill.name === call.skill.name &&
    retry.skill.dir === call.skill.dir &&
    retry.module === call.req.module &&
    (call.req.module === undefined ? script === asked(call.req) : retry.script === undefined) &&
    canonical(retry.args ?? []) === canonical(call.req.args ?? []) &&
    input !== undefined &&
    input === canonical(call.req.input)
  );
}
