import type { AskedCall } from '../approvals/same-call.js';
import type { PreparedCall } from './prepare-call.js';

/** A prepared call as an approval binds it (see `isSameCall`). */
export const askedOf = (call: PreparedCall): AskedCall => ({
  requestSha256: call.requestSha256,
  approvalKey: call.bound.approvalKey,
  inputSha256: call.bound.input.input_sha256,
  bundleSha256: call.bundle.sha256,
});
