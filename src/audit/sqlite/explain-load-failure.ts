import { BuiltForLaterNodeError } from './better-sqlite3-build.js';

/** The Node line each native-module ABI (NODE_MODULE_VERSION) belongs to. */
const NODE_OF_ABI: Record<string, string> = {
  '108': '18',
  '115': '20',
  '120': '21',
  '127': '22',
  '131': '23',
  '137': '24',
  '141': '25',
};

const node = (abi: string) => (NODE_OF_ABI[abi] === undefined ? '' : ` (Node ${NODE_OF_ABI[abi]})`);

/** Whether this Node has `node:sqlite` without a flag (22.13+, 23.4+). */
export function nodeHasSqlite(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 4) || (major === 22 && minor >= 13);
}

/** Why better-sqlite3 did not load, in a person's words, and the one thing that fixes it. */
export function explainLoadFailure(error: Error): { message: string; hint: string } {
  const text = error.message;
  const here = `Node ${process.version} (NODE_MODULE_VERSION ${process.versions.modules})`;
  const built =
    /NODE_MODULE_VERSION (\d+)\.\s*This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(text);
  const file = /([^\s']*better_sqlite3\.node)/.exec(text)?.[1];
  let message: string;
  if (error instanceof BuiltForLaterNodeError) {
    message =
      `better-sqlite3 is not loaded: its native module was compiled against Node ${error.builtFor}, and this is ` +
      `the earlier Node ${process.version}, which such a module can crash`;
  } else if (built !== null) {
    message =
      `better-sqlite3 cannot be loaded: its native module${file === undefined ? '' : ` ${file}`} was built for ` +
      `NODE_MODULE_VERSION ${built[1]}${node(built[1]!)}, and this is ${here}`;
  } else if (/Could not locate the bindings file|better_sqlite3\.node|Cannot find module/.test(text)) {
    message = `better-sqlite3 cannot be loaded: its native module (better_sqlite3.node) is missing for ${here}`;
  } else {
    message = `better-sqlite3 cannot be loaded in ${here}: ${text.split('\n')[0]}`;
  }
  const rebuild = 'Run `npm rebuild better-sqlite3` with this Node';
  const hint = nodeHasSqlite()
    ? `${rebuild}, or set audit_sqlite_driver: node (SKILLS_MCP_AUDIT_SQLITE_DRIVER=node) to use the node:sqlite built into this Node.`
    : `${rebuild} (or run on Node 22.13 or later and set audit_sqlite_driver: node, which needs no native module).`;
  return { message, hint };
}
