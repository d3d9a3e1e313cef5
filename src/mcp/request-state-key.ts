import { hkdfSync, randomBytes } from 'node:crypto';

/** Domain separation: a secret shared for other uses can never yield this key (nor the other way round). */
const INFO = 'skills-mcp requestState HMAC-SHA256 v1';
const SALT = 'skills-mcp/request-state';

/**
 * The key that signs the call id carried across an approval round trip (`requestState`). From a secret every
 * replica shares: HKDF-SHA256 of it, so a retry may land on any replica. Without one: random for this process,
 * never stored, so only this process accepts its own states.
 */
export function requestStateKey(sharedSecret?: Uint8Array): Buffer {
  if (sharedSecret === undefined) return randomBytes(32);
  return Buffer.from(hkdfSync('sha256', sharedSecret, SALT, INFO, 32));
}
