import { readFileSync, statSync } from 'node:fs';
import { SkillsError } from '../../errors.js';

/** Who connects where: the fields a password file line is matched on. */
export interface PgpassTarget {
  host: string;
  port: number;
  database: string;
  user: string;
}

/** Splits one `host:port:database:user:password` line on unescaped colons (`\:` and `\\` are escapes). */
function fields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) cur += line[++i];
    else if (c === ':' && out.length < 4) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/**
 * The password for `target` from a PostgreSQL password file (the `.pgpass` format: `host:port:database:user:password`
 * lines, `*` matches anything, `#` comments), or undefined when no line matches. Like libpq, a file other users may
 * read is refused. A unix-socket host matches `localhost` as well as its folder.
 */
export function readPgpass(file: string, target: PgpassTarget): string | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) !== 0)
    throw new SkillsError('CONFIG_INVALID', `the PostgreSQL password file ${file} is open to other users`, {
      hint: `chmod 600 ${file}`,
    });
  const hosts = target.host.startsWith('/') ? [target.host, 'localhost'] : [target.host];
  const wanted = [hosts, [String(target.port)], [target.database], [target.user]];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const f = fields(line);
    if (f.length !== 5) continue;
    if (wanted.every((values, i) => f[i] === '*' || values.includes(f[i]!))) return f[4];
  }
  return undefined;
}
