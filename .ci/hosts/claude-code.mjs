// Claude Code against the built server, driven as a person would: `claude mcp add` with the line
// `skills-mcp config claude-code` prints, `claude mcp list`, then the TUI in tmux (the approval form, Approve once,
// Deny) and print mode (`claude -p`, with and without a policy rule). The model is a fake Messages API on loopback;
// HOME, Claude Code's config folder and the audit log are throwaway. Screens are saved as text into ARTIFACTS_DIR
// and printed. Usage: node .ci/hosts/claude-code.mjs BIN_DIR ARTIFACTS_DIR (BIN_DIR holds `claude`).
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startFakeAnthropic } from './fake-anthropic.mjs';
import { startTmux } from './tmux.mjs';

const root = resolve(import.meta.dirname, '../..');
const [binDir, artifactsArg] = process.argv.slice(2);
const artifacts = resolve(artifactsArg ?? '/tmp/ci-artifacts/hosts');
const cli = join(root, 'dist', 'cli.js');
const skills = join(root, 'skills');
const input = JSON.parse(readFileSync(join(skills, 'csv-stats/assets/example-input.json'), 'utf8'));
const home = mkdtempSync(join(tmpdir(), 'hosts-claude-'));
const project = join(home, 'project');
const configDir = join(home, '.claude');
const apiKey = `sk-ant-api03-${'fake'.repeat(8)}0123456789`;

const started = Date.now();
const say = (line) => console.log(`claude-code [${((Date.now() - started) / 1000).toFixed(1)} s]: ${line}`);
const check = (ok, message) => {
  if (!ok) throw new Error(message);
};

/** Saves a screen under ARTIFACTS_DIR and prints it into the CI log. */
function keep(name, screen) {
  writeFileSync(join(artifacts, `claude-code-${name}.txt`), screen);
  console.log(`----- claude-code: screen "${name}" -----\n${screen.trimEnd()}\n-----`);
}

