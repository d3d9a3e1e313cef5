import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { CallRequest } from '../runner/call-request.js';

/**
 * Identifies a retry of the same request: same session, tool, skill, script or module, args and input. A retry continues
 * the call that asked (same call id, same approval key), so it must be exactly the same request: with
 * `granularity: skill` a retry with other input is a new call and is asked anew, never run with the old input.
 * Input that has no canonical form gets a random key (it is then never matched: asked anew).
 */
export function requestKey(req: CallRequest): string {
  let text: string;
  try {
    text = canonicalJson(
      {
        session: req.session.id,
        tool: req.tool,
        skill: req.skill.name,
        script: req.script ?? null,
        module: req.module ?? null,
        args: req.args ?? [],
        input: req.input ?? null,
      },
      { allowFloats: true },
    );
  } catch {
    return randomBytes(32).toString('hex');
  }
  return createHash('sha256').update(text).digest('hex');
}
