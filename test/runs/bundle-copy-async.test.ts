import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashBundle } from '../../src/skills/bundle-hash.js';
import { removeSealedTree } from '../../src/skills/remove-sealed-tree.js';
import { startInProcess } from '../helpers/in-process-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const FILES = 5000;
const t = tempDir();
afterAll(() => removeSealedTree(t.dir));

/** A skill at the file limit: SKILL.md, its script and 4,998 small modules in 50 folders. */
function bigSkill(skills: string): string {
  const dir = join(skills, 'big');
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    '---\nname: big\ndescription: A skill with many files. Use in tests.\nentry_point: scripts/main.py\n---\n\nBig.\n',
  );
  writeFileSync(join(dir, 'scripts', 'main.py'), 'import json\nprint(json.dumps({"ran": True}))\n');
  for (let i = 0; i < FILES - 2; i++) {
    const d = join(dir, 'scripts', `d${i % 50}`);
    if (i < 50) mkdirSync(d);
    writeFileSync(join(d, `m${i}.py`), `VALUE = ${i}\n`);
  }
  return dir;
}

describe('the first copy of a bundle does not hold up other sessions (in-process server, real sandbox)', () => {
  it('answers another session’s read-only call while a 5,000-file skill is being copied', async () => {
    const skills = join(t.dir, 'skills');
    const bundles = join(t.dir, 'bundles');
    const big = bigSkill(skills);
    const { sha256 } = hashBundle(big);
    const server = startInProcess({ skills: [skills], root: t.dir });
    const a = await server.connect('copying');
    const b = await server.connect('reading');
    try {
      const order: string[] = [];
      const call = a.callTool({ name: 'big', arguments: {} }).then((r) => {
        order.push('big answered');
        return r;
      });
      // Wait (turn by turn, no clock) until the copy is under way: its temporary folder exists.
      const copying = () => {
        try {
          return readdirSync(bundles).some((n) => n.startsWith('.tmp-'));
        } catch {
          return false;
        }
      };
      // A copy made in one synchronous block is never seen under way: it is just there.
      const copied = () => existsSync(join(bundles, sha256));
      while (!copying() && !copied()) await new Promise((r) => setImmediate(r));
      order.push(copied() ? 'copy made before any other work' : 'copy under way');
      const listed = await b.listTools();
      order.push(copied() ? 'listed after the copy' : 'listed during the copy');
      expect(listed.tools.map((x) => x.name)).toContain('big');
      const result = await call;
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toEqual({ ran: true });
      expect(order).toEqual(['copy under way', 'listed during the copy', 'big answered']);
      // The copy is complete and in place; nothing half-made is left.
      expect(readdirSync(bundles).filter((n) => !n.startsWith('.holds'))).toEqual([sha256]);
    } finally {
      await server.close();
    }
  });
});
