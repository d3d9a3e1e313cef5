import * as z from 'zod';

export const SkillDepsSchema = z
  .strictObject({
    python: z
      .array(z.string().min(1).max(200))
      .max(200)
      .optional()
      .describe('Python requirements (PEP 508), e.g. [pypdf, "pillow>=10"].'),
    node: z
      .array(z.string().min(1).max(200))
      .max(200)
      .optional()
      .describe('npm packages, optionally with a version: [left-pad, "marked@12"].'),
  })
  .describe('Packages for one skill, added to what the skill itself declares.');

/** `dependencies:` in skills-mcp.yaml: how skill environments are provisioned. */
export const DependenciesConfigSchema = z.strictObject({
  install: z
    .enum(['ask', 'never'])
    .default('ask')
    .describe(
      'ask: a call whose environment is missing shows the install plan in its approval and installs once approved. never: such a call is refused with the `skills-mcp deps install …` command to run.',
    ),
  allow_source: z
    .boolean()
    .default(false)
    .describe(
      'Allow building Python sdists (setup.py runs, inside the install sandbox) and npm install scripts. Default: binary wheels only, npm scripts ignored.',
    ),
  max_size_mib: z
    .number()
    .int()
    .min(1)
    .max(1_048_576)
    .default(4096)
    .describe(
      'Largest an environment may grow while it is built, in MiB: an install past it is stopped and nothing of it is kept.',
    ),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(3_600)
    .default(600)
    .describe('Longest an install may run, in seconds: a longer one is stopped and nothing of it is kept.'),
  dir: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Where built environments are kept (envs/<hash>/). Default: the audit database folder + /envs.',
    ),
  python: z
    .string()
    .min(2)
    .max(4096)
    .refine((p) => p.startsWith('/'), 'must be an absolute path, e.g. /usr/bin/python3.11')
    .optional()
    .describe(
      "The Python interpreter (absolute path, Python 3.8 or newer) that builds skill environments and runs Python scripts, with or without an environment; a virtual environment's python works too. Default: the first python3 on the server's PATH. Checked at start: missing, not executable or too old stops the server with exit 2.",
    ),
  use_host_packages: z
    .boolean()
    .default(false)
    .describe(
      "When a skill declares Python packages and the interpreter already has every one installed at a version that satisfies it (checked by the interpreter itself), run the skill with the interpreter's own packages and build no environment. Otherwise (or false, the default) the environment is built as usual. `skills-mcp deps list` says which each skill uses.",
    ),
  skills: z
    .record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), SkillDepsSchema)
    .default({})
    .describe(
      'Per-skill packages for skills that declare none (or too few): { pdf: { python: [pypdf, pdfplumber] } }.',
    ),
});

export type DependenciesConfig = z.infer<typeof DependenciesConfigSchema>;
