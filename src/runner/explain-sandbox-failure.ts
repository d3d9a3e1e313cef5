import { isUnder } from '../sandbox/host-layout.js';
import type { NetworkMode } from '../sandbox/types.js';

/** What a run was given, as far as its failures can be read against it. */
export interface RunGrants {
  network: NetworkMode;
  /** The workspace as mounted, when the run had one. */
  workspace?: { path: string; write: boolean };
  /** The skill's copy (`SKILL_DIR`), read-only in every run. */
  skillDir?: string;
  /** The skill's name, for the operator's setting (`skill_overrides.<name>`) a hint names. */
  skill?: string;
  /** What the operator's `skill_overrides` set for the skill, when a hint must say the operator narrowed it. */
  operator?: { workspace?: 'none' | 'read' | 'write'; network?: 'none' | 'full' };
}

/** `skill_overrides.<name>.<key>: <value>` as the operator writes it in skills-mcp.yaml. */
const overrideKey = (g: RunGrants, key: string, value: string): string =>
  `\`skill_overrides.${g.skill ?? '<skill>'}.${key}: ${value}\``;

/** Paths a write was refused on because the file system is read-only: Python, Node, and shell/coreutils wording. */
const EROFS = [
  /\[Errno 30\] Read-only file system: '([^'\n]+)'/g,
  /EROFS: read-only file system, \w+ '([^'\n]+)'/g,
  /(\/[^\s:'"]+): Read-only file system/g,
];
/** Name-resolution and connect errors as Python, Node, curl, git and pip print them. */
const NETWORK =
  /Temporary failure in name resolution|Name or service not known|No address associated with hostname|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|Could not resolve host|Network is unreachable|ENETUNREACH|Failed to establish a new connection/;
/** How LibreOffice dies when it cannot read its registry or fonts, or write its profile. */
const LIBREOFFICE = /com::sun::star::uno::RuntimeException|Fatal exception: Signal 6/;

function readOnlyPaths(stderr: string): string[] {
  const out: string[] = [];
  for (const re of EROFS) for (const m of stderr.matchAll(re)) if (m[1] !== undefined) out.push(m[1]);
  return out;
}

/**
 * The change that fixes a failed run, read from its stderr against what the run was granted: a write refused on
 * the read-only workspace or skill folder, a name lookup or connect with the network off, LibreOffice aborting. Each
 * line names the setting or frontmatter key; nothing the script printed is echoed. Reads only the last 64 KiB.
 */
export function explainSandboxFailure(stderrText: string, g: RunGrants): string[] {
  const stderr = stderrText.slice(-65536);
  const hints: string[] = [];
  const refused = readOnlyPaths(stderr);
  const ws = g.workspace;
  if (ws !== undefined && !ws.write && refused.some((p) => isUnder(p, [ws.path]))) {
    const how =
      g.operator?.workspace !== undefined
        ? `the operator set ${overrideKey(g, 'workspace', g.operator.workspace)} in skills-mcp.yaml; if the skill is meant to change files there, the operator sets ${overrideKey(g, 'workspace', 'write')} instead`
        : `if the skill is meant to change files there, add \`workspace: write\` to its SKILL.md frontmatter, or the operator sets ${overrideKey(g, 'workspace', 'write')} in skills-mcp.yaml`;
    hints.push(
      `The workspace is mounted read-only for this skill, so the write failed: ${how} (asked at approval; the run works on a private copy and its changes are applied back). Otherwise write to $SKILL_FILES_DIR (the working folder), whose files come back with the result, or to $SKILL_SESSION_DIR, which the session's next runs find.`,
    );
  }
  if (g.skillDir !== undefined && refused.some((p) => isUnder(p, [g.skillDir!]))) {
    hints.push(
      "The skill's own folder is read-only in every run (it is the approved copy). Copy what needs changing to $SKILL_FILES_DIR or /tmp and change it there.",
    );
  }
  if (g.network === 'none' && NETWORK.test(stderr)) {
    hints.push(
      g.operator?.network === 'none'
        ? `The network is off for this run (the sandbox has only loopback, and no name resolution) because the operator set ${overrideKey(g, 'network', 'none')} in skills-mcp.yaml, whatever the skill asks. If the skill needs the network, the operator removes that line or sets ${overrideKey(g, 'network', 'full')} (asked at approval).`
        : `The network is off for this run (the sandbox has only loopback, and no name resolution). If the skill needs the network, add \`network: full\` to its SKILL.md frontmatter, or the operator sets ${overrideKey(g, 'network', 'full')} in skills-mcp.yaml (asked at approval either way), or \`sandbox.profile: network\` for every skill.`,
    );
  }
  if (LIBREOFFICE.test(stderr)) {
    hints.push(
      'LibreOffice aborted inside the sandbox. Run `skills-mcp doctor`: it says whether soffice starts here and what is missing. The sandbox mounts /etc/libreoffice and /etc/fonts read-only and gives it HOME=/tmp (private, writable) for its profile; a script that changes HOME must pass `-env:UserInstallation=file:///tmp/lo-profile` to soffice. A LibreOffice installed outside /usr needs its folder in `sandbox.read_only_paths` (skills-mcp.yaml).',
    );
  }
  return hints;
}
