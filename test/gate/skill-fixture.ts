import { mkdtemp, mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Skill, SkillFile, SkillRequests } from '../../src/skills/types.js';

/** Writes a skill folder to a fresh temp dir and returns a Skill over it (files listed from disk). */
export async function writeSkill(
  files: Record<string, string | Uint8Array | { content: string | Uint8Array; mode: number }>,
  extra: { entryPoint?: string; requests?: Partial<SkillRequests> } = {},
): Promise<{ skill: Skill; cleanup: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'gate-'));
  const dir = path.join(root, 'demo');
  for (const [rel, spec] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    const { content, mode } =
      typeof spec === 'string' || spec instanceof Uint8Array ? { content: spec, mode: 0o644 } : spec;
    await writeFile(abs, content, { mode });
  }
  const skill: Skill = {
    name: 'demo',
    toolName: 'demo',
    description: 'A demo skill.',
    dir,
    root,
    skillFile: 'SKILL.md',
    skillFileSha256: '',
    bodyLine: 1,
    frontmatter: {},
    kind: extra.entryPoint === undefined ? 'instruction' : 'executable',
    ...(extra.entryPoint === undefined ? {} : { entryPoint: extra.entryPoint }),
    allowedTools: [],
    requests: { network: false, workspace: 'read', env: [], ...extra.requests },
    files: await listFiles(dir),
    warnings: [],
  };
  return { skill, cleanup: () => rm(root, { recursive: true, force: true }) };
}

async function listFiles(dir: string): Promise<SkillFile[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: SkillFile[] = [];
  for (const e of entries) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath, e.name);
    const st = await stat(abs);
    files.push({
      path: path.relative(dir, abs).split(path.sep).join('/'),
      size: st.size,
      mode: st.mode & 0o777,
    });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : 1));
}
