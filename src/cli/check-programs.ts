import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isSkillsError } from '../errors.js';
import { profileLimits, type Profile, type Sandbox } from '../sandbox/index.js';

/** A program skills commonly call, how to start it briefly, and what fixes it when it does not start inside. */
interface Program {
  name: string;
  /** Debian package that provides it. */
  debian: string;
  args: string[];
  fix: string;
}

const EXTRA = 'add the folders it reads outside /usr to `sandbox.read_only_paths` in skills-mcp.yaml';

const PROGRAMS: Program[] = [
  {
    name: 'soffice',
    debian: 'libreoffice-writer-nogui',
    args: ['--headless', '--version'],
    fix: `LibreOffice needs /etc/libreoffice and /etc/fonts (mounted when present) and a writable HOME (/tmp inside); if it is installed outside /usr, ${EXTRA}`,
  },
  {
    name: 'fc-list',
    debian: 'fontconfig',
    args: [':', 'family'],
    fix: `fontconfig reads /etc/fonts (mounted when present); for fonts outside /usr/share/fonts, ${EXTRA}`,
  },
  {
    name: 'gs',
    debian: 'ghostscript',
    args: ['--version'],
    fix: `Ghostscript reads /etc/ghostscript and /etc/papersize (mounted when present); ${EXTRA}`,
  },
  {
    name: 'pdftoppm',
    debian: 'poppler-utils',
    args: ['-v'],
    fix: `poppler reads /usr/share/poppler and fontconfig; ${EXTRA}`,
  },
  { name: 'git', debian: 'git', args: ['--version'], fix: `git reads nothing outside /usr here; ${EXTRA}` },
  {
    name: 'convert',
    debian: 'imagemagick',
    args: ['-version'],
    fix: `ImageMagick reads /etc/ImageMagick-6 or -7 (mounted when present); ${EXTRA}`,
  },
];

/** Folders the sandbox's PATH searches that are visible inside (all below /usr). */
const BIN_DIRS = ['/usr/local/bin', '/usr/bin'];

export interface ProgramReport {
  name: string;
  /** Host path, when installed where the sandbox finds it. */
  path?: string;
  installed: boolean;
  runsInSandbox: boolean;
  error?: string;
  fix?: string;
}

/**
 * Which programs skills commonly call are installed, and whether each starts inside the sandbox with `profile`'s
 * limits (a tiny real invocation, such as `soffice --headless --version`), with the fix for those that do not.
 */
export async function checkPrograms(sb: Sandbox, profile: Profile): Promise<ProgramReport[]> {
  const out: ProgramReport[] = [];
  for (const p of PROGRAMS) {
    const path = BIN_DIRS.map((d) => join(d, p.name)).find((f) => existsSync(f));
    if (path === undefined) {
      out.push({
        name: p.name,
        installed: false,
        runsInSandbox: false,
        fix: `not installed on the host; skills that call it need it: apt-get install ${p.debian}`,
      });
      continue;
    }
    const r: ProgramReport = { name: p.name, path, installed: true, runsInSandbox: false };
    try {
      const res = await sb.run({
        argv: [path, ...p.args],
        cwd: '/tmp',
        env: {},
        readOnlyPaths: [...profile.readOnlyPaths],
        writablePaths: [],
        network: 'none',
        profile: profile.name,
        limits: { ...profileLimits(profile), wallTimeMs: 30_000 },
      });
      r.runsInSandbox = res.exitCode === 0;
      if (!r.runsInSandbox) {
        const tail = res.stderr.toString('utf8').trim().split('\n').slice(-2).join(' ');
        r.error = tail || `exit code ${res.exitCode ?? `null (signal ${res.signal ?? '?'})`}`;
      }
    } catch (e) {
      r.error = isSkillsError(e) ? e.message : e instanceof Error ? e.message : String(e);
    }
    out.push(r.runsInSandbox ? r : { ...r, fix: p.fix });
  }
  return out;
}
