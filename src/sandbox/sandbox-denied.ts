import { SkillsError } from '../errors.js';
import type { ProbeResult } from './types.js';

/** The error for "a sandbox is required and none is healthy": carries the probe's diagnosis. Nothing ran. */
export function sandboxDenied(probe: ProbeResult): SkillsError {
  const d = probe.diagnosis;
  return new SkillsError('SANDBOX_DENIED', `sandbox required but unavailable: ${d.message}`, {
    ...(d.hint === undefined ? {} : { hint: d.hint }),
    details: { adapter: probe.adapter, diagnosis: d.code },
  });
}
