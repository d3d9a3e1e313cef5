// Deterministic (seeded) skill folders for the benches: realistic SKILL.md files of a few KB, some with scripts/
// and references/. Shared by startup.bench.mjs and skills-extension.bench.mjs.
import { Buffer } from 'node:buffer';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VERBS = [
  'analyze',
  'audit',
  'build',
  'convert',
  'draft',
  'extract',
  'format',
  'migrate',
  'review',
  'summarize',
];
const NOUNS = [
  'api-spec',
  'changelog',
  'csv-data',
  'dockerfile',
  'invoice',
  'k8s-manifest',
  'log-file',
  'pdf-form',
  'sql-schema',
  'test-suite',
  'release-notes',
  'terraform-plan',
];
const WORDS = (
  'the skill reads input carefully and checks each field before it writes output so the user gets a result ' +
  'that is correct complete and easy to review when a value is missing ask for it instead of guessing prefer ' +
  'small focused changes keep the original structure explain every assumption in one short sentence use the ' +
  'project conventions for names dates and units quote exact error messages and never invent data'
).split(' ');

function sentence(r, min = 8, max = 20) {
  const n = min + Math.floor(r() * (max - min));
  const words = Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]);
  words[0] = words[0][0].toUpperCase() + words[0].slice(1);
  return `${words.join(' ')}.`;
}
const paragraph = (r, sentences) => Array.from({ length: sentences }, () => sentence(r)).join(' ');

function skillMarkdown(r, name, verb, noun, hasScript, hasReference) {
  const topic = noun.replace(/-/g, ' ');
  const description =
    `${verb[0].toUpperCase()}${verb.slice(1)}s ${topic} files and reports problems with concrete fixes. ` +
    `Use when the user shares a ${topic}, asks to ${verb} one, or wants a checklist before publishing it. ` +
    sentence(r, 6, 14);
  const lines = [
    '---',
    `name: ${name}`,
    `description: ${JSON.stringify(description)}`,
    'license: MIT',
    'metadata:',
    '  author: skills-mcp-bench',
    `  category: ${noun.split('-')[0]}`,
    '---',
    '',
    `# ${verb[0].toUpperCase()}${verb.slice(1)} ${topic}`,
    '',
    paragraph(r, 4),
    '',
  ];
  const sections = 4 + Math.floor(r() * 4);
  for (let s = 1; s <= sections; s++) {
    lines.push(`## ${s}. ${sentence(r, 3, 6).slice(0, -1)}`, '', paragraph(r, 3 + Math.floor(r() * 4)), '');
    for (let b = 0; b < 3 + Math.floor(r() * 3); b++) lines.push(`- ${sentence(r, 6, 14)}`);
    lines.push('');
    if (s === 2) {
      lines.push(
        '```bash',
        `# check the ${topic} before you change it`,
        `grep -n "TODO" "$FILE" | head -20`,
        '```',
        '',
      );
    }
  }
  if (hasScript) {
    lines.push(
      '## Helper script',
      '',
      `Run \`python3 scripts/check_${noun.replace(/-/g, '_')}.py FILE\` and read its JSON output before editing.`,
      '',
    );
  }
  if (hasReference) {
    lines.push(
      '## Reference',
      '',
      'The full field list is in [references/REFERENCE.md](references/REFERENCE.md).',
      '',
    );
  }
  return lines.join('\n');
}

function scriptFile(r, noun) {
  return [
    '#!/usr/bin/env python3',
    `"""Checks a ${noun.replace(/-/g, ' ')} file and prints findings as JSON."""`,
    'import json',
    'import sys',
    '',
    '',
    'def main(path):',
    '    findings = []',
    '    with open(path, encoding="utf-8") as f:',
    '        for number, line in enumerate(f, 1):',
    '            if "TODO" in line or len(line) > 200:',
    '                findings.append({"line": number, "text": line.strip()[:80]})',
    '    print(json.dumps({"path": path, "findings": findings}, indent=2))',
    '',
    '',
    '# ' + sentence(r),
    'if __name__ == "__main__":',
    '    main(sys.argv[1])',
    '',
  ].join('\n');
}

function referenceFile(r, noun) {
  const lines = [`# ${noun} reference`, ''];
  lines.push('| Field | Required | Meaning |', '| --- | --- | --- |');
  for (let i = 0; i < 25; i++)
    lines.push(`| field_${i} | ${r() < 0.5 ? 'yes' : 'no'} | ${sentence(r, 5, 12)} |`);
  lines.push('', paragraph(r, 8), '');
  return lines.join('\n');
}

/** Writes `count` skill folders under `dir`; returns the total bytes written. */
export function generateSkills(dir, count, seed) {
  const r = rng(seed);
  let bytes = 0;
  const write = (path, text) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    bytes += Buffer.byteLength(text);
  };
  for (let i = 0; i < count; i++) {
    const verb = VERBS[i % VERBS.length];
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length];
    const name = `${verb}-${noun}-${String(i).padStart(4, '0')}`;
    const hasScript = i % 3 === 0;
    const hasReference = i % 4 === 1;
    const skillDir = join(dir, name);
    write(join(skillDir, 'SKILL.md'), skillMarkdown(r, name, verb, noun, hasScript, hasReference));
    if (hasScript)
      write(join(skillDir, 'scripts', `check_${noun.replace(/-/g, '_')}.py`), scriptFile(r, noun));
    if (hasReference) write(join(skillDir, 'references', 'REFERENCE.md'), referenceFile(r, noun));
  }
  return bytes;
}