/** First-run dialogs skipped: onboarding done, the key approved, the project folder trusted, MCP tools allowed. */
function seedHome() {
  mkdirSync(project, { recursive: true });
  mkdirSync(configDir, { recursive: true });
  const state = {
    hasCompletedOnboarding: true,
    theme: 'dark',
    customApiKeyResponses: { approved: [apiKey.slice(-20)], rejected: [] },
    projects: { [project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
  };
  writeFileSync(join(configDir, '.claude.json'), JSON.stringify(state));
  // Claude Code's own permission prompt for the server's tools is not what this test is about: allow them.
  writeFileSync(
    join(configDir, 'settings.json'),
    JSON.stringify({ permissions: { allow: ['mcp__skills'] } }),
  );
}

function auditLines(env) {
  return execFileSync(process.execPath, [cli, 'audit', 'list'], { env, encoding: 'utf8' });
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  seedHome();
  const fake = await startFakeAnthropic({ tool: 'mcp__skills__csv-stats', input });
  const env = {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: home,
    TERM: 'xterm-256color',
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    XDG_STATE_HOME: join(home, 'state'),
  };
  // Not execFileSync: the fake API answers on this process's event loop.
  const run = async (command, args) => {
    const options = { cwd: project, env, encoding: 'utf8', timeout: 120_000 };
    const child = promisify(execFile)(command, args, options);
    child.child.stdin.end();
    return (await child).stdout;
  };
  let tmux;
  try {
    say((await run('claude', ['--version'])).trim());
    // The line `skills-mcp config claude-code` prints, run as printed.
    const add = execFileSync(process.execPath, [cli, 'config', 'claude-code', '--skills', skills], {
      encoding: 'utf8',
    });
    const [command, ...args] = add.trim().split(' ');
    say(`${add.trim()}\n${(await run(command, args)).trim()}`);
    const list = await run('claude', ['mcp', 'list']);
    say(list.trim());
    check(/skills: .*✔ Connected/.test(list), 'claude mcp list does not show skills as ✔ Connected');

    tmux = startTmux({ command: 'claude', cwd: project, env });
    await tmux.waitFor(/^❯\s*$/m, { what: 'the prompt', timeoutMs: 60_000 });
    tmux.send('Run csv-stats on the example', { literal: true });
    tmux.send('Enter');
    const form = await tmux.waitFor(/Decision:[\s\S]*Accept/, {
      what: 'the approval form',
      timeoutMs: 60_000,
    });
    keep('form', form);
    for (const shown of [
      'Allow skill "csv-stats" to run scripts/main.py?',
      'Sandbox: profile default',
      'Risk:',
    ]) {
      check(form.includes(shown), `the form does not show ${JSON.stringify(shown)}`);
    }
    // The Decision field: → opens its options, ↑ ↑ from the default (Deny) to Approve once, Space picks it, ↓ moves
    // to Accept, Enter sends.
    await tmux.press('Right', /◯ Approve once/, { what: 'the Decision options' });
    await tmux.press('Up', /❯ [◯◉] Approve for this session/, { what: 'Approve for this session focused' });
    await tmux.press('Up', /❯ [◯◉] Approve once/, { what: 'Approve once focused' });
    await tmux.press('Space', /Decision: ▸ Approve once/, { what: 'Approve once picked' });
    await tmux.press('Down', /❯ Accept/, { what: 'Accept focused' });
    await tmux.press('Enter', /The tool answered|Called skills/, { what: 'the form sent' });
    keep(
      'approved',
      await tmux.waitFor(/The tool answered/, { what: "the model's answer", timeoutMs: 60_000 }),
    );
    const approved = fake.toolResults.at(-1);
    check(approved && !approved.isError, 'the model received no successful csv-stats result');
    check(JSON.parse(approved.text).rows === 8, `the model received ${approved.text.slice(0, 200)}`);
    say(`the model received (Approve once): ${approved.text.slice(0, 160)}…`);

    tmux.send('Run csv-stats again', { literal: true });
    tmux.send('Enter');
    await tmux.waitFor(/Decision: ▸ Deny[\s\S]*Accept/, {
      what: 'the second approval form',
      timeoutMs: 60_000,
    });
    await tmux.press('Down', /❯ Accept/, { what: 'Accept focused' });
    await tmux.press('Enter', /1 failed/, { what: 'the form sent' });
    keep(
      'denied',
      await tmux.waitFor(/1 failed[\s\S]*The tool answered/, { what: 'the refusal', timeoutMs: 60_000 }),
    );
    const denied = fake.toolResults.at(-1);
    check(
      denied.isError && /The user denied running csv-stats/.test(denied.text),
      `after Deny: ${denied.text}`,
    );
    say(`the model received (Deny): ${denied.text}`);
    const audit = auditLines(env);
    say(`skills-mcp audit list:\n${audit.trimEnd()}`);
    check(
      /approved \(user\)/.test(audit) && /denied \(user\)/.test(audit),
      'the audit log lacks the two answers',
    );
    tmux.stop();
    tmux = undefined;

    // Print mode: it cancels every form unseen, so without a rule the run is refused with how to allow it …
    const unseen = await run('claude', ['-p', 'Run csv-stats on the example']);
    const refusal = fake.toolResults.at(-1);
    check(/cancelled the approval form/.test(refusal.text), `claude -p without a rule: ${refusal.text}`);
    say(`claude -p, no rule: ${unseen.trim()}; the model received: ${refusal.text.split('\n')[0]}`);
    // … and with a rule allowing the script it runs without asking.
    const policy = join(home, 'skills-mcp.yaml');
    writeFileSync(
      policy,
      'approval:\n  rules:\n    - { skill: csv-stats, script: scripts/main.py, action: allow }\n',
    );
    const servers = {
      mcpServers: {
        skills: { command: process.execPath, args: [cli, '--skills', skills, '--config', policy] },
      },
    };
    const mcpConfig = join(home, 'mcp-allow.json');
    writeFileSync(mcpConfig, JSON.stringify(servers));
    const onlyAllowing = ['--strict-mcp-config', '--mcp-config', mcpConfig];
    const allowed = await run('claude', ['-p', 'Run csv-stats on the example', ...onlyAllowing]);
    const ran = fake.toolResults.at(-1);
    check(
      !ran.isError && JSON.parse(ran.text).rows === 8,
      `claude -p with an allow rule: ${ran.text.slice(0, 300)}`,
    );
    say(`claude -p, allow rule: ${allowed.trim()}; the model received: ${ran.text.slice(0, 120)}…`);
    const after = auditLines(env);
    say(`skills-mcp audit list:\n${after.trimEnd()}`);
    check(
      /denied \(answered_unseen\)/.test(after),
      'the print-mode refusal is not audited as answered_unseen',
    );
  } catch (error) {
    if (tmux) keep('failure', tmux.screen());
    throw error;
  } finally {
    tmux?.stop();
    await fake.close();
    // Claude Code may still be writing its session files as tmux stops it.
    rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  }
}

await main();
