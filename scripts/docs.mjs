// Generates the reference sections of the docs from the code (config schema, frontmatter schema, CLI help) and,
// with --check, fails when a doc has drifted from them. Run after `npm run build`.
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
    // A list whose entries are a string or a settings object (`skills`): each setting of the object, as `<list>[].<setting>`.
    const item =
      s.type === 'array' ? s.items?.anyOf?.find((x) => x.type === 'object' && x.properties) : undefined;
    if (item !== undefined) out.push(...rows(item, `${name}[].`));
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
        `${name === 'main' ? '' : `## \`skills-mcp ${name}\`\n\n`}\`\`\`text\n${text}\n\`\`\``,
    )
    .join('\n\n'),
};

// Where each generated section lives, between <!-- generated:NAME --> and <!-- /generated:NAME -->.
const FILES = { config: 'docs/configuration.md', frontmatter: 'docs/writing-skills.md', cli: 'docs/cli.md' };

const check = process.argv.includes('--check');
const byFile = new Map();
for (const [name, path] of Object.entries(FILES)) byFile.set(path, [...(byFile.get(path) ?? []), name]);
let stale = 0;
for (const [path, names] of byFile) {
  const file = new URL(path, root);
  const text = readFileSync(file, 'utf8');
  let next = text;
  for (const name of names) {
    const re = new RegExp(`(<!-- generated:${name} -->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!re.test(next)) {
      console.error(`${path} lacks the markers <!-- generated:${name} --> … <!-- /generated:${name} -->`);
      process.exit(1);
    }
    next = next.replace(re, (_m, a, b) => `${a}\n${sections[name]}\n${b}`);
  }
  if (next === text) continue;
  stale++;
  if (check) {
    console.error(
      `${path} is out of date with the code: run \`npm run build && node scripts/docs.mjs\` and commit.`,
    );
  } else writeFileSync(file, next);
}
if (check && stale > 0) process.exit(1);
console.log(
  check ? 'generated doc sections match the code' : `generated doc sections regenerated (${stale} changed)`,
);
