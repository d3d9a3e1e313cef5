// A stand-in for the server process, run by the security suite with an extra non-CLOEXEC fd (fd 20)
// pointing at a canary file, as a leaky parent would leave it. It runs one plan through the real
// sandbox and prints the outcome as JSON. Input: one JSON object on stdin.
import { fstatSync } from 'node:fs';
import { register } from 'node:module';

register('./ts-loader.mjs', import.meta.url);
const { createSandbox } = await import('../../../src/sandbox/create-sandbox.ts');
const { silentLogger } = await import('../../../src/log.ts');

const hasFd = (fd) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { plan, bwrapCandidates } = JSON.parse(input);
plan.stdin = Buffer.from(plan.stdin, 'base64');
const sandbox = createSandbox({
  log: silentLogger(),
  env: process.env,
  ...(bwrapCandidates ? { bwrapCandidates } : {}),
});
try {
  const r = await sandbox.run(plan);
  process.stdout.write(
    JSON.stringify({
      canaryFdOpen: hasFd(20),
      exitCode: r.exitCode,
      stdout: r.stdout.toString(),
      stderr: r.stderr.toString(),
    }),
  );
} catch (e) {
  process.stdout.write(JSON.stringify({ code: e.code ?? 'ERROR', message: String(e.message ?? e) }));
} finally {
  await sandbox.dispose();
}
