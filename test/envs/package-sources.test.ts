import { copyFileSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdist, buildWheel } from '../helpers/build-packages.js';
import { runCli } from '../helpers/run-cli.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const FIXTURES = join(repoRoot, 'test', 'fixtures', 'real-skills');

/** A PEP 503 simple index at `<root>/simple` whose project pages link to `<root>/files/<dist>` by relative URL. */
function simpleIndex(root: string, dists: readonly string[]): string {
  const files = join(root, 'files');
  mkdirSync(files, { recursive: true });
  const byProject = new Map<string, string[]>();
  for (const d of dists) {
    copyFileSync(d, join(files, basename(d)));
    const project = basename(d).split('-')[0]!.toLowerCase();
    byProject.set(project, [...(byProject.get(project) ?? []), basename(d)]);
  }
  const page = (links: string[]) =>
    `<!DOCTYPE html><html><body>\n${links.map((l) => `<a href="${l}">${basename(l)}</a><br/>`).join('\n')}\n</body></html>\n`;
  mkdirSync(join(root, 'simple'), { recursive: true });
  writeFileSync(join(root, 'simple', 'index.html'), page([...byProject.keys()].map((p) => `${p}/`)));
  for (const [project, names] of byProject) {
    mkdirSync(join(root, 'simple', project));
    writeFileSync(join(root, 'simple', project, 'index.html'), page(names.map((n) => `../../files/${n}`)));
  }
  return join(root, 'simple');
}

