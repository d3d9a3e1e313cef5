import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatedServers } from '../helpers/gated-server.js';
import { textOf } from '../helpers/text-of.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'real-skills', 'docx-roundtrip');
const DOC = join(import.meta.dirname, '..', '..', 'docs', 'writing-skills.md');

/** A minimal Word document: the three parts Word needs, one paragraph of text. */
const MAKE_DOCX = `import sys, zipfile
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
    z.writestr("_rels/.rels", '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
    z.writestr("word/document.xml", f'<?xml version="1.0"?><w:document xmlns:w="{W}"><w:body><w:p><w:r><w:t>Draft for review: the Q3 numbers.</w:t></w:r></w:p></w:body></w:document>')
`;

/** The walk-through section of docs/writing-skills.md, from its heading to the next heading of its level or above. */
function walkThrough(): string {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('### Walk-through: edit a .docx in three calls');
  expect(start, 'docs/writing-skills.md has the walk-through section').toBeGreaterThan(-1);
  const end = text.slice(start + 1).search(/\n#{1,3} /);
  return text.slice(start, end === -1 ? undefined : start + 1 + end);
}

describe('the docs walk-through: unpack, edit, pack a .docx (built binary, real sandbox, real client)', () => {
  const start = gatedServers();

  it('runs as written, and the doc quotes what the client received', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\n', {
      era: 'legacy',
      setup: (f) => {
        cpSync(FIXTURE, join(f.skills, 'docx-roundtrip'), { recursive: true });
        mkdirSync(join(f.dir, 'docs'));
        execFileSync('python3', ['-c', MAKE_DOCX, join(f.dir, 'docs', 'report.docx')]);
      },
      args: (f) => ['--workspace', join(f.dir, 'docs')],
    });
    const forms: string[] = [];
    c.client.setRequestHandler('elicitation/create', (req) => {
      forms.push((req.params as { message: string }).message);
      return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
    });
    const call = (script: string, args: string[]) =>
      c.client.callTool({
        name: 'run_skill_script',
        arguments: { skill: 'docx-roundtrip', script, args },
      });

    const unpack = await call('scripts/unpack.py', ['report.docx']);
    const replace = await call('scripts/replace.py', ['Draft for review', 'Final']);
    const pack = await call('scripts/pack.py', ['report-final.docx']);
    for (const r of [unpack, replace, pack]) expect(r.isError, textOf(r)).toBeFalsy();

    const said = [textOf(unpack), textOf(replace), textOf(pack)];
    expect(said[0]).toContain('unpacked 3 parts of report.docx into the session folder');
    expect(said[1]).toContain("replaced 1 occurrence(s) of 'Draft for review' with 'Final'");
    expect(said[2]).toContain('packed 3 parts into report-final.docx');

    // The packed document comes back as a resource the client reads; the edit is in it; the user's file is not
    // changed.
    const link = (pack.content as { type: string; uri?: string; name?: string }[]).find(
      (p) => p.type === 'resource_link' && p.uri?.endsWith('report-final.docx'),
    );
    expect(link, JSON.stringify(pack.content)).toBeDefined();
    const read = await c.client.readResource({ uri: link!.uri! });
    const got = join(fx.dir, 'got.docx');
    writeFileSync(got, Buffer.from((read.contents[0] as { blob: string }).blob, 'base64'));
    const xmlOf = (file: string) =>
      execFileSync('python3', [
        '-c',
        'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("word/document.xml").decode())',
        file,
      ]).toString();
    expect(xmlOf(got)).toContain('Final: the Q3 numbers.');
    expect(xmlOf(join(fx.dir, 'docs', 'report.docx'))).toContain('Draft for review: the Q3 numbers.');

    // Each call asked, and each form named the session folder and the workspace it reads.
    expect(forms).toHaveLength(3);
    for (const form of forms) {
      expect(form).toContain('this run can read and change the session folder');
      expect(form).toContain(join(fx.dir, 'docs'));
    }

    // The doc quotes these lines as the client saw them.
    const section = walkThrough();
    for (const line of [
      'unpacked 3 parts of report.docx into the session folder',
      "replaced 1 occurrence(s) of 'Draft for review' with 'Final'",
      'packed 3 parts into report-final.docx',
      'this run can read and change the session folder',
      'Command: python3 scripts/replace.py "Draft for review" Final',
    ])
      expect(section).toContain(line);
    expect(said[2]).toContain('Files: report-final.docx (');
    expect(section).toContain('Files: report-final.docx (');
  });
});
