// The minimal reference for a skill load: an SDK v2 server that answers with the SKILL.md text alone, as skilljack
// does. One tool per skill up to 30 skills (name, description, empty input), else a single load_skill {skill} tool;
// each call reads the skill's SKILL.md from disk. Used by skill-load.bench.mjs; not part of the product.
// Usage: node bench/reference-skill-server.mjs <skills folder>
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const root = process.argv[2];
const PER_SKILL_LIMIT = 30;
const skills = readdirSync(root).map((name) => {
  const head = readFileSync(join(root, name, 'SKILL.md'), 'utf8').slice(0, 2048);
  const description = /^description:\s*"?(.*?)"?\s*$/m.exec(head)?.[1] ?? name;
  return { name, description };
});
const byName = new Map(skills.map((s) => [s.name, s]));
const load = (name) => {
  const skill = byName.get(name);
  if (skill === undefined) return { content: [{ type: 'text', text: `no skill "${name}"` }], isError: true };
  return { content: [{ type: 'text', text: readFileSync(join(root, name, 'SKILL.md'), 'utf8') }] };
};

const build = () => {
  const server = new McpServer({ name: 'reference-skills', version: '1.0.0' });
  if (skills.length <= PER_SKILL_LIMIT) {
    for (const s of skills)
      server.registerTool(s.name, { description: s.description, inputSchema: z.object({}) }, () =>
        load(s.name),
      );
  } else {
    server.registerTool(
      'load_skill',
      { description: 'Load a skill by name.', inputSchema: z.object({ skill: z.string() }) },
      ({ skill }) => load(skill),
    );
  }
  return server;
};
const handle = serveStdio(build);
const stop = () => void handle.close().finally(() => process.exit(0));
process.stdin.once('end', stop);
process.stdin.once('close', stop);
process.once('SIGTERM', stop);
