import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Bound into every seal: a view opens only under the call id it was sealed for. */
const aad = (callId: string) => Buffer.from(`skills-mcp pending view v${VERSION}\0${callId}`, 'utf8');

/**
 * AES-256-GCM of the JSON of `body` under `key`, its additional data the call id: `version ‖ nonce ‖ ciphertext ‖
 * tag`. A fresh random nonce per seal.
 */
export function sealPendingView(key: Uint8Array, callId: string, body: unknown): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(callId));
  const text = cipher.update(JSON.stringify(body), 'utf8');
  return Buffer.concat([Buffer.from([VERSION]), nonce, text, cipher.final(), cipher.getAuthTag()]);
}

/**
 * The body sealed for `callId`, or undefined when `sealed` was not made with this key for this call id (another
 * key, another row's seal, any change): nothing unauthenticated is ever returned.
 */
export function openPendingView(key: Uint8Array, callId: string, sealed: Uint8Array): unknown {
  const b = Buffer.from(sealed);
  if (b.length < 1 + NONCE_BYTES + TAG_BYTES || b[0] !== VERSION) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, b.subarray(1, 1 + NONCE_BYTES));
    decipher.setAAD(aad(callId));
    decipher.setAuthTag(b.subarray(b.length - TAG_BYTES));
    const text = Buffer.concat([
      decipher.update(b.subarray(1 + NONCE_BYTES, b.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(text.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
