import * as z from 'zod';

/** Agent Skills spec name: 1–64 chars, lowercase letters, digits and single hyphens, no leading/trailing hyphen. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * SKILL.md frontmatter: the Agent Skills spec fields plus the extensions skills-mcp reads. Loading is lenient
 * (soft violations load with a warning); `skills-mcp lint` reports every violation of this schema.
 * The README's authoring table is generated from these descriptions.
 */
export const FrontmatterSchema = z.looseObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(SKILL_NAME_PATTERN)
    .describe('Required. 1–64 chars of a-z, 0-9 and single hyphens; should equal the folder name.'),
  description: z
    .string()
    .min(1)
    .max(1024)
    .describe('Required. 1–1024 chars: what the skill does and when to use it. Shown to the model.'),
  license: z.string().optional().describe('License name or the path of a bundled license file.'),
  compatibility: z
    .string()
    .max(500)
    .optional()
    .describe('Environment needs (≤ 500 chars), e.g. "python3 ≥ 3.10".'),
  metadata: z.record(z.string(), z.string()).optional().describe('Free-form string → string map.'),
  'allowed-tools': z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('Tools the skill may use: a space-separated string (spec) or a YAML list.'),
  entry_point: z
    .string()
    .optional()
    .describe('Extension. Script run when the skill is called as a function, relative to the skill folder.'),
  input_schema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Extension. JSON Schema (type: object) of the input of an executable skill.'),
  lang: z
    .string()
    .optional()
    .describe('Extension. Language of the entry point (informative; the extension decides).'),
  timeout: z
    .union([z.number().positive(), z.string().regex(/^\d+(ms|s)?$/)])
    .optional()
    .describe(
      'Extension. Wall-clock limit: seconds as a number, or "500ms" / "30s". Can only tighten the profile.',
    ),
  network: z
    .union([z.boolean(), z.enum(['none', 'full'])])
    .optional()
    .describe('Extension. true or "full" asks for network access (raises the risk; needs approval).'),
  sandbox: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .optional()
    .describe('Extension. Sandbox profile the skill asks for; stricter than the operator default only.'),
  workspace: z
    .enum(['none', 'read', 'write'])
    .optional()
    .describe('Extension. Access to the configured workspace; "write" raises the risk (needs approval).'),
  env: z
    .union([z.string(), z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/))])
    .optional()
    .describe(
      'Extension. Names of environment variables the skill needs (the operator allow-list still applies).',
    ),
  version: z
    .union([z.string(), z.number()])
    .optional()
    .describe('Extension. The skill version (informative).'),
});

export type Frontmatter = z.infer<typeof FrontmatterSchema>;

/** Field names the schema knows; anything else is kept and reported by lint as `unknown-field`. */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set(Object.keys(FrontmatterSchema.shape));
