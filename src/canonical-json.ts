import { SkillsError } from './errors.js';

/**
 * RFC 8785 (JCS) canonical JSON for the values we hash. Fails closed on anything whose canonical form could be
 * ambiguous across languages: non-integer numbers, -0, NaN, ±Infinity, unsafe integers, lone surrogates,
 * and non-JSON values (undefined, functions, symbols, bigint). For the accepted subset the output equals
 * Python's `json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`.
 */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  return encode(value, '$', options.allowFloats === true);
}

export interface CanonicalOptions {
  /**
   * Accept finite non-integer numbers, serialized as RFC 8785 does (ECMAScript Number-to-String). For hashing
   * model-supplied *inputs*, where only this implementation needs to reproduce the digest. Approval keys never set it.
   */
  allowFloats?: boolean;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function encodeString(s: string, at: string): string {
  if (LONE_SURROGATE.test(s)) throw invalid(at, 'a lone surrogate');
  return JSON.stringify(s);
}

function encode(value: unknown, at: string, floats: boolean): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return encodeString(value, at);
    case 'number':
      if (!Number.isFinite(value)) throw invalid(at, String(value));
      if (Object.is(value, -0)) throw invalid(at, '-0');
      if (floats && !Number.isInteger(value)) return String(value);
      if (!Number.isInteger(value)) throw invalid(at, `the non-integer number ${value}`);
      if (!Number.isSafeInteger(value)) throw invalid(at, `the unsafe integer ${value}`);
      return String(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v, i) => encode(v, `${at}[${i}]`, floats)).join(',')}]`;
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) throw invalid(at, 'a non-plain object');
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${encodeString(k, at)}:${encode(v, `${at}.${k}`, floats)}`).join(',')}}`;
    }
    default:
      throw invalid(at, `a value of type ${typeof value}`);
  }
}

function invalid(at: string, what: string): SkillsError {
  return new SkillsError('KEY_INVALID', `cannot canonicalize ${at}: it holds ${what}`, {
    hint: 'Only strings, integers, booleans, null, arrays and plain objects can be bound into a key.',
  });
}
