import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeEmptyCallFolder } from '../../src/runner/tidy-call-folder.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('removeEmptyCallFolder', () => {
  let t: ReturnType<typeof tempDir>;
  afterEach(() => t.cleanup());
  const callFolder = () => {
    t = tempDir();
    const out = join(t.dir, 'runs', 'skills-mcp-out-1');
    mkdirSync(join(out, 'files'), { recursive: true });
    return out;
  };

  it('removes a call folder whose files folder is empty', () => {
    const out = callFolder();
    expect(removeEmptyCallFolder(out)).toBe(true);
    expect(readdirSync(join(t.dir, 'runs'))).toEqual([]);
  });

  it('keeps a call folder that holds a file, or a kept input beside files/', () => {
    const out = callFolder();
    writeFileSync(join(out, 'files', 'a.txt'), 'a');
    expect(removeEmptyCallFolder(out)).toBe(false);
    expect(readdirSync(join(out, 'files'))).toEqual(['a.txt']);

    const kept = join(t.dir, 'runs', 'skills-mcp-out-2');
    mkdirSync(join(kept, 'files'), { recursive: true });
    writeFileSync(join(kept, 'input.json'), '{}');
    expect(removeEmptyCallFolder(kept)).toBe(false);
    expect(readdirSync(kept)).toEqual(['input.json']);
  });

  it('never follows a files link the script made to an empty folder elsewhere', () => {
    const out = callFolder();
    const canary = join(t.dir, 'canary');
    mkdirSync(canary);
    // What a script could do inside its folder: replace files/ with a link.
    const files = join(out, 'files');
    rmdirSync(files);
    symlinkSync(canary, files);
    expect(removeEmptyCallFolder(out)).toBe(false);
    expect(existsSync(canary)).toBe(true);
    expect(lstatSync(files).isSymbolicLink()).toBe(true);
  });
});
