import { debianPackageFor, packageForModule } from './package-for-module.js';

/** What a failed run was missing, read from its stderr. */
export type Missing =
  | {
      kind: 'python-module';
      /** The top-level module. */
      module: string;
      package: string;
      /** What the script imported when that is more than the top-level module (`pypdf.annotations`). */
      submodule?: string;
      /** A name imported from a module that lacks it (`from pypdf import PdfWriter`). */
      name?: string;
    }
  | { kind: 'node-module'; module: string; package: string }
  | { kind: 'command'; command: string; debian?: string };

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,100}$/;
const NODE_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/**
 * The first missing module or command a run's stderr names: Python's `ModuleNotFoundError`, Node's
 * `Cannot find module/package`, a shell's `command not found`, or Python's `FileNotFoundError` for a bare program
 * name (what `subprocess` raises). Reads only the last 64 KiB; names are checked against strict patterns, so nothing
 * the script printed is echoed unless it looks like a module or command name.
 */
export function findMissing(stderr: string): Missing | undefined {
  const s = stderr.slice(-65536);
  const py = /ModuleNotFoundError: No module named '([^'\n]+)'/.exec(s);
  if (py?.[1] !== undefined && NAME.test(py[1])) {
    const module = py[1].split('.')[0]!;
    // `No module named 'a.b'` means `a` was found: the package is there, without `a.b`.
    return {
      kind: 'python-module',
      module,
      package: packageForModule(module),
      ...(py[1] === module ? {} : { submodule: py[1] }),
    };
  }
  const from = /ImportError: cannot import name '([A-Za-z_][A-Za-z0-9_]{0,100})' from '([^'\n]+)'/.exec(s);
  if (from?.[1] !== undefined && from[2] !== undefined && NAME.test(from[2])) {
    const module = from[2].split('.')[0]!;
    return {
      kind: 'python-module',
      module,
      package: packageForModule(module),
      ...(from[2] === module ? {} : { submodule: from[2] }),
      name: from[1],
    };
  }
  const node = /Cannot find (?:module|package) '([^'\n]+)'/.exec(s);
  if (node?.[1] !== undefined && !node[1].startsWith('.') && !node[1].startsWith('/')) {
    const parts = node[1].split('/');
    const pkg = node[1].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
    if (NODE_NAME.test(pkg)) return { kind: 'node-module', module: node[1], package: pkg };
  }
  const cmd =
    /([A-Za-z0-9_.+-]+): command not found/.exec(s) ??
    /FileNotFoundError: \[Errno 2\] No such file or directory: '([^'/\n]+)'/.exec(s) ??
    /env: '?([A-Za-z0-9_.+-]+)'?: No such file or directory/.exec(s);
  if (cmd?.[1] !== undefined && NAME.test(cmd[1])) {
    const debian = debianPackageFor(cmd[1]);
    return { kind: 'command', command: cmd[1], ...(debian === undefined ? {} : { debian }) };
  }
  return undefined;
}

/**
 * A few lines telling the model (and the operator it will ask) what provides the missing piece. `installed`: the
 * version of the package the run imported, when it was there but lacked the submodule or name. Undefined when
 * there is nothing useful to say.
 */
export function explainMissing(m: Missing, skill: string, installed?: string): string | undefined {
  // A name missing from a module that is no installed package (the skill's own, a circular import): nothing to add.
  if (m.kind === 'python-module' && m.name !== undefined && installed === undefined) return undefined;
  if (m.kind === 'python-module' && (m.submodule !== undefined || m.name !== undefined)) {
    const pkg = `Python package ${m.package}${installed === undefined ? '' : ` ${installed}`} is installed`;
    const lacks =
      m.name === undefined
        ? `it has no module "${m.submodule}"`
        : `its module "${m.submodule ?? m.module}" has no "${m.name}"`;
    const pin =
      installed === undefined ? `${m.package}>=<the version the skill needs>` : `${m.package}>${installed}`;
    return [
      `${pkg}, but ${lacks}: it is older (or other) than the version the script was written for.`,
      `To fix it, pin a newer version for the skill: the line \`${pin}\` in its requirements.txt (in place of an older pin), or in skills-mcp.yaml:`,
      `  dependencies: { skills: { ${skill}: { python: ["${pin}"] } } }`,
      `then the operator runs \`skills-mcp deps install ${skill}\` (or approves the install with the next call).`,
    ].join('\n');
  }
  if (m.kind === 'python-module') {
    return [
      `Missing Python module "${m.module}" (package ${m.package}). The sandbox has only the interpreter's own packages and the skill's declared environment.`,
      `To provide it, declare it for the skill: add the line \`${m.package}\` to its requirements.txt, or in skills-mcp.yaml:`,
      `  dependencies: { skills: { ${skill}: { python: [${m.package}] } } }`,
      `then the operator runs \`skills-mcp deps install ${skill}\` (or approves the install with the next call).`,
    ].join('\n');
  }
  if (m.kind === 'node-module') {
    return [
      `Missing Node package "${m.package}". Declare it in the skill's package.json ("dependencies"), or in skills-mcp.yaml:`,
      `  dependencies: { skills: { ${skill}: { node: [${m.package}] } } }`,
      `then the operator runs \`skills-mcp deps install ${skill}\`.`,
    ].join('\n');
  }
  return [
    `Missing command "${m.command}": it is not installed on the host (the sandbox sees the host's /usr read-only).`,
    m.debian === undefined
      ? `The operator must install the program that provides "${m.command}" on the host.`
      : `The operator can install it with \`apt-get install ${m.debian}\` (Debian/Ubuntu); nothing in the skill can provide it.`,
  ].join('\n');
}
