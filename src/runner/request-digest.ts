import { canonicalJson } from '../canonical-json.js';
import { sha256Hex } from '../gate/index.js';
import { checkRelativePath } from '../skills/resolve-skill-path.js';
import type { CallRequest } from './call-request.js';

/**
 * sha256 of everything a request asks for, as the person is asked about it: tool, skill (name and folder), the
 * script by the name asked (it picks the runner: a link `x.sh` to `x.py` runs with bash) or the module, the
 * arguments and the input. Two requests are the same call when their digests are equal; the approval key does not
 * tell (`granularity: skill` leaves arguments and input out of it, every granularity the name asked). Undefined
 * when the request cannot be bound (a bad path, a value canonical JSON refuses): then it is the same as nothing.
 */
export function requestDigest(r: CallRequest): string | undefined {
  try {
    const script =
      r.script !== undefined
        ? checkRelativePath(r.script)
        : r.module === undefined
          ? r.skill.entryPoint
          : undefined;
    return sha256Hex(
      canonicalJson(
        {
          tool: r.tool,
          skill: r.skill.name,
          folder: r.skill.dir,
          script: script ?? null,
          module: r.module ?? null,
          args: r.args ?? [],
          input: r.input ?? null,
        },
        { allowFloats: true },
      ),
    );
  } catch {
    return undefined;
  }
}
