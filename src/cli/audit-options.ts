import type { OptionTable } from './option-table.js';

const HELP_FLAG = { type: 'boolean', short: 'h', description: 'show this help' } as const;
const JSON_FLAG = { type: 'boolean', description: 'print JSON instead of text' } as const;
const ANCHORS = {
  type: 'string',
  value: 'FILE',
  description: 'the anchor file',
  default: 'audit_anchors.file, else <audit>.anchors',
} as const;
const ANCHOR_KEY = {
  type: 'string',
  value: 'FILE',
  description: 'the anchor key',
  default: 'audit_anchors.key_file, else audit-anchor.key beside the database',
} as const;

/** `skills-mcp audit <command>`: the options each subcommand's parser takes and its `--help` lists. */
export const AUDIT_OPTIONS = {
  verify: {
    json: JSON_FLAG,
    anchors: ANCHORS,
    'anchor-key': ANCHOR_KEY,
    archive: {
      type: 'string',
      value: 'FILE',
      description: 'also check an archive `audit archive` wrote, against the checkpoint that names it',
    },
    help: HELP_FLAG,
  },
  archive: {
    'older-than': {
      type: 'string',
      value: 'DAYS',
      description: 'archive the sessions that ended more than DAYS days ago (required)',
    },
    out: { type: 'string', value: 'FILE', description: 'the archive to write, a new file (required)' },
    'dry-run': { type: 'boolean', description: 'say what would be archived; write nothing' },
    anchors: ANCHORS,
    'anchor-key': ANCHOR_KEY,
    help: HELP_FLAG,
  },
  reanchor: {
    'i-understand': { type: 'boolean', description: 'required: the log is accepted as it stands now' },
    anchors: ANCHORS,
    'anchor-key': ANCHOR_KEY,
    help: HELP_FLAG,
  },
  list: {
    session: { type: 'string', value: 'ID', description: 'only the calls of this session (its whole id)' },
    skill: { type: 'string', value: 'NAME', description: 'only the calls of this skill' },
    limit: { type: 'string', value: 'N', description: 'only the most recent N calls' },
    json: JSON_FLAG,
    help: HELP_FLAG,
  },
  show: { json: JSON_FLAG, help: HELP_FLAG },
  export: {
    jsonl: { type: 'boolean', description: 'JSON lines (required: the only format)' },
    anchors: ANCHORS,
    'events-only': { type: 'boolean', description: 'the events alone, without the record lines after them' },
    'allow-broken': { type: 'boolean', description: 'exit 0 on a broken chain (still warned on stderr)' },
    help: HELP_FLAG,
  },
} as const satisfies Record<string, OptionTable>;

/** Every audit option, for one parser; which subcommand takes which is checked against `AUDIT_OPTIONS`. */
export const ALL_AUDIT_OPTIONS = {
  ...AUDIT_OPTIONS.verify,
  ...AUDIT_OPTIONS.archive,
  ...AUDIT_OPTIONS.reanchor,
  ...AUDIT_OPTIONS.list,
  ...AUDIT_OPTIONS.export,
} as const satisfies OptionTable;