const skillWith = (skills: string, name: string, requirements: string) => {
  mkdirSync(join(skills, name, 'scripts'), { recursive: true });
  writeFileSync(
    join(skills, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Declares packages. Use in tests.\n---\n\nx\n`,
  );
  writeFileSync(join(skills, name, 'requirements.txt'), requirements);
};

/** Each CLI run may take this long on a busy machine (pip in the sandbox). */
const SLOW = 120_000;

describe(
  'installs from the operator’s package sources (built binary, real pip in the install sandbox)',
  { timeout: 4 * SLOW },
  () => {
    const t = tempDir();
    const skills = join(t.dir, 'skills');
    const audit = join(t.dir, 'state', 'audit.db');
    const build = join(t.dir, 'build');
    let index = '';
    let closed: Server;
    let closedPort = 0;
    const pip = (more: Record<string, string>) => ({
      PIP_CONFIG_FILE: '/dev/null',
      PIP_RETRIES: '0',
      ...more,
    });
    const deps = (env: Record<string, string>, ...args: string[]) =>
      runCli(['deps', ...args, '--skills', skills, '--audit', audit], { env, timeoutMs: SLOW });

    beforeAll(async () => {
      cpSync(join(FIXTURES, 'req-skill'), join(skills, 'req-skill'), { recursive: true });
      const wheel = buildWheel(build, 'tinypkg', '1.0', 'VALUE = "tinypkg 1.0"\n');
      const sdist = buildSdist(build, 'sdistonly', '1.0', 'raise SystemExit("setup.py must not run")\n');
      index = simpleIndex(join(t.dir, 'mirror'), [wheel, sdist]);
      skillWith(skills, 'sdist-skill', 'tinypkg==1.0\nsdistonly==1.0\n');
      skillWith(skills, 'typo-skill', 'tinypgk==1.0\n');
      skillWith(skills, 'pin-skill', 'tinypkg==9.9\n');
      skillWith(skills, 'net-skill', 'tinypkg>=1.0\n');
      // A loopback port that was open and is now closed: nothing listens there.
      closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const a = closed.address();
      closedPort = typeof a === 'object' && a !== null ? a.port : 0;
      await new Promise<void>((r) => closed.close(() => r()));
    });
    afterAll(() => t.cleanup());

    it('installs from a local file:// simple index whose pages link to ../../files/, and the script imports it', () => {
      const env = pip({ PIP_INDEX_URL: pathToFileURL(index).href });
      const r = deps(env, 'install', 'req-skill');
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(
        `from index-url ${index} (links into ${join(t.dir, 'mirror')}, mounted read-only)`,
      );
      expect(r.stdout).toMatch(/req-skill: installed tinypkg==1\.0/);
      const cfg = join(t.dir, 'allow.yaml');
      writeFileSync(cfg, 'approval:\n  mode: allow\n  fallback: rules-only\n');
      const run = runCli(
        ['run', 'req-skill', 'scripts/use.py', '--skills', skills, '--audit', audit, '--config', cfg],
        { env, timeoutMs: SLOW },
      );
      expect(run.stdout).toContain('"value": "tinypkg 1.0"');
      expect(run.code).toBe(0);
    });

    it('names the one source-only package that failed the environment, first, and how to allow or replace it', () => {
      const r = deps(pip({ PIP_INDEX_URL: pathToFileURL(index).href }), 'install', 'sdist-skill');
      expect(r.code).toBe(1);
      const first = r.stderr.split('\n')[0]!;
      expect(first).toContain('sdistonly==1.0 is available only as source (sdist)');
      expect(r.stderr).toContain('dependencies.allow_source: true');
      expect(r.stderr).toContain('One package that cannot be installed fails the whole environment');
      expect(r.stderr).not.toContain('setup.py must not run');
    });

    it('says a package is not on the index, without blaming binary-only installs', () => {
      const r = deps(pip({ PIP_INDEX_URL: pathToFileURL(index).href }), 'install', 'typo-skill');
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toContain(
        `tinypgk was not found on the package index (index-url ${index}`,
      );
      expect(r.stderr).toContain('Check the name');
      expect(r.stderr).not.toMatch(/Only binary wheels|allow_source/);
    });

    it('says which versions the index has when none matches the pin', () => {
      const r = deps(pip({ PIP_INDEX_URL: pathToFileURL(index).href }), 'install', 'pin-skill');
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toContain(
        'no version of tinypkg matches tinypkg==9.9 (the index has 1.0)',
      );
      expect(r.stderr).not.toMatch(/Only binary wheels|allow_source/);
    });

    it('never mounts the folder an index links into when it holds the audit log and its anchor key', () => {
      // The operator keeps the environments elsewhere and the index beside the server's state: the folder the
      // index's links resolve into is the state folder, which must stay out of the install sandbox (it has network).
      const site = join(t.dir, 'site');
      const siteIndex = simpleIndex(site, [
        buildWheel(join(t.dir, 'build2'), 'tinypkg', '1.0', 'VALUE = 1\n'),
      ]);
      const canary = 'ca11ab1e'.repeat(8);
      writeFileSync(join(site, 'audit-anchor.key'), `${canary}\n`, { mode: 0o600 });
      const cfg = join(t.dir, 'envs-elsewhere.yaml');
      writeFileSync(cfg, `dependencies:\n  dir: ${join(t.dir, 'envs-elsewhere')}\n`);
      const r = runCli(
        [
          'deps',
          'install',
          'req-skill',
          '--skills',
          skills,
          '--audit',
          join(site, 'audit.db'),
          '--config',
          cfg,
        ],
        { env: pip({ PIP_INDEX_URL: pathToFileURL(siteIndex).href }), timeoutMs: SLOW },
      );
      expect({ out: r.stdout, err: r.stderr }).toMatchObject({
        out: expect.stringContaining(
          `from index-url ${siteIndex} (links into ${site}, not mounted: it is or holds`,
        ),
      });
      expect(r.stdout).not.toContain('mounted read-only');
      expect(r.stdout + r.stderr).not.toContain(canary);
    });

    it('names an index that cannot be reached, its URL and the pip setting that names it', () => {
      const url = `http://127.0.0.1:${closedPort}/simple`;
      const r = deps(pip({ PIP_INDEX_URL: url }), 'install', 'net-skill');
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toContain(
        `the package index ${url} could not be reached (Connection refused) while looking for tinypkg>=1.0`,
      );
      expect(r.stderr).toContain("pip's `index-url` (`pip config list`, PIP_INDEX_URL)");
      expect(r.stderr).not.toMatch(/Only binary wheels|allow_source/);
    });
  },
);
