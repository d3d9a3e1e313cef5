// Generates the README's reference sections from the code (config schema, frontmatter schema, CLI help) and,
// with --check, fails when the README has drifted from them. Run after `npm run build`.
import { readFileSync, writeFileSync } from 'node:fs';
import * as z from 'zod';

const root = new URL('../', import.meta.url);
const { ConfigSchema } = await import(new URL('dist/config/config-schema.js', root).href);
const { FrontmatterSchema } = await import(new URL('dist/skills/frontmatter-schema.js', root).href);
const { HELP } = await import(new URL('dist/cli/help.js', root).href);

const typeOf = (s) => {
  if (s.enum) return s.enum.map((v) => `\`${v}\``).join(' | ');
  if (s.anyOf) return s.anyOf.map(typeOf).join(' or ');
  if (s.type === 'array') return `list of ${typeOf(s.items ?? {})}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
    return `map of ${typeOf(s.additionalProperties)}`;
  return s.type ?? 'any';
};
const cell = (v) => String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const def = (s) =>
  s.default === undefined || (typeof s.default === 'object' && !Array.isArray(s.default))
    ? ''
    : `\`${JSON.stringify(s.default)}\``;

function rows(schema, prefix = '') {
  const out = [];
  for (const [key, s] of Object.entries(schema.properties ?? {})) {
    const name = `${prefix}${key}`;
    if (s.type === 'object' && s.properties) out.push(...rows(s, `${name}.`));
    else out.push(`| \`${name}\` | ${cell(typeOf(s))} | ${cell(def(s))} | ${cell(s.description ?? '')} |`);
    // A map by name of settings objects: each setting too, as `<map>.<name>.<setting>`.
    const entry = s.type === 'object' ? s.additionalProperties : undefined;
    if (typeof entry === 'object' && entry.properties) out.push(...rows(entry, `${name}.<name>.`));
  }
  return out;
}

const sections = {
  config: [
    '| key | type | default | meaning |',
    '|---|---|---|---|',
    ...rows(z.toJSONSchema(ConfigSchema, { io: 'input' })),
  ].join('\n'),
  frontmatter: [
    '| field | type | meaning |',
    '|---|---|---|',
    ...Object.entries(z.toJSONSchema(FrontmatterSchema).properties).map(
      ([k, s]) => `| \`${k}\` | ${cell(typeOf(s))} | ${cell(s.description ?? '')} |`,
    ),
  ].join('\n'),
  cli: Object.entries(HELP)
    .map(
      ([name, text]) =>
        `${name === 'main' ? '' : `#### \`skills-mcp ${name}\`\n\n`}\`\`\`text\n${text}\n\`\`\``,
    )
    .join('\n\n'),
};

const file = new URL('README.md', root);
const readme = readFileSync(file, 'utf8');
let next = readme;
for (const [name, body] of Object.entries(sections)) {
  const re = new RegExp(`(<!-- generated:${name} -->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
  if (!re.test(next)) {
    console.error(`README.md lacks the markers <!-- generated:${name} --> … <!-- /generated:${name} -->`);
    process.exit(1);
  }
  next = next.replace(re, (_m, a, b) => `${a}\n${body}\n${b}`);
}
if (process.argv.includes('--check')) {
  if (next !== readme) {
    console.error(
      'README.md is out of date with the code: run `npm run build && node scripts/docs.mjs` and commit.',
    );
    process.exit(1);
  }
  console.log('README reference sections match the code');
} else {
  writeFileSync(file, next);
  console.log('README reference sections regenerated');
}
