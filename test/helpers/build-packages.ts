import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * Packages built by the test itself, so installs never touch a registry: a wheel written by hand (zipfile), an sdist
 * (tarfile), and `npm pack` of a local folder.
 */
const WHEEL = `
import base64, hashlib, json, sys, zipfile
out, name, version, module_src, blob = sys.argv[1:6]
extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
dist = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": module_src,
    **{f"{name}/{k}": v for k, v in extra.items()},
    **({f"{name}/blob.bin": "\\0" * int(blob)} if int(blob) > 0 else {}),
    f"{dist}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    f"{dist}/WHEEL": "Wheel-Version: 1.0\\nGenerator: skills-mcp-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
path = f"{out}/{name}-{version}-py3-none-any.whl"
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    for n, text in files.items():
        data = text.encode()
        z.writestr(n, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{n},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    z.writestr(f"{dist}/RECORD", "\\n".join(record) + "\\n")
print(path)
`;

const SDIST = `
import io, sys, tarfile
out, name, version, setup_py = sys.argv[1:5]
base = f"{name}-{version}"
files = {
    "PKG-INFO": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    "setup.py": setup_py,
}
path = f"{out}/{base}.tar.gz"
with tarfile.open(path, "w:gz") as t:
    for n, text in files.items():
        data = text.encode()
        info = tarfile.TarInfo(f"{base}/{n}")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
print(path)
`;

/**
 * A pure-Python wheel; `blobBytes` adds a data file of that many zero bytes (small zipped, large installed);
 * `moreFiles` adds files to the package folder (`{'annotations.py': '…'}`).
 */
export function buildWheel(
  outDir: string,
  name: string,
  version: string,
  moduleSource: string,
  blobBytes = 0,
  moreFiles: Record<string, string> = {},
): string {
  mkdirSync(outDir, { recursive: true });
  return execFileSync(
    'python3',
    ['-c', WHEEL, outDir, name, version, moduleSource, String(blobBytes), JSON.stringify(moreFiles)],
    { encoding: 'utf8' },
  ).trim();
}

export function buildSdist(outDir: string, name: string, version: string, setupPy: string): string {
  mkdirSync(outDir, { recursive: true });
  return execFileSync('python3', ['-c', SDIST, outDir, name, version, setupPy], { encoding: 'utf8' }).trim();
}

/** `npm pack` of a local folder into `outDir` (no registry involved); returns the tarball path. */
export function npmPack(srcDir: string, outDir: string): string {
  mkdirSync(outDir, { recursive: true });
  execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], {
    cwd: srcDir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: outDir, npm_config_update_notifier: 'false' },
  });
  const tgz = readdirSync(outDir).find((f) => f.endsWith('.tgz'));
  if (tgz === undefined) throw new Error('npm pack produced no tarball');
  return join(outDir, tgz);
}

/** Server environment that makes pip use only `findLinks` (the operator's pip configuration, as the server sees it). */
export const offlinePip = (findLinks: string): Record<string, string> => ({
  PIP_CONFIG_FILE: '/dev/null',
  PIP_NO_INDEX: '1',
  PIP_FIND_LINKS: findLinks,
});

/** One entry of a hand-written tar: a header as given (type, magic, prefix) and its data. */
export interface TarEntry {
  name: string;
  data: string;
  /** Type flag: '0' a file (default), '7' a contiguous file, 'x' a pax header, … */
  type?: string;
  /** `ustar\0` + `00` (POSIX, default) or `ustar  \0` (GNU). */
  magic?: string;
  prefix?: string;
}

/** A pax record `"<len> key=value\n"` (its length counts itself). */
export function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  let n = Buffer.byteLength(rest) + 1;
  while (String(n).length + Buffer.byteLength(rest) !== n) n = String(n).length + Buffer.byteLength(rest);
  return `${n}${rest}`;
}

/**
 * A gzipped tar written byte by byte, for archives `tar` and `npm pack` never write (odd types, duplicate pax
 * records, GNU headers with a prefix, a lone zero block): `null` in `entries` is one zero block.
 */
export function craftTarball(entries: readonly (TarEntry | null)[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    if (e === null) {
      blocks.push(Buffer.alloc(512));
      continue;
    }
    const data = Buffer.from(e.data);
    const h = Buffer.alloc(512);
    h.write(e.name, 0, 100);
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write(e.type ?? '0', 156);
    h.write(e.magic ?? 'ustar\u000000', 257, 8, 'latin1');
    h.write(e.prefix ?? '', 345, 155);
    h.fill(' ', 148, 156);
    const sum = h.reduce((a, b) => a + b, 0);
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
