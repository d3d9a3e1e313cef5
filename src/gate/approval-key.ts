import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

/**
 * Approval keys: lowercase hex sha256 of the UTF-8 canonical JSON (RFC 8785) of
 * `{"tool": <tool name>, "request": <sanitized request>}`. `canonicalJson` fails closed (`KEY_INVALID`) on
 * floats, NaN, ±Infinity, -0, unsafe integers, lone surrogates and non-JSON values.
 */

/** The exact string that is hashed into an approval key. */
export function canonicalRequest(tool: string, request: unknown): string {
  return canonicalJson({ tool, request });
}

/** Lowercase hex sha256 of a string's UTF-8 bytes (or of raw bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `approval_key` for a tool and its sanitized request. Throws `KEY_INVALID` on values JCS cannot bind. */
export function approvalKey(tool: string, sanitizedRequest: unknown): string {
  return sha256Hex(canonicalRequest(tool, sanitizedRequest));
}

/** What is kept of an input: never the values, only a digest, a size and the top-level key names. */
export interface InputSummary {
  /** sha256 of the canonical JSON of the input (`null` when the call had no input). */
  input_sha256: string;
  /** UTF-8 byte length of that canonical JSON. */
  input_bytes: number;
  /** Sorted top-level keys when the input is an object, else `[]`. */
  input_keys: string[];
}

/**
 * Canonical JSON of a call's input; an absent input (`undefined`) is bound as `null`. Inputs may hold floats
 * (RFC 8785 number form): only their digest enters an approval key. NaN, ±Infinity, -0 and lone surrogates are
 * still refused.
 */
export function canonicalInput(input: unknown): string {
  return canonicalJson(input === undefined ? null : input, { allowFloats: true });
}

/** sha256 of the canonical JSON of an input. Throws `KEY_INVALID` (fail closed) on NaN, ±Infinity, -0… */
export function inputSha256(input: unknown): string {
  return sha256Hex(canonicalInput(input));
}

/** Digest, size and key names of an input; the values themselves are never kept. */
export function summarizeInput(input: unknown): InputSummary {
  const text = canonicalInput(input);
  const isObject = typeof input === 'object' && input !== null && !Array.isArray(input);
  return {
    input_sha256: sha256Hex(text),
    input_bytes: Buffer.byteLength(text, 'utf8'),
    input_keys: isObject ? Object.keys(input).sort(byCodeUnit) : [],
  };
}

/** Env var names as bound into requests and audit rows: unique, sorted; values are never kept. */
export function envKeys(names: Iterable<string>): string[] {
  return [...new Set(names)].sort(byCodeUnit);
}

/** Same order as JCS key sorting (UTF-16 code units), independent of locale. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
