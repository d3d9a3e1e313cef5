import { hkdfSync } from 'node:crypto';

/** Domain separation: neither the requestState key nor any other use of the shared secret can yield this key. */
const INFO = 'skills-mcp pending approval view AES-256-GCM v1';
const SALT = 'skills-mcp/pending-view';

/**
 * The key that seals what a person is shown of a waiting approval (`pending_views`), derived with HKDF-SHA256 from
 * the secret the replicas share (`http.state_key_file`), so every replica can open what another sealed and the
 * database never holds the values in the clear.
 */
export function pendingViewKey(sharedSecret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', sharedSecret, SALT, INFO, 32));
}
