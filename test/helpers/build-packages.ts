import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Packages built by the test itself, so installs never touch a registry: a wheel written by hand (zipfile), an sdist
 * (tarfile), and `npm pack` of a local folder.
 */
const WHEEL = `
import base64, hashlib, sys, zipfile
out, name, version, module_src, blob = sys.argv[1:6]
dist = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": module_src,
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

/** A pure-Python wheel; `blobBytes` adds a data file of that many zero bytes (small zipped, large installed). */
export function buildWheel(
  outDir: string,
  name: string,
  version: string,
  moduleSource: string,
  blobBytes = 0,
): string {
  mkdirSync(outDir, { recursive: true });
  return execFileSync('python3', ['-c', WHEEL, outDir, name, version, moduleSource, String(blobBytes)], {
    encoding: 'utf8',
  }).trim();
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
