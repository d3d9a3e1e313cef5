import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 2;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The two sealed parts of a shared view: `card`, what the approval card shows (small), and `input`, the arguments
 * and input in full (read only for the page that shows them).
 */
export type ViewPart = 'card' | 'input';

/** Bound into every seal: a part opens only as the same part of the same call id. */
const aad = (part: ViewPart, callId: string) =>
  Buffer.from(`skills-mcp pending view v${VERSION}\0${part}\0${callId}`, 'utf8');

/**
 * AES-256-GCM of the JSON of `body` under `key`, its additional data the part and the call id: `version ‖ nonce ‖
 * ciphertext ‖ tag`. A fresh random nonce per seal.
 */
export function sealPendingView(key: Uint8Array, part: ViewPart, callId: string, body: unknown): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad(part, callId));
  const text = cipher.update(JSON.stringify(body), 'utf8');
  return Buffer.concat([Buffer.from([VERSION]), nonce, text, cipher.final(), cipher.getAuthTag()]);
}

/**
 * The body sealed as `part` for `callId`, or undefined when `sealed` was not made with this key for this part of
 * this call id (another key, another row's seal, the other part, an older format, any change): nothing
 * unauthenticated is ever returned.
 */
export function openPendingView(
  key: Uint8Array,
  part: ViewPart,
  callId: string,
  sealed: Uint8Array,
): unknown {
  const b = Buffer.from(sealed);
  if (b.length < 1 + NONCE_BYTES + TAG_BYTES || b[0] !== VERSION) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, b.subarray(1, 1 + NONCE_BYTES));
    decipher.setAAD(aad(part, callId));
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
