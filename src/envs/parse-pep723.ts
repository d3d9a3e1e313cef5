import { SkillsError } from '../errors.js';

/** The keys of a PEP 723 block that matter here. */
export interface ScriptMetadata {
  dependencies?: string[];
  requiresPython?: string;
}

const STRING = /"((?:[^"\\]|\\.)*)"|'([^']*)'/g;

/**
 * A deliberately small TOML reader for PEP 723 blocks: top-level `dependencies = [ "…", … ]` (one or several lines)
 * and `requires-python = "…"`. Tables (`[tool.uv]` …) and other keys are skipped. Anything it cannot read in those two
 * keys is an error, never a guess.
 */
export function parse(toml: string, where: string): ScriptMetadata {
  const out: ScriptMetadata = {};
  const lines = toml.split('\n');
  let inTable = false;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      inTable = true;
      continue;
    }
    if (inTable) continue;
    const m = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
    if (m === null) continue;
    const [, key, rest = ''] = m;
    if (key === 'requires-python') {
      const s = [...rest.matchAll(STRING)][0];
      if (s !== undefined) out.requiresPython = s[1] ?? s[2] ?? '';
      continue;
    }
    if (key !== 'dependencies') continue;
    let text = rest;
    while (!/\]\s*(#.*)?$/.test(text.replace(STRING, '""')) && i + 1 < lines.length)
      text += `\n${lines[++i]}`;
    const body = text.replace(/#[^"'\n]*$/gm, '').trim();
    if (!body.startsWith('[') || !body.endsWith(']')) {
      throw new SkillsError('ENV_SPEC_INVALID', `${where}: the script block's "dependencies" is not a list`);
    }
    out.dependencies = [...body.matchAll(STRING)].map((s) => s[1] ?? s[2] ?? '');
  }
  return out;
}
