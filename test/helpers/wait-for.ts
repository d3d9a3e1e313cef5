/**
 * Resolves with what `check` returns once that is truthy (a boolean, or a value it found), polling every 25 ms;
 * `check` may be async. Rejects after `ms`, naming `what`. For a condition on a process's output, check the text it
 * printed (a line it logs when the thing happened), never a fixed sleep.
 */
export async function waitFor<T>(
  check: () => T | false | undefined | Promise<T | false | undefined>,
  ms = 10_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
