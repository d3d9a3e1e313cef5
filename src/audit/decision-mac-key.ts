import { hkdfSync } from 'node:crypto';

/** Domain separation: neither the requestState key nor the pending-view key can yield this one, nor it them. */
const INFO = 'skills-mcp approval decision HMAC-SHA256 v1';
const SALT = 'skills-mcp/decision-mac';

/**
 * The key that signs every approval decision a server process records in a log shared by replicas (`decisionMac`),
 * derived with HKDF-SHA256 from the secret the replicas share (`http.state_key_file`): a replica acts on a decision
 * recorded by another only when it carries a valid MAC, so a database role without the secret cannot approve.
 */
export function decisionMacKey(sharedSecret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', sharedSecret, SALT, INFO, 32));
}
