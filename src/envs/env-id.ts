import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { EnvSpec } from './env-spec.js';
import type { HostRuntime } from './host-runtime.js';

/**
 * Bumped when the layout of a built environment changes. 2: vendored `file:` packages are copied in (layout 1 linked
 * them to the skill folder they came from), and the npm registry is part of the identity.
 */
const LAYOUT = 2;

/**
 * An environment's identity: sha256 of the canonical JSON of its normalized spec (with the content hash of every
 * vendored package and the npm registry), the interpreter version and platform it is built for, and whether source
 * builds were allowed. Equal identity ⇒ the same folder is reused.
 */
export function envId(spec: EnvSpec, runtime: HostRuntime, allowSource: boolean): string {
  const doc = {
    layout: LAYOUT,
    python: spec.python.length === 0 ? null : { requirements: spec.python, runtime: runtime.python ?? null },
    node:
      Object.keys(spec.node).length === 0
        ? null
        : {
            dependencies: spec.node,
            lock: spec.nodeLock ?? null,
            ...(spec.nodeFiles === undefined ? {} : { files: spec.nodeFiles }),
            registry: spec.nodeRegistry ?? null,
            runtime: runtime.node ?? null,
          },
    allow_source: allowSource,
  };
  return createHash('sha256').update(canonicalJson(doc)).digest('hex');
}
