import { describe, expect, it } from 'vitest';
import { knownResultJson, rememberResultJson } from '../../src/mcp/result-json.js';

const files = [
  { path: 'SKILL.md', size: 120, uri: 'skill://demo/SKILL.md' },
  { path: 'scripts/run.py', size: 40, uri: 'skill://demo/scripts/run.py' },
];
const view = {
  content: [
    { type: 'text' as const, text: '# demo\n\nDoes things.' },
    { type: 'text' as const, text: '- SKILL.md (120 B)\n- scripts/run.py (40 B)' },
  ],
  structuredContent: { name: 'demo', kind: 'instruction', description: 'Does things.', files },
};
rememberResultJson(view);

/** What the SDK sends: a validated copy of the result that keeps the structured content's values themselves. */
const copyOf = (r: typeof view) => ({
  content: r.content.map((c) => ({ ...c })),
  structuredContent: { ...r.structuredContent },
});

describe('the remembered JSON of a repeated result', () => {
  it('is the JSON of a copy equal to the remembered result', () => {
    const json = knownResultJson(copyOf(view));
    expect(json).toBeDefined();
    expect(JSON.parse(json!)).toEqual(view);
  });

  it('is not used for a copy that differs anywhere, even deep inside', () => {
    const text = copyOf(view);
    text.content[0] = { type: 'text', text: '# demo\n\nDoes other things.' };
    expect(knownResultJson(text)).toBeUndefined();
    const flagged = { ...copyOf(view), isError: true };
    expect(knownResultJson(flagged)).toBeUndefined();
    const shorter = copyOf(view);
    shorter.content.pop();
    expect(knownResultJson(shorter)).toBeUndefined();
    const renamed = copyOf(view);
    renamed.structuredContent.name = 'other';
    expect(knownResultJson(renamed)).toBeUndefined();
  });

  it('is not used for results it was never given', () => {
    expect(
      knownResultJson({ content: [{ type: 'text', text: 'x' }], structuredContent: { files: [] } }),
    ).toBe(undefined);
    expect(knownResultJson({ content: [] })).toBeUndefined();
    expect(knownResultJson(undefined)).toBeUndefined();
  });
});
