import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/create-sandbox.js';
import { defaultProfilesDir, loadProfile } from '../../src/sandbox/load-profile.js';
import { profileLimits } from '../../src/sandbox/profile-schema.js';
import { newSandbox, plan, tempDirs, text } from './helpers.js';

/** A one-paragraph flat ODT: a text file LibreOffice opens like a .odt. */
const FODT = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"
  office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text><text:p>Hello from the sandbox</text:p></office:text></office:body>
</office:document>
`;

const has = (p: string) => existsSync(p);
const hasSoffice = has('/usr/bin/soffice');

const dirs = tempDirs();
let sb: Sandbox;
let out: string;

beforeAll(async () => {
  sb = newSandbox();
  out = await sb.createOutputDir(await dirs.make('skills-mcp-programs-'));
});
afterAll(async () => {
  await sb.dispose();
  await dirs.cleanup();
});

describe('programs skills call, inside the sandbox with the default layout', () => {
  // Installed by `node scripts/setup.mjs test` (libreoffice-writer-nogui); skipped where it is not.
  it.skipIf(!hasSoffice)(
    'converts a flat ODT to PDF with soffice --headless, then renders it with pdftoppm',
    async () => {
      await writeFile(join(out, 'doc.fodt'), FODT, { mode: 0o644 });
      const r = await sb.run(
        plan({
          argv: ['soffice', '--headless', '--convert-to', 'pdf', '--outdir', out, join(out, 'doc.fodt')],
          cwd: out,
          writablePaths: [out],
          // The default profile's limits, HOME and /tmp: nothing the skill has to set up.
          limits: profileLimits(await loadProfile(defaultProfilesDir(), 'default')),
        }),
      );
      expect(text(r.stderr)).not.toContain('RuntimeException');
      expect(r.exitCode).toBe(0);
      expect((await readFile(join(out, 'doc.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');
      if (!has('/usr/bin/pdftoppm')) return;
      const png = await sb.run(
        plan({
          argv: [
            'pdftoppm',
            '-png',
            '-r',
            '20',
            '-f',
            '1',
            '-l',
            '1',
            join(out, 'doc.pdf'),
            join(out, 'page'),
          ],
          cwd: out,
          writablePaths: [out],
        }),
      );
      expect(text(png.stderr)).toBe('');
      expect((await stat(join(out, 'page-1.png'))).size).toBeGreaterThan(0);
    },
    90_000,
  );

  it('finds the host fonts with fc-list', async () => {
    const r = await sb.run(plan({ argv: ['fc-list', ':', 'family'], cwd: '/tmp' }));
    expect(text(r.stderr)).toBe('');
    expect(r.exitCode).toBe(0);
    expect(text(r.stdout).trim()).not.toBe('');
  });

  it.skipIf(!has('/usr/bin/gs'))('starts Ghostscript with its own configuration', async () => {
    const r = await sb.run(
      plan({ argv: ['gs', '-q', '-dNOPAUSE', '-dBATCH', '-sDEVICE=nullpage', '-c', 'quit'], cwd: '/tmp' }),
    );
    expect(text(r.stderr)).toBe('');
    expect(r.exitCode).toBe(0);
  });
});
