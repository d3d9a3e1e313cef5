/**
 * Whether process `pid` exists on this host, as this process sees pids (its pid namespace): signal 0 succeeds, or
 * fails with EPERM (it exists, owned by someone else). A recycled pid only makes something look alive longer.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
