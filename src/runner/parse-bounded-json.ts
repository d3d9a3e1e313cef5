/** Caps on a script's JSON result (output.json or JSON on stdout); the size cap is applied before parsing. */
export interface JsonLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Values in total (every array item, object member and scalar). */
  maxValues: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 64, maxValues: 500_000 };

export type BoundedJson = { ok: true; json: unknown } | { ok: false; reason: string };

/**
 * Parses JSON a script wrote, after one linear scan of the text (no recursion, no allocation) that measures its
 * nesting and counts its values: JSON.parse itself needs most of a second for 1.6 MB nested 4,000 deep, so a
 * result over a cap is refused before it is parsed, and nothing over a cap is ever parsed or rendered.
 */
export function parseBoundedJson(text: string, limits: JsonLimits = DEFAULT_JSON_LIMITS): BoundedJson {
  let depth = 0;
  // Every value but the first of a container follows a comma; each container is a value: an upper bound.
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limits.maxDepth)
        return { ok: false, reason: `nested deeper than ${limits.maxDepth} levels` };
      values++;
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2c) values++;
    if (values > limits.maxValues) return { ok: false, reason: `more than ${limits.maxValues} JSON values` };
  }
  try {
    return { ok: true, json: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
}

/** Results up to this many characters (compact) are shown indented; larger ones compact, as written. */
const PRETTY_CHARS = 64 * 1024;

/** Text for a JSON result that passed `parseBoundedJson`: bounded by its caps, indented only when small. */
export function renderJson(json: unknown): string {
  const compact = JSON.stringify(json);
  return compact.length <= PRETTY_CHARS ? JSON.stringify(json, null, 2) : compact;
}
