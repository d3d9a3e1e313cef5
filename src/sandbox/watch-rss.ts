import { execFile } from 'node:child_process';

/** Sums the RSS (KiB) of every process in a process group, via `ps` (macOS has no /proc). */
export function groupRssKiB(pgid: number): Promise<number> {
  return new Promise((resolve) =>
    execFile('/bin/ps', ['-A', '-o', 'pgid=,rss='], { timeout: 2_000 }, (err, out) => {
      if (err) return resolve(0);
      let sum = 0;
      for (const line of out.split('\n')) {
        const [g, rss] = line.trim().split(/\s+/).map(Number);
        if (g === pgid && rss !== undefined && Number.isFinite(rss)) sum += rss;
      }
      resolve(sum);
    }),
  );
}

export interface RssWatch {
  start(pgid: number): void;
  stop(): void;
  /** True once the group went over the limit (and `onExceed` ran). */
  exceeded(): boolean;
}

/**
 * Best-effort memory limit where there are no cgroups (macOS): samples the process group's RSS every
 * `intervalMs` and calls `onExceed` (which kills the group) when it passes `limitKiB`. Memory allocated
 * and released between samples is not seen.
 */
export function watchRss(limitKiB: number, intervalMs: number, onExceed: () => void): RssWatch {
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  return {
    start(pgid) {
      timer = setInterval(() => {
        void groupRssKiB(pgid).then((kib) => {
          if (kib > limitKiB && !over) {
            over = true;
            onExceed();
          }
        });
      }, intervalMs);
    },
    stop: () => clearInterval(timer),
    exceeded: () => over,
  };
}
