// Approves, denies, declines and dismisses a csv-stats run in the MCP Inspector's web app, driven in Chromium.
// Starts skills-mcp over HTTP (port 0), the Inspector web app (Node 22, through npx) on a free loopback port with
// a random API token, and headless Chromium; connects to skills-mcp over stdio (the README's command) and over
// HTTP (a config file), in both protocol eras; screenshots the approval form and the result at 1280x800 into the artifacts folder; checks each answer's
// record in the server's own audit log; stops every process group it started and checks none is left listening.
// Usage: node .ci/inspector-web.mjs ARTIFACTS_DIR (after npm run build).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const root = resolve(import.meta.dirname, '..');
const artifacts = resolve(process.argv[2] ?? join(root, 'test-artifacts', 'inspector-web'));
const work = mkdtempSync(join(tmpdir(), 'inspector-web-'));
const cli = join(root, 'dist', 'cli.js');
const skills = join(root, 'skills');
const exampleInput = JSON.parse(readFileSync(join(skills, 'csv-stats/assets/example-input.json'), 'utf8'));
const token = randomBytes(24).toString('hex');
const groups = []; // process groups this script started: { name, pid }

const say = (line) => console.log(`inspector-web: ${line}`);
const fail = (message) => {
  throw new Error(message);
};

/** Starts a command as the leader of a new process group, so stopping it reaches every child. */
function startGroup(name, command, args, options) {
  const child = spawn(command, args, { ...options, detached: true });
  groups.push({ name, pid: child.pid, child });
  return child;
}

