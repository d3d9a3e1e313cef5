import { execFileSync } from 'node:child_process';
import { link, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import {
  collectOutput,
  DEFAULT_COLLECT_LIMITS,
  type OutputFolders,
} from '../../src/runner/collect-output.js';
import { leftOutLine } from '../../src/runner/describe-run.js';
import { parseBoundedJson } from '../../src/runner/parse-bounded-json.js';
import { readRecordedArtifact } from '../../src/runner/read-artifact.js';
import { createCappedBuffer } from '../../src/sandbox/capped-buffer.js';
import { folderIdOf } from '../../src/sandbox/output-folder.js';
import { tempDirs } from '../sandbox/helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** A call folder laid out as the server makes it: `<out>/files`, identified before the "script" writes. */
async function callFolder(): Promise<OutputFolders> {
  const outDir = await dirs.make();
  const filesDir = join(outDir, 'files');
  await mkdir(filesDir);
  return { outDir, filesDir, out: folderIdOf(outDir), files: folderIdOf(filesDir) };
}

const reasons = (o: Awaited<ReturnType<typeof collectOutput>>) =>
  Object.fromEntries(o.leftOut.listed.map((l) => [l.path, l.reason]));

describe('collectOutput', () => {
  it('collects regular files and the JSON result, keeping the bytes of small files', async () => {
    const f = await callFolder();
    await writeFile(join(f.outDir, 'output.json'), '{"ok":true}');
    await mkdir(join(f.filesDir, 'd'));
    await writeFile(join(f.filesDir, 'd', 'a.txt'), 'hello');
    const o = await collectOutput(f, '');
    expect(o.json).toEqual({ ok: true });
    expect(o.source).toBe('output.json');
    expect(o.artifacts.map((a) => [a.path, a.bytes, a.content?.toString()])).toEqual([
      ['d/a.txt', 5, 'hello'],
    ]);
    expect(o.leftOut.total).toBe(0);
  });

  it('never follows a link at any depth, nor reads hard links, FIFOs or sockets', async () => {
    const f = await callFolder();
    const secretDir = await dirs.make();
    await writeFile(join(secretDir, 'id_canary'), 'SECRET');
    await symlink('/', join(f.filesDir, 'root'));
    await symlink(secretDir, join(f.filesDir, 'dirlink'));
    await symlink(join(secretDir, 'id_canary'), join(f.outDir, 'output.json'));
    await writeFile(join(f.filesDir, 'own'), 'x');
    await link(join(f.filesDir, 'own'), join(f.filesDir, 'own2'));
    execFileSync('mkfifo', [join(f.filesDir, 'fifo')]);
    const o = await collectOutput(f, '');
    expect(o.artifacts).toEqual([]);
    expect(o.json).toBeUndefined();
    expect(o.outputError).toBe('output.json was not used: symlink');
    expect(reasons(o)).toEqual({
      'output.json': 'symlink',
      root: 'symlink',
      dirlink: 'symlink',
      own: 'hard link',
      own2: 'hard link',
      fifo: 'not a regular file',
    });
  });

  it('refuses a files folder swapped for a link or another folder after the server made it', async () => {
    const f = await callFolder();
    const other = await dirs.make();
    await writeFile(join(other, 'host.txt'), 'HOST');
    // Moved aside, not deleted: a deleted folder's inode number may be handed to the next new folder, and then the
    // replacement would carry the recorded device and inode (harmless: it is a folder the script made in its own
    // output folder, but not what this test checks).
    await rename(f.filesDir, join(f.outDir, 'original'));
    await symlink(other, f.filesDir);
    expect(reasons(await collectOutput(f, ''))).toEqual({ files: 'symlink' });
    await mkdir(join(f.outDir, 'other'));
    await writeFile(join(f.outDir, 'other', 'x'), 'x');
    await rm(f.filesDir);
    await rename(join(f.outDir, 'other'), f.filesDir);
    const o = await collectOutput(f, '');
    expect(o.artifacts).toEqual([]);
    expect(reasons(o)).toEqual({ files: 'the folder was replaced after the server created it' });
  });

  it('caps entries, files and bytes, and sums up what it left out in one bounded line', async () => {
    const f = await callFolder();
    for (let i = 0; i < 30; i++) await writeFile(join(f.filesDir, `f${String(i).padStart(2, '0')}`), 'abc');
    const limits = { ...DEFAULT_COLLECT_LIMITS, maxArtifacts: 5, maxEntries: 20, maxListed: 3 };
    const o = await collectOutput(f, '', limits);
    expect(o.artifacts).toHaveLength(5);
    expect(o.leftOut.total).toBe(16);
    expect(o.leftOut.counts).toEqual({
      'more than 20 entries (not looked at)': 1,
      'more than 5 files': 15,
    });
    expect(leftOutLine(o.leftOut)).toMatch(/^Left out: .*, and 13 more \(16 in all: /);
    const total = await collectOutput(f, '', { ...DEFAULT_COLLECT_LIMITS, maxTotalBytes: 7 });
    expect(total.artifacts).toHaveLength(2);
  });

  it('refuses a deep, a wide or an oversized output.json as an error that names the cap', async () => {
    const f = await callFolder();
    await writeFile(join(f.outDir, 'output.json'), `${'['.repeat(100)}${']'.repeat(100)}`);
    expect((await collectOutput(f, '')).outputError).toBe(
      'output.json was not used: nested deeper than 64 levels',
    );
    await writeFile(join(f.outDir, 'output.json'), `[${'0,'.repeat(600_000)}0]`);
    expect((await collectOutput(f, '')).outputError).toBe(
      'output.json was not used: more than 500000 JSON values',
    );
    const small = { ...DEFAULT_COLLECT_LIMITS, maxOutputJsonBytes: 4 };
    expect((await collectOutput(f, '', small)).outputError).toBe(
      'output.json was not used: larger than 4 bytes',
    );
    expect(parseBoundedJson('{"a":[1,{"b":2}]}')).toEqual({ ok: true, json: { a: [1, { b: 2 }] } });
    // Brackets and commas inside strings are text, not structure.
    const tight = { maxDepth: 2, maxValues: 4 };
    expect(parseBoundedJson('{"a":"[[[,,,,\\"[[["}', tight)).toEqual({
      ok: true,
      json: { a: '[[[,,,,"[[[' },
    });
    expect(parseBoundedJson('[[[]]]', tight)).toEqual({ ok: false, reason: 'nested deeper than 2 levels' });
    expect(parseBoundedJson('[1,2,3,4,5]', tight)).toEqual({ ok: false, reason: 'more than 4 JSON values' });
  });

  it('leaves out a file whose name the audit log cannot hold, recording a digest of the name', async () => {
    const f = await callFolder();
    await writeFile(join(f.filesDir, 'a\\..\\b.txt'), 'x');
    const o = await collectOutput(f, '');
    expect(o.artifacts).toEqual([]);
    expect(o.refusedNames).toHaveLength(1);
    expect(o.leftOut.listed[0]?.reason).toBe('name not allowed');
  });
});

describe('readRecordedArtifact', () => {
  it('serves a collected file only while it still has the recorded digest, never through a link', async () => {
    const f = await callFolder();
    await mkdir(join(f.filesDir, 'd'));
    await writeFile(join(f.filesDir, 'd', 'a.txt'), 'hello');
    const [a] = (await collectOutput(f, '')).artifacts;
    const rec = { path: 'd/a.txt', sha256: a!.sha256, bytes: a!.bytes, folders: f };
    expect(readRecordedArtifact(rec, 1024).toString()).toBe('hello');
    await writeFile(join(f.filesDir, 'd', 'a.txt'), 'HELLO');
    expect(() => readRecordedArtifact(rec, 1024)).toThrow(/content changed/);
    const secretDir = await dirs.make();
    await writeFile(join(secretDir, 'a.txt'), 'hello');
    await rename(join(f.filesDir, 'd'), join(f.filesDir, 'gone'));
    await symlink(secretDir, join(f.filesDir, 'd'));
    const err = (() => {
      try {
        return readRecordedArtifact(rec, 1024);
      } catch (e) {
        return e;
      }
    })();
    expect(isSkillsError(err) && err.message).toMatch(/symlink/);
  });
});

describe('createCappedBuffer', () => {
  it('keeps the cap, counts the rest, and marks the truncation', () => {
    const b = createCappedBuffer(5);
    b.push(Buffer.from('abc'));
    b.push(Buffer.from('defgh'));
    expect(b.total).toBe(8);
    expect(b.truncated).toBe(true);
    expect(b.result().toString()).toBe('abcde\n[skills-mcp: output truncated, 3 more bytes dropped]\n');
  });
});
