import { execFile } from 'node:child_process';

/** What the interpreter reported for one requirement. */
export interface HostRequirement {
  requirement: string;
  ok: boolean;
  /** The installed version, when the distribution is installed. */
  installed?: string;
}

/**
 * Runs inside the operator's interpreter (isolated: `-I`, no user site, no PYTHON* variables): reads requirement
 * strings as JSON from stdin, looks each distribution up with importlib.metadata and checks its version with
 * `packaging` when the interpreter has it, else with a small comparison of release numbers (==, !=, >=, <=, >, <,
 * ~=). Extras, URLs and markers it cannot evaluate count as not satisfied. Nothing of the skill is imported.
 */
const CHECK = String.raw`
import json, re, sys
try:
    from importlib import metadata
except ImportError:
    import importlib_metadata as metadata
try:
    from packaging.requirements import Requirement
    from packaging.version import Version
except Exception:
    Requirement = None
def rel(v):
    m = re.match(r"^\s*v?(\d+(?:\.\d+)*)", v)
    return tuple(int(x) for x in m.group(1).split(".")) if m else None
def cmp(a, b):
    n = max(len(a), len(b)); a = a + (0,) * (n - len(a)); b = b + (0,) * (n - len(b))
    return (a > b) - (a < b)
def simple(req):
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*((?:(?:==|!=|>=|<=|~=|>|<)\s*[A-Za-z0-9.*+!-]+\s*,?\s*)*)$", req)
    if not m: return None, None
    return m.group(1), re.findall(r"(==|!=|>=|<=|~=|>|<)\s*([A-Za-z0-9.*+!-]+)", m.group(2))
def ok_simple(have, specs):
    h = rel(have)
    if h is None: return False
    for op, want in specs:
        if op in ("==", "!=") and want.endswith(".*"):
            w = rel(want[:-2]); same = w is not None and h[:len(w)] == w
            if same != (op == "=="): return False
            continue
        w = rel(want)
        if w is None: return False
        c = cmp(h, w)
        if op == "~=":
            if c < 0 or len(w) < 2 or h[:len(w) - 1] != w[:-1]: return False
        elif not {"==": c == 0, "!=": c != 0, ">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0}[op]: return False
    return True
out = []
for req in json.load(sys.stdin)[:500]:
    r = {"requirement": req, "ok": False}
    try:
        if Requirement is not None:
            q = Requirement(req)
            name = q.name
            if q.url or q.extras or (q.marker is not None and not q.marker.evaluate()):
                out.append(r); continue
        else:
            name, specs = simple(req)
            if name is None: out.append(r); continue
        have = metadata.version(name)
        r["installed"] = have
        r["ok"] = q.specifier.contains(Version(have), prereleases=True) if Requirement is not None else ok_simple(have, specs)
    except Exception:
        pass
    out.append(r)
print(json.dumps(out))
`;

/**
 * Whether `python`'s own packages (those a sandboxed run of it sees: its prefix and system site folders, not the
 * user site) satisfy every requirement, as the interpreter itself judges it. Fails closed: any error means no.
 */
export function hostSatisfies(
  python: string,
  requirements: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<HostRequirement[]> {
  const clean = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('PYTHON')));
  const none = requirements.map((requirement) => ({ requirement, ok: false }));
  return new Promise((resolve) => {
    const child = execFile(
      python,
      ['-I', '-c', CHECK],
      { env: clean, cwd: '/', timeout: 15_000, maxBuffer: 256 * 1024 },
      (err, stdout) => {
        if (err !== null) return resolve(none);
        try {
          const got = JSON.parse(stdout) as unknown;
          if (!Array.isArray(got) || got.length !== requirements.length) return resolve(none);
          resolve(
            got.map((g: unknown, i) => {
              const r = g as { ok?: unknown; installed?: unknown };
              return {
                requirement: requirements[i]!,
                ok: r.ok === true,
                ...(typeof r.installed === 'string' && r.installed.length <= 100
                  ? { installed: r.installed }
                  : {}),
              };
            }),
          );
        } catch {
          resolve(none);
        }
      },
    );
    child.stdin?.end(JSON.stringify(requirements));
  });
}
