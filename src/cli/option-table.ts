/** One option of a command: what `parseArgs` reads, and the line `--help` prints for it. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
  /** The value's name in the help (`DIR`, `FILE`); string options only. */
  readonly value?: string;
  readonly description: string;
  /** What applies when the option is not given, as the help says it (never passed to `parseArgs`). */
  readonly default?: string;
}

export type OptionTable = Readonly<Record<string, OptionSpec>>;

type ParseFields<S> = Pick<S, Extract<keyof S, 'type' | 'multiple' | 'short'>>;
export type ParseOptions<T extends OptionTable> = { -readonly [K in keyof T]: ParseFields<T[K]> };

/** The table as `parseArgs` options: type, multiple and short only (a help default is not a parsed default). */
export function parseOptions<T extends OptionTable>(table: T): ParseOptions<T> {
  const out: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const [name, s] of Object.entries(table)) {
    out[name] = {
      type: s.type,
      ...(s.multiple === undefined ? {} : { multiple: s.multiple }),
      ...(s.short === undefined ? {} : { short: s.short }),
    };
  }
  return out as ParseOptions<T>;
}

const WIDTH = 116;
const COLUMN = 24;

/** The help lines of a table, `--help` left out (every command takes it); descriptions wrap at the column. */
export function optionsHelp(table: OptionTable): string {
  const lines: string[] = [];
  for (const [name, s] of Object.entries(table)) {
    if (name === 'help') continue;
    const flag = `  --${name}${s.value === undefined ? '' : ` ${s.value}`}`;
    const text = s.default === undefined ? s.description : `${s.description} (default: ${s.default})`;
    let line = flag.length < COLUMN ? flag.padEnd(COLUMN) : `${flag} `;
    for (const word of text.split(' ')) {
      if (line.length + word.length > WIDTH && line.trim() !== '') {
        lines.push(line.trimEnd());
        line = ' '.repeat(COLUMN);
      }
      line += `${word} `;
    }
    lines.push(line.trimEnd());
  }
  return lines.join('\n');
}
