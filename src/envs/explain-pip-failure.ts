import { redactUrl } from './pip-config.js';

/** The requirement pip could not satisfy, read from its error lines. */
export interface UnmetRequirement {
  /** As pip printed it, e.g. `tinypkg==1.0`. */
  requirement: string;
  /** The project name alone. */
  name: string;
  /** The versions pip saw that it could install, or empty for `(from versions: none)`. */
  versions: string[];
}

/** What a second, verbose look at the index (`pip -vv index versions NAME`) printed. */
export interface IndexProbe {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** The first line (after the step) and the advice of an install failure. */
export interface PipFailure {
  cause?: string;
  advice?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}/;
const SETTING_OF: Record<string, string> = {
  'index-url': "pip's `index-url` (`pip config list`, PIP_INDEX_URL)",
  'extra-index-url': "pip's `extra-index-url` (`pip config list`, PIP_EXTRA_INDEX_URL)",
  'find-links': "pip's `find-links` (`pip config list`, PIP_FIND_LINKS)",
};

/** `Could not find a version that satisfies the requirement X (from versions: …)` / `No matching distribution…`. */
export function unmetRequirement(stderr: string): UnmetRequirement | undefined {
  const s = stderr.slice(-65536);
  const found =
    /Could not find a version that satisfies the requirement (\S{1,200}) \(from versions: ([^)\n]{0,4000})\)/.exec(
      s,
    );
  const requirement = found?.[1] ?? /No matching distribution found for (\S{1,200})/.exec(s)?.[1];
  const name = requirement === undefined ? undefined : NAME.exec(requirement)?.[0];
  if (requirement === undefined || name === undefined) return undefined;
  const listed = (found?.[2] ?? 'none').trim();
  const versions =
    listed === 'none' ? [] : listed.split(/,\s*/).filter((v) => /^[A-Za-z0-9.+!-]{1,40}$/.test(v));
  return { requirement, name, versions };
}

/** The last requirement pip started on (`Collecting X`), for failures that do not name one. */
export function lastCollected(stdout: string): string | undefined {
  const all = [...stdout.slice(-262144).matchAll(/^Collecting (\S{1,200})/gm)];
  const last = all.at(-1)?.[1];
  return last !== undefined && NAME.test(last) ? last : undefined;
}

/** The configured source a fetched URL belongs to (`index-url https://…`), for the setting to name. */
function sourceOf(url: string, sources: readonly string[]): { key: string; url: string } | undefined {
  for (const s of sources) {
    const [key = '', value = ''] = s.split(' ');
    if (value !== '' && url.startsWith(value.replace(/\/+$/, ''))) return { key, url: value };
  }
  return undefined;
}

