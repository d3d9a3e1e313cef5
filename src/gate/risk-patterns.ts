/** Risk levels, findings and the static-scan pattern table used by the guard. Pure data. */

export type RiskLevel = 'low' | 'medium' | 'high';

export const RISK_ORDER: Readonly<Record<RiskLevel, number>> = { low: 0, medium: 1, high: 2 };

/** One reason a skill call is risky. Paths are relative to the skill folder, never host paths. */
export interface RiskFinding {
  /** Stable id, e.g. `credential-path`, `pipe-to-shell`, `requests-network`. */
  rule: string;
  level: RiskLevel;
  /** One line a person can judge, e.g. `refers to credential path ~/.ssh`. */
  message: string;
  /** File relative to the skill folder (scan findings). */
  path?: string;
  /** 1-based line (scan findings). */
  line?: number;
}

export interface RiskPattern {
  rule: string;
  level: RiskLevel;
  /** Never global/sticky: patterns are shared and must stay stateless. */
  regex: RegExp;
  /** Turns the matched text into the finding message. */
  describe: (match: string) => string;
}

const RC =
  String.raw`(?:(?<![\w-])\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc)\b` +
  String.raw`|config/fish/config\.fish|/etc/(?:profile|bash\.bashrc|zshrc|zsh/zshrc)\b)`;
const SHELL = String.raw`(?:sudo\s+)?(?:env\s+)?(?:ba|z|da|k|fi|c|tc)?sh\b`;
const INTERPRETER = String.raw`(?:${SHELL}|python[0-9.]*\b|node\b|perl\b|ruby\b)`;
const DECODE = String.raw`base64\s+(?:-d|--decode|-D)\b`;
/**
 * Every wildcard is bounded and, where two follow each other, stops at a distinct character, so a scan
 * stays linear even on hostile input (an unbounded `.*….*` pair took minutes on a 512 KiB line).
 */
const upTo = (n: number, not = ''): string => `[^\\n${not}]{0,${n}}`;
const clip = (s: string): string => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 57)}...` : one;
};

/** Shell startup files: a line that names one. Writes to them are found by `shell-rc-write`. */
export const RC_MENTION = new RegExp(RC);

export const RISK_PATTERNS: readonly RiskPattern[] = [
  {
    rule: 'credential-path',
    level: 'high',
    regex: new RegExp(
      String.raw`(?<![\w.-])\.(?:ssh|aws|gnupg|netrc|git-credentials|pgpass|pypirc)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b` +
        String.raw`|\.docker/config\.json|(?<![\w.-])\.kube/config|\.config/gcloud\b|/etc/shadow\b` +
        String.raw`|Library/Keychains|\.keychain(?:-db)?\b|\bsecurity\s+(?:find-(?:generic|internet)-password|dump-keychain)\b`,
    ),
    describe: (m) => `refers to credential path ${clip(m)}`,
  },
  {
    rule: 'pipe-to-shell',
    level: 'high',
    regex: new RegExp(
      String.raw`\b(?:curl|wget)\b${upTo(300, '|')}\|\s*${INTERPRETER}` +
        String.raw`|\b(?:source|${SHELL})\s+<\(\s*(?:curl|wget)\b` +
        String.raw`|\b${SHELL}\s+(?:-\w+\s+){0,4}["']?\$\(\s*(?:curl|wget)\b` +
        String.raw`|\b(?:iex|Invoke-Expression)\b${upTo(300)}\b(?:iwr|Invoke-WebRequest|DownloadString)\b`,
      'i',
    ),
    describe: (m) => `pipes a download into an interpreter: ${clip(m)}`,
  },
  {
    rule: 'encoded-exec',
    level: 'high',
    regex: new RegExp(
      String.raw`${DECODE}${upTo(300, '|')}\|\s*${INTERPRETER}` +
        String.raw`|\b(?:eval|exec|${SHELL}|python[0-9.]*)\b${upTo(200, '$')}\$\(${upTo(200, ')')}${DECODE}` +
        String.raw`|(?<![\w.])(?:exec|eval)\s*\(${upTo(200)}\b(?:\w*b(?:64|32|16|85)decode|a85decode|decodebytes|unhexlify|atob)\b` +
        String.raw`|\b(?:new\s+)?(?:eval|Function)\s*\(\s*(?:atob|Buffer\.from)\s*\(`,
    ),
    describe: (m) => `runs decoded (hidden) code: ${clip(m)}`,
  },
  {
    rule: 'shell-rc-write',
    level: 'high',
    regex: new RegExp(
      String.raw`(?<![=-])>{1,2}\s*["']?${upTo(200, String.raw`\s"'|;&<>`)}${RC}` +
        String.raw`|\btee\b${upTo(200, '|;&')}${RC}` +
        String.raw`|\bsed\s+(?:-[\w-]+\s+){0,3}-i\S*\s${upTo(200, '|;&')}${RC}` +
        String.raw`|\b(?:cp|mv|ln|install|rsync)\s${upTo(300, '|;&')}${RC}["']?\s*(?:$|[;&|#)])` +
        String.raw`|\b(?:shutil\.(?:copy\w*|move)|copyFileSync|copyFile|renameSync|rename)\s*\(${upTo(200, ',')},${upTo(200)}${RC}` +
        String.raw`|\bopen\s*\(${upTo(200)}${RC}${upTo(100, ',')},\s*(?:mode\s*=\s*)?["'][rb]*[awx+]` +
        String.raw`|${RC}${upTo(200)}\.(?:open\s*\(\s*["'][rb]*[awx+]|write_text\s*\(|write_bytes\s*\()` +
        String.raw`|\b(?:appendFile|appendFileSync|writeFile|writeFileSync|createWriteStream)\s*\(${upTo(200)}${RC}`,
    ),
    describe: (m) => `writes to a shell startup file: ${clip(m)}`,
  },
  {
    rule: 'reverse-shell',
    level: 'high',
    regex: new RegExp(
      String.raw`/dev/(?:tcp|udp)/|\bnc(?:at)?\b${upTo(200)}\s-[ec]\s|\bbash\s+-i\b${upTo(200)}>&`,
    ),
    describe: (m) => `opens a remote shell: ${clip(m)}`,
  },
];
