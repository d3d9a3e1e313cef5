import { escapeForDisplay } from '../escape-for-display.js';
import type { Catalog } from '../skills/catalog.js';

const MAX_LISTED = 200;

const firstSentence = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  const cut = line.search(/[.!?](\s|$)/);
  const s = cut === -1 ? line : line.slice(0, cut + 1);
  return s.length > 120 ? `${s.slice(0, 119)}…` : s;
};

/** Per catalog (a reload makes a new one): every server instance, one per stateless HTTP request, asks again. */
const built = new WeakMap<Catalog, Map<string, string>>();

/** The server's `instructions`: how to use it, and a compact skill index (hosts may hide tool descriptions). */
export function serverInstructions(catalog: Catalog, compact: boolean, runs: boolean): string {
  let forCatalog = built.get(catalog);
  if (forCatalog === undefined) built.set(catalog, (forCatalog = new Map<string, string>()));
  const key = `${compact}/${runs}`;
  let text = forCatalog.get(key);
  if (text === undefined) forCatalog.set(key, (text = instructionsText(catalog, compact, runs)));
  return text;
}

function instructionsText(catalog: Catalog, compact: boolean, runs: boolean): string {
  const how = compact
    ? 'Call list_skills to see every skill, then load_skill {skill} for its instructions; read its files with read_skill_file.'
    : "Each skill is a tool: call it to get the skill's instructions and file index; read its files with read_skill_file.";
  const run = runs
    ? " Executable skills run in a sandbox when called (the user may be asked to approve); run_skill_script runs a skill's other scripts."
    : '';
  const lines = [
    `This server provides Agent Skills: task-specific instructions with scripts and reference files. ${how}${run}`,
    '',
    'Skills:',
  ];
  for (const s of catalog.skills.slice(0, MAX_LISTED))
    lines.push(`- ${escapeForDisplay(s.name)}: ${escapeForDisplay(firstSentence(s.description))}`);
  if (catalog.skills.length > MAX_LISTED)
    lines.push(`- … and ${catalog.skills.length - MAX_LISTED} more (call list_skills)`);
  if (catalog.skills.length === 0) lines.push('(none loaded)');
  return lines.join('\n');
}