/** Why a fetch failed, in a few words: the errno text or the HTTP status pip logged. */
function shortReason(reason: string): string {
  const errno = /\[Errno -?\d+\] ([^')\]]{1,80})/.exec(reason)?.[1];
  if (errno !== undefined) return errno.trim();
  const http = /\b([45]\d\d) (?:Client|Server) Error: ([A-Za-z ]{1,40})/.exec(reason);
  if (http !== null) return `HTTP ${http[1]} ${http[2]!.trim()}`;
  if (/SSL|certificate/i.test(reason)) return 'TLS certificate not accepted';
  if (/timed out|timeout/i.test(reason)) return 'timed out';
  return 'connection failed';
}

/**
 * The real cause of a failed `pip install` and the one change that fixes it, from its error lines and, when it could
 * not satisfy a requirement, from a verbose look at the index for that one project: an index that cannot be reached
 * (its URL and the pip setting naming it), a project the index does not have, one available only as source while
 * only wheels are installed (named first: one such package fails the whole environment), or no version matching the
 * pin. Undefined when none of these fits (the installer's output then speaks for itself).
 */
export function explainPipFailure(
  stderr: string,
  stdout: string,
  probe: IndexProbe | undefined,
  o: { allowSource: boolean; sources: readonly string[] },
): PipFailure {
  if (/No module named pip\b/.test(stderr.slice(-4096)))
    return {
      cause: `the interpreter has no pip`,
      advice: `Environments are built with the interpreter's own pip: install it for that interpreter (\`<python> -m ensurepip\`, or the python3-pip package), or set \`dependencies.python\` in skills-mcp.yaml to one that has pip.`,
    };
  const unmet = unmetRequirement(stderr);
  // A pip without `index versions` (or a probe that failed for its own reasons) tells nothing about the index.
  const usable =
    probe !== undefined && (probe.exitCode === 0 || /No matching distribution found/.test(probe.stderr))
      ? probe
      : undefined;
  if (unmet === undefined) {
    const at = lastCollected(stdout);
    return at === undefined ? {} : { cause: `it stopped at ${at}` };
  }
  const { requirement, name } = unmet;
  const text = usable?.stdout.slice(0, 1_048_576) ?? '';
  const fetchErrors = [...text.matchAll(/^Could not fetch URL (\S{1,2000}): (.{0,2000}?) - skipping$/gm)]
    .map((m) => ({ url: m[1] ?? '', reason: m[2] ?? '' }))
    .filter((f) => !/\b404\b/.test(f.reason));
  const failed = fetchErrors[0];
  if (failed !== undefined) {
    const src = sourceOf(failed.url, o.sources);
    const where = redactUrl(src?.url ?? failed.url);
    return {
      cause: `the package index ${where} could not be reached (${shortReason(failed.reason)}) while looking for ${requirement}`,
      advice: `Check that this server can reach ${where} (proxy, TLS certificate, credentials), or point ${SETTING_OF[src?.key ?? ''] ?? "pip's `index-url` (`pip config list`, PIP_INDEX_URL)"} at an index it can reach; then run \`skills-mcp deps install\` again.`,
    };
  }
  const links = [...text.matchAll(/^Found link (\S{1,2000}), version: /gm)].map((m) => m[1] ?? '');
  const listed = /^Available versions: (.{1,4000})$/m.exec(text)?.[1];
  const exists = usable?.exitCode === 0 && (listed !== undefined || links.length > 0);
  const where = o.sources.join('; ') || 'the configured index';
  if (usable !== undefined && !exists)
    return {
      cause: `${name} was not found on the package index (${where})`,
      advice: `Check the name in the skill's requirements.txt (or \`dependencies.skills\` in skills-mcp.yaml): the index has no project ${name}. If it is an internal package, add it to the index or a find-links folder. One package that cannot be installed fails the whole environment: nothing was installed.`,
    };
  if (unmet.versions.length > 0)
    return {
      cause: `no version of ${name} matches ${requirement} (the index has ${unmet.versions.slice(-8).join(', ')})`,
      advice: `Change the pin in the skill's requirements.txt (or \`dependencies.skills\` in skills-mcp.yaml) to a version the index has. Nothing was installed.`,
    };
  const wheels = links.some((l) => /\.whl(#|$)/i.test(l));
  if (!o.allowSource && !wheels)
    return {
      cause: `${requirement} is available only as source (sdist), and only binary wheels are installed`,
      advice: `One package that cannot be installed fails the whole environment: nothing was installed. Either set \`dependencies.allow_source: true\` in skills-mcp.yaml (builds sdists, setup.py runs inside the install sandbox), put a wheel of ${name} on your index or in a find-links folder (\`pip wheel ${name}\`), or drop ${name} from the skill's requirements.`,
    };
  return {
    cause: `no file of ${requirement} installs on this Python and platform${wheels ? ' (the index has wheels only for others)' : ''}`,
    advice: `One package that cannot be installed fails the whole environment: nothing was installed. Pick a version of ${name} built for this interpreter (\`dependencies.python\` chooses which one builds environments), or drop ${name} from the skill's requirements.`,
  };
}
