import { SkillsError } from './errors.js';

/**
 * RFC 8785 (JCS) canonical JSON for the values we hash. Fails closed on anything whose canonical form could be
 * ambiguous across languages: non-integer numbers, -0, NaN, ±Infinity, unsafe integers, lone surrogates,
 * and non-JSON values (undefined, functions, symbols, bigint). For the accepted subset the output equals
 * Python's `json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))`.
 */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  try {
    return encode(value, options.allowFloats === true);
  } catch (e) {
    if (e instanceof Unencodable) throw invalid(`$${e.path.reverse().join('')}`, e.what);
    throw e;
  }
}

export interface CanonicalOptions {
  /**
   * Accept finite non-integer numbers, serialized as RFC 8785 does (ECMAScript Number-to-String). For hashing
   * model-supplied *inputs*, where only this implementation needs to reproduce the digest. Approval keys never set it.
   */
  allowFloats?: boolean;
}

/** No lone surrogates (`String.prototype.isWellFormed`, ES2024, in Node since 20): at once for one-byte strings. */
const isWellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * A value that has no canonical form. The path to it is collected as the error unwinds (innermost segment first),
 * so that encoding builds no path strings for values that are fine: the audit log encodes every event this way.
 */
class Unencodable extends Error {
  readonly path: string[] = [];
  constructor(readonly what: string) {
    super(what);
  }
}

const within = (e: unknown, segment: string): unknown => {
  if (e instanceof Unencodable) e.path.push(segment);
  return e;
};

function encodeString(s: string): string {
  if (!isWellFormed(s)) throw new Unencodable('a lone surrogate');
  return JSON.stringify(s);
}

function encode(value: unknown, floats: boolean): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return encodeString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Unencodable(String(value));
      if (Object.is(value, -0)) throw new Unencodable('-0');
      if (floats && !Number.isInteger(value)) return String(value);
      if (!Number.isInteger(value)) throw new Unencodable(`the non-integer number ${value}`);
      if (!Number.isSafeInteger(value)) throw new Unencodable(`the unsafe integer ${value}`);
      return String(value);
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          try {
            out += `${i === 0 ? '' : ','}${encode(value[i], floats)}`;
          } catch (e) {
            throw within(e, `[${i}]`);
          }
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) throw new Unencodable('a non-plain object');
      const record = value as Record<string, unknown>;
      // The default sort compares UTF-16 code units, as RFC 8785 orders keys.
      const keys = Object.keys(record).sort();
      let out = '{';
      for (const k of keys) {
        const v = record[k];
        if (v === undefined) continue;
        const key = encodeString(k);
        try {
          out += `${out.length === 1 ? '' : ','}${key}:${encode(v, floats)}`;
        } catch (e) {
          throw within(e, `.${k}`);
        }
      }
      return `${out}}`;
    }
    default:
      throw new Unencodable(`a value of type ${typeof value}`);
  }
}

function invalid(at: string, what: string): SkillsError {
  return new SkillsError('KEY_INVALID', `cannot canonicalize ${at}: it holds ${what}`, {
    hint: 'Only strings, integers, booleans, null, arrays and plain objects can be bound into a key.',
  });
}
