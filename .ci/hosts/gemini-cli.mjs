// Gemini CLI in headless mode (`gemini -p`) against the built server and a fake Gemini API: it declares no
// elicitation, so the run must be refused with the text that says how to allow it, and nothing runs.
// Usage: node .ci/hosts/gemini-cli.mjs BIN_DIR HOME_DIR (HOME_DIR holds .gemini/settings.json and a trusted
// project/ folder).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startFakeGemini } from './fake-gemini.mjs';

const root = resolve(import.meta.dirname, '../..');
const [binDir, home] = process.argv.slice(2);
const input = JSON.parse(readFileSync(join(root, 'skills/csv-stats/assets/example-input.json'), 'utf8'));
const fake = await startFakeGemini({ tool: 'csv-stats', input });
try {
  const env = {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: home,
    GEMINI_API_KEY: 'fake-gemini-key',
    GOOGLE_GEMINI_BASE_URL: fake.url,
    XDG_STATE_HOME: join(home, 'state'),
  };
  const options = { cwd: join(home, 'project'), env, encoding: 'utf8', timeout: 120_000 };
  const run = promisify(execFile)('gemini', ['-p', 'Run csv-stats on the example', '--yolo'], options);
  run.child.stdin.end();
  const { stdout } = await run;
  const received = JSON.stringify(fake.functionResponses);
  console.log(
    `gemini-cli: gemini -p: ${stdout.trim()}\ngemini-cli: the model received: ${received.slice(0, 600)}`,
  );
  if (!/no one can be asked here/.test(received)) {
    throw new Error(
      `gemini -p: the model did not receive the refusal (declared: ${[...fake.declared].join(', ')})`,
    );
  }
} finally {
  await fake.close();
}