function waitForLine(child, pattern, what) {
  return new Promise((resolveLine, reject) => {
    let seen = '';
    const onData = (chunk) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match) resolveLine(match);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready:\n${seen}`)));
  });
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Process group of a pid, from /proc (undefined once it is gone). */
function groupOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

const ours = () => new Set(groups.map((g) => g.pid));

/** Live pids in the process groups this script started. */
function ourProcesses() {
  const leaders = ours();
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => leaders.has(groupOf(pid)));
}

/** `ss -ltnp` lines of listening sockets owned by our process groups. */
function ourListeners() {
  const leaders = ours();
  return execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => [...line.matchAll(/pid=(\d+)/g)].some((m) => leaders.has(groupOf(Number(m[1])))));
}

async function stopGroup(leader) {
  try {
    process.kill(-leader, 'SIGTERM');
  } catch {
    // already gone
  }
  const inGroup = () => ourProcesses().filter((pid) => groupOf(pid) === leader);
  for (let i = 0; i < 100 && inGroup().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  if (inGroup().length > 0) fail(`process group ${leader} did not stop on SIGTERM`);
}

async function stopAll() {
  for (const { pid } of [...groups].reverse()) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  for (let i = 0; i < 100 && ourProcesses().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  for (const pid of ourProcesses()) {
    say(`process ${pid} ignored SIGTERM: SIGKILL`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // raced to exit
    }
  }
}

function audit(db) {
  const out = execFileSync(process.execPath, [cli, 'audit', 'list', '--json', '--audit', db], {
    encoding: 'utf8',
  });
  const parsed = JSON.parse(out);
  return parsed.calls ?? parsed;
}

// Three answers in a row refuse the same call: the loop guard (default 2) would refuse the third without asking.
const configFile = () => {
  const path = join(work, 'skills-mcp.yaml');
  writeFileSync(path, 'approval:\n  loop_guard: 5\n');
  return path;
};
// Over HTTP without a token the client's own approval form counts only with `http_elicitation: any` (this run is
// the only user of its loopback port).
const httpConfigFile = () => {
  const path = join(work, 'skills-mcp-http.yaml');
  writeFileSync(path, 'approval:\n  loop_guard: 5\n  http_elicitation: any\n');
  return path;
};

async function startHttpServer() {
  const server = startGroup(
    'skills-mcp --http',
    process.execPath,
    [
      cli,
      '--http',
      '--port',
      '0',
      '--config',
      httpConfigFile(),
      '--skills',
      skills,
      '--no-watch',
      '--audit',
      join(work, 'http.db'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const [, url] = await waitForLine(
    server,
    /over Streamable HTTP at (http:\/\/\S+\/mcp)/,
    'skills-mcp --http',
  );
  say(`skills-mcp --http (pid ${server.pid}) at ${url}`);
  return url;
}

async function startInspector(inspectorArgs) {
  const port = await freePort();
  const inspector = startGroup(
    'inspector',
    'npx',
    ['-y', '-p', 'node@22', '-p', '@modelcontextprotocol/inspector@2', '-c', `inspector ${inspectorArgs}`],
    {
      cwd: root, // the README runs it from the repository
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        CLIENT_PORT: String(port),
        MCP_SANDBOX_PORT: '0',
        MCP_APP_ORIGIN_PORT: '0',
        MCP_AUTO_OPEN_ENABLED: 'false',
        MCP_INSPECTOR_API_TOKEN: token,
        MCP_INSPECTOR_SECRET_STORE: 'memory',
        MCP_STORAGE_DIR: join(work, 'inspector-storage'),
      },
    },
  );
  const log = [];
  inspector.stdout.on('data', (d) => log.push(String(d)));
  inspector.stderr.on('data', (d) => log.push(String(d)));
  await waitForLine(inspector, /MCP Inspector Web is up and running/, 'the Inspector');
  say(`Inspector web app (process group ${inspector.pid}) at http://127.0.0.1:${port}`);
  return { origin: `http://127.0.0.1:${port}`, log, pid: inspector.pid };
}

async function startBrowser() {
  const profile = join(work, 'chromium-profile');
  const browser = startGroup(
    'chromium',
    '/usr/bin/chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
      '--remote-debugging-address=127.0.0.1',
      '--remote-debugging-port=0',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const [, ws] = await waitForLine(browser, /DevTools listening on (ws:\/\/\S+)/, 'Chromium');
  say(`Chromium (process group ${browser.pid})`);
  return chromium.connectOverCDP(ws);
}

/** Fills csv-stats' arguments with the example input and presses Execute Tool. */
async function execute(page) {
  const results = page.getByRole('button', { name: 'Close results' });
  if (await results.count()) await results.click();
  await page.getByRole('switch', { name: 'Edit as JSON' }).check({ force: true });
  await page.locator('textarea.ace_text-input').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(JSON.stringify(exampleInput));
  await page.getByRole('button', { name: 'Execute Tool' }).click();
  const form = page.getByRole('dialog').filter({ hasText: 'Elicitation Request' });
  await form.waitFor({ timeout: 60_000 });
  return form;
}

async function answer(form, decision) {
  const select = form.locator('input:not([type=hidden]):not([role=switch])');
  // Picking the option already selected would clear the select: pick only a different one.
  if ((await select.inputValue()) !== decision) {
    await select.click();
    await form.page().getByRole('option', { name: decision, exact: true }).click();
  }
  if ((await select.inputValue()) !== decision) fail(`the form's select shows ${await select.inputValue()}`);
  await form.getByRole('button', { name: 'Submit' }).click();
}

async function resultText(page) {
  const results = page.getByText('Results', { exact: true });
  await results.waitFor({ timeout: 120_000 });
  await page.waitForTimeout(500);
  return page.locator('main, body').first().innerText();
}

/** A refusal: the Inspector shows the tool's isError result, and the script did not run. */
async function refused(page, label, entry) {
  const text = await resultText(page);
  if (!text.includes('Tool Error') || text.includes('"rows": 8'))
    fail(`${entry.name}: ${label} did not refuse:\n${text}`);
  const why = /Tool Error\s+([^\n]+)/.exec(text)?.[1] ?? '';
  say(`${label}: refused ("${why.slice(0, 60)}")`);
}

/** One server entry of the Inspector config: every answer once, screenshots, the audit records. */
async function exercise(page, origin, entry) {
  say(`--- ${entry.name}`);
  await page.goto(`${origin}/?MCP_INSPECTOR_API_TOKEN=${token}`);
  const card = page
    .locator('.mantine-Card-root, .mantine-Paper-root')
    .filter({ has: page.getByText(entry.card, { exact: true }) })
    .filter({ has: page.getByRole('switch') })
    .last();
  await card.getByRole('switch').click({ force: true });
  await page.getByText('Connected', { exact: true }).first().waitFor({ timeout: 60_000 });
  const era = (await card.innerText()).match(/MCP (\d{4}-\d{2}-\d{2})/)?.[1];
  say(`connected, protocol revision ${era}`);
  if (era !== entry.expectRevision)
    fail(`${entry.name}: expected MCP ${entry.expectRevision}, the card says ${era}`);

  await page.getByText('Tools', { exact: true }).first().click();
  await page.getByText('csv-stats', { exact: true }).first().click();
  const listed = await page
    .locator('button')
    .filter({ hasText: /^Skill: / })
    .count();
  say(`tools listed: ${listed} skill tools`);

  // Approve once: the form, then the structured result.
  let form = await execute(page);
  const message = await form.innerText();
  for (const expected of [
    'Allow skill "csv-stats" to run scripts/main.py?',
    'scripts/main.py',
    /bundle [0-9a-f]{12}/,
    /Input: 2 keys, \d+ bytes \(sha256 [0-9a-f]{12}\)/,
    'Sandbox: profile default, network none',
    'Risk: LOW',
    "Reads: the skill's own files only",
    // The CSV is shown whole, line by line, under its digest.
    /csv \(\d+ characters, 9 lines, sha256 [0-9a-f]{12}\):/,
    '| 1008,north,gizmo,9,4.75,no',
    'Decision',
  ]) {
    const found = typeof expected === 'string' ? message.includes(expected) : expected.test(message);
    if (!found) fail(`${entry.name}: the approval form lacks ${expected}:\n${message}`);
  }
  const options = await (async () => {
    await form.locator('input:not([type=hidden]):not([role=switch])').click();
    const texts = await page.getByRole('option').allInnerTexts();
    await page.keyboard.press('Escape');
    return texts.map((t) => t.trim());
  })();
  say(
    `form shows skill, script, bundle prefix, input summary, sandbox, risk; options: ${options.join(' | ')}`,
  );
  await page.screenshot({ path: join(artifacts, `${entry.name}-form.png`) });
  await form.screenshot({ path: join(artifacts, `${entry.name}-form-dialog.png`) });
  await answer(form, 'Approve once');
  const approved = await resultText(page);
  if (!/"rows": 8/.test(approved))
    fail(`${entry.name}: no structured result after Approve once:\n${approved}`);
  await page.screenshot({ path: join(artifacts, `${entry.name}-result.png`) });
  say('Approve once: structured result shown ("rows": 8)');

  // Deny (the form's default), the Inspector's Decline button, and Cancel (the form dismissed).
  form = await execute(page);
  await answer(form, 'Deny');
  await refused(page, 'Deny', entry);
  await page.screenshot({ path: join(artifacts, `${entry.name}-denied.png`) });

  // As a person would, the form is read before Decline and Cancel: skills-mcp takes a decline or cancel within 1 s
  // of asking for an answer given without showing the form (answered_unseen), not as the person's.
  form = await execute(page);
  await page.waitForTimeout(1_500);
  await form.getByRole('button', { name: 'Decline' }).click();
  await refused(page, 'Decline', entry);

  form = await execute(page);
  await page.waitForTimeout(1_500);
  await form.getByRole('button', { name: 'Cancel' }).click();
  await refused(page, 'Cancel (form dismissed)', entry);

  await page.getByRole('button', { name: 'Disconnect from server' }).click();
}

/** The server's own audit log, oldest first: every group of four calls is approve, deny, decline, cancel. */
function checkAudit(db, rounds, label) {
  const calls = audit(db)
    .filter((c) => c.tool === 'csv-stats')
    .sort((a, b) => a.requestedTs - b.requestedTs);
  const got = calls.map((c) => `${c.approvalDecision}/${c.approvalReason}/${c.state}/${c.status}`);
  say(`${label} audit (${db.split('/').pop()}): ${got.join(', ')}`);
  const want = [
    'approved/user/finished/ok',
    'denied/user/finished/denied',
    'denied/declined/finished/denied',
    'denied/cancelled/finished/denied',
  ];
  const expected = Array.from({ length: rounds }, () => want).flat();
  const ok = got.length === expected.length && expected.every((w, i) => got[i] === w);
  if (!ok) fail(`${label}: audit records differ from ${want.join(', ')} x ${rounds}`);
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  say(`artifacts (screenshots): ${artifacts}`);
  const listeningBefore = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' }).trim().split('\n').length;
  const httpUrl = await startHttpServer();
  // Over stdio: the README's command (the server runs on this Node: npx puts Node 22 first on the Inspector's
  // PATH), with -e pointing the server at this run's audit database and config. Over HTTP: a config file.
  const readme = (db, era) =>
    `-e SKILLS_MCP_AUDIT=${join(work, db)} -e SKILLS_MCP_CONFIG=${configFile()} ${era}` +
    ` ${process.execPath} dist/cli.js --skills ./skills`;
  const configPath = join(work, 'inspector.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        'skills-http-legacy': { type: 'http', url: httpUrl, protocolEra: 'legacy' },
        'skills-http-modern': { type: 'http', url: httpUrl, protocolEra: 'modern' },
      },
    }),
  );
  const legacy = '2025-11-25';
  const modern = '2026-07-28';
  const launches = [
    { args: readme('stdio-legacy.db', ''), entries: [{ name: 'stdio-legacy', card: 'node', era: legacy }] },
    {
      args: readme('stdio-modern.db', '--protocol-era modern'),
      entries: [{ name: 'stdio-modern', card: 'node', era: modern }],
    },
    {
      args: `--config ${configPath}`,
      entries: [
        { name: 'http-legacy', card: 'skills-http-legacy', era: legacy },
        { name: 'http-modern', card: 'skills-http-modern', era: modern },
      ],
    },
  ];
  const browser = await startBrowser();
  try {
    const page = await browser.contexts()[0].newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    for (const launch of launches) {
      const inspector = await startInspector(launch.args);
      for (const entry of launch.entries)
        await exercise(page, inspector.origin, { ...entry, expectRevision: entry.era });
      say(`our listening sockets while running:\n${ourListeners().join('\n')}`);
      await stopGroup(inspector.pid);
    }
  } finally {
    await browser.close().catch(() => {});
    await stopAll();
  }
  checkAudit(join(work, 'stdio-legacy.db'), 1, 'stdio legacy');
  checkAudit(join(work, 'stdio-modern.db'), 1, 'stdio modern');
  checkAudit(join(work, 'http.db'), 2, 'http legacy+modern');

  const left = ourProcesses();
  const listening = ourListeners();
  const listeningAfter = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' }).trim().split('\n').length;
  say(`after stop: ${left.length} processes and ${listening.length} listening sockets in our process groups`);
  say(
    `listening sockets on the machine: ${listeningBefore} before, ${listeningAfter} after (others run too)`,
  );
  if (left.length > 0 || listening.length > 0) fail(`left behind: ${left.join(' ')} ${listening.join('; ')}`);
  say(`screenshots: ${readdirSync(artifacts).join(' ')}`);
  say('all checks passed');
}

try {
  await main();
} catch (error) {
  await stopAll();
  console.error(`inspector-web: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
