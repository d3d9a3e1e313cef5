// Codex CLI against the built server, driven as a person would: ~/.codex/config.toml holds what
// `skills-mcp config codex` prints (plus a model provider pointing at a fake Responses API on loopback),
// `codex mcp list`, then the TUI in tmux (the approval form, Approve once, Deny) and `codex exec` (no one to ask).
// HOME, CODEX_HOME and the audit log are throwaway. Screens are saved as text into ARTIFACTS_DIR and printed.
// Usage: node .ci/hosts/codex-cli.mjs BIN_DIR ARTIFACTS_DIR (BIN_DIR holds `codex`).
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startFakeOpenAI } from './fake-openai.mjs';
import { startTmux } from './tmux.mjs';

const root = resolve(import.meta.dirname, '../..');
const [binDir, artifactsArg] = process.argv.slice(2);
const artifacts = resolve(artifactsArg ?? '/tmp/ci-artifacts/hosts');
const cli = join(root, 'dist', 'cli.js');
const skills = join(root, 'skills');
const input = JSON.parse(readFileSync(join(skills, 'csv-stats/assets/example-input.json'), 'utf8'));
// Not under /tmp: Codex refuses to put its helper links in a temporary folder and says so on every start.
const home = mkdtempSync(join(process.env.HOSTS_HOMES ?? tmpdir(), 'hosts-codex-'));
const codexHome = join(home, '.codex');
const project = join(home, 'project');

const started = Date.now();
const say = (line) => console.log(`codex-cli [${((Date.now() - started) / 1000).toFixed(1)} s]: ${line}`);
const check = (ok, message) => {
  if (!ok) throw new Error(message);
};

function keep(name, screen) {
  writeFileSync(join(artifacts, `codex-cli-${name}.txt`), screen);
  console.log(`----- codex-cli: screen "${name}" -----\n${screen.trimEnd()}\n-----`);
}

/** The model provider (the fake), the project trusted, no update check; then the snippet exactly as printed. */
function writeConfig(fakeUrl) {
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(project, { recursive: true });
  const snippet = execFileSync(process.execPath, [cli, 'config', 'codex', '--skills', skills], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const provider = [
    'model = "gpt-fake"',
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${fakeUrl}/v1"`,
    'env_key = "FAKE_OPENAI_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    `[projects.${JSON.stringify(project)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n');
  writeFileSync(join(codexHome, 'config.toml'), `${provider}\n${snippet}`);
}

/**
 * Codex leaves a `codex app-server` behind after it exits, still writing into CODEX_HOME. Stops the processes whose
 * environment names this run's CODEX_HOME (so only what this script started), by pid, and waits until they are gone
 * (SIGKILL after 10 s), so the folder can be removed.
 */
async function stopLeftovers() {
  const ours = () =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CODEX_HOME=${codexHome}`);
        } catch {
          return false; // gone, or not ours to read
        }
      })
      .map(Number);
  const signal = (pids, sig) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  signal(ours(), 'SIGTERM');
  const deadline = Date.now() + 10_000;
  for (let left = ours(); left.length > 0; left = ours()) {
    if (Date.now() > deadline + 5_000) break; // not ours to wait on any longer: the removal below says so
    if (Date.now() > deadline) signal(left, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const fake = await startFakeOpenAI({ namespace: 'mcp__skills', tool: 'csv_stats', input });
  writeConfig(fake.url);
  const env = {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: home,
    CODEX_HOME: codexHome,
    TERM: 'xterm-256color',
    FAKE_OPENAI_KEY: 'sk-fake-openai-key',
  };
  const audit = () => execFileSync(process.execPath, [cli, 'audit', 'list'], { env, encoding: 'utf8' });
  const run = async (args) => {
    const options = { cwd: project, env, encoding: 'utf8', timeout: 120_000 };
    const child = promisify(execFile)('codex', args, options);
    child.child.stdin.end();
    return await child;
  };
  const offeredSince = (count) =>
    fake.requests.slice(count).some((request) => request.tools.includes('mcp__skills.csv_stats'));

  /**
   * Types a prompt and waits for the approval form. Codex may send the first turn before its MCP servers are up;
   * the fake then answers "Skills" without calling anything, and the prompt is typed again (at most 3 times).
   */
  async function ask(tmux, prompt) {
    for (let attempt = 1; ; attempt++) {
      const count = fake.requests.length;
      const answers = tmux.screen().match(/• Skills/g)?.length ?? 0;
      tmux.send(prompt, { literal: true });
      // Text typed in one burst reads as a paste, and an Enter right after it as a newline in it: press until sent.
      const answered = {
        test: (text) => /› 1\. Approve once/.test(text) || (text.match(/• Skills/g)?.length ?? 0) > answers,
      };
      const sent = { test: (text) => /Working/.test(text) || answered.test(text) };
      await tmux.press('Enter', sent, { what: 'the prompt sent', settleMs: 3000 });
      const screen = await tmux.waitFor(answered, { what: 'the approval form', timeoutMs: 60_000 });
      if (/› 1\. Approve once/.test(screen)) return screen;
      check(
        !offeredSince(count) && attempt < 3,
        `the model was offered csv_stats but got no form: ${screen}`,
      );
      say(`the turn went out before the skills server was up (tool not offered); typing the prompt again`);
    }
  }

  let tmux;
  try {
    say((await run(['--version'])).stdout.trim());
    const list = (await run(['mcp', 'list'])).stdout;
    say(`codex mcp list:\n${list.trimEnd()}`);
    check(new RegExp(`^skills +${process.execPath} `, 'm').test(list), 'codex mcp list does not show skills');

    tmux = startTmux({ command: 'codex', cwd: project, env });
    // The header says `loading` until the session (and its MCP servers) is up, then names the folder.
    await tmux.waitFor(/^\s+~\/project\s*$[\s\S]*› /m, { what: 'the prompt', timeoutMs: 60_000 });
    keep('start', tmux.screen());
    const form = await ask(tmux, 'Run csv-stats on the example');
    keep('form', form);
    for (const shown of [
      'Allow skill "csv-stats" to run scripts/main.py?',
      'Sandbox: profile default',
      'Risk:',
      'Script:  scripts/main.py',
    ]) {
      check(form.includes(shown), `the form does not show ${JSON.stringify(shown)}`);
    }
    // The Decision field lists its options with the first, Approve once, focused; Enter sends it.
    check(/› 1\. Approve once/.test(form), 'Approve once is not the focused option');
    await tmux.press('Enter', /The tool answered/, {
      what: "the model's answer",
      settleMs: 30_000,
      tries: 1,
    });
    keep('approved', tmux.screen());
    const approved = fake.toolOutputs.at(-1);
    // Codex puts a `Wall time: … seconds` line (and an `Output:` line) before the tool's text.
    const result = approved?.text.slice(approved.text.indexOf('{'));
    check(result && JSON.parse(result).rows === 8, `after Approve once: ${approved?.text.slice(0, 300)}`);
    say(`the model received (Approve once): ${approved.text.slice(0, 160)}…`);

    await ask(tmux, 'Run csv-stats again');
    await tmux.press('Down', /› 2\. Approve for this session/, { what: 'Approve for this session focused' });
    await tmux.press('Down', /› 3\. Deny/, { what: 'Deny focused' });
    keep('deny-focused', tmux.screen());
    const answers = fake.toolOutputs.length;
    await tmux.press('Enter', /Field 1\/1/, { what: 'the form sent' }).catch(() => undefined);
    await tmux.waitFor(/The tool answered[\s\S]*The tool answered/, {
      what: 'the refusal',
      timeoutMs: 60_000,
    });
    keep('denied', tmux.screen());
    check(fake.toolOutputs.length === answers + 1, 'the model received no answer after Deny');
    const denied = fake.toolOutputs.at(-1);
    check(/The user denied running csv-stats/.test(denied.text), `after Deny: ${denied.text}`);
    say(`the model received (Deny): ${denied.text}`);
    const afterTui = audit();
    say(`skills-mcp audit list:\n${afterTui.trimEnd()}`);
    check(
      /approved \(user\)/.test(afterTui) && /denied \(user\)/.test(afterTui),
      'the audit log lacks the two answers',
    );
    tmux.stop();
    tmux = undefined;

    // `codex exec`: no one to show a form to.
    let exec;
    for (let attempt = 1; ; attempt++) {
      const count = fake.requests.length;
      exec = await run(['exec', '--skip-git-repo-check', 'Run csv-stats on the example']);
      if (offeredSince(count)) break;
      check(attempt < 3, 'codex exec never offered csv_stats to the model');
      say('codex exec: the turn went out before the skills server was up; running it again');
    }
    const unseen = fake.toolOutputs.at(-1);
    check(fake.toolOutputs.length === 3, 'codex exec: the model received no csv_stats output');
    say(`codex exec: ${exec.stdout.trim()}\nthe model received: ${unseen.text}`);
    const afterExec = audit();
    say(`skills-mcp audit list:\n${afterExec.trimEnd()}`);
    // It declines every form unseen: the model is told so, and how to allow the script; the audit says who answered.
    check(
      /declined the approval form .* faster than a person can read it/.test(unseen.text),
      `codex exec: ${unseen.text}`,
    );
    check(/denied \(answered_unseen\)/.test(afterExec), 'codex exec is not audited as answered_unseen');
  } catch (error) {
    if (tmux) keep('failure', tmux.screen());
    say(`the fake was offered, per request: ${JSON.stringify(fake.requests.map((r) => r.tools))}`);
    throw error;
  } finally {
    tmux?.stop();
    await stopLeftovers();
    await fake.close();
    rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  }
}

await main();
