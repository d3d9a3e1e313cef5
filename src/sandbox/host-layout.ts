import { lstat, readlink } from 'node:fs/promises';

/** The host's system folders as the sandbox will mirror them (read-only). */
export interface HostLayout {
  /** `[target, link]` pairs recreated as symlinks (merged-/usr: `/bin -> usr/bin`). */
  symlinks: Array<[string, string]>;
  /** System folders bound read-only (`/usr` always; `/bin`, `/lib`… where /usr is not merged). */
  systemDirs: string[];
  /** `/etc` entries every run gets (linker cache, alternatives, timezone, certificates, document tools' config). */
  etc: string[];
  /** `/etc` entries only a `network: full` run gets (resolver configuration). */
  etcNetwork: string[];
  /** `/proc` files this kernel has that are made unreadable inside (see {@link HIDDEN_PROC_FILES}). */
  hiddenProc: string[];
}

/** Host details a script has no use for (boot flags, kernel build config, boot id). */
export const HIDDEN_PROC_FILES = ['/proc/cmdline', '/proc/config.gz', '/proc/sys/kernel/random/boot_id'];

const ROOT_LINKS = ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];
/**
 * Mounted read-only when present. Each holds program configuration and no secrets: fontconfig (`/etc/fonts`),
 * LibreOffice's registry (`/usr/lib/libreoffice/share/registry` links to `/etc/libreoffice/registry` on Debian),
 * ImageMagick's policy, Ghostscript's font maps, libpaper's paper size (Ghostscript, poppler). Left out on purpose:
 * `/etc/gitconfig` (it can name credential helpers and hold `http.extraHeader` tokens); an operator who wants it adds
 * it as a read-only path.
 */
const ETC = [
  '/etc/ld.so.cache',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/fonts',
  '/etc/libreoffice',
  '/etc/ImageMagick-6',
  '/etc/ImageMagick-7',
  '/etc/ghostscript',
  '/etc/papersize',
  '/etc/libpaper.d',
  '/etc/mime.types',
];
const ETC_NETWORK = [
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/gai.conf',
  '/etc/host.conf',
  '/etc/services',
  '/etc/protocols',
];

/** Reads how `/bin`, `/lib`… relate to `/usr` on this host. */
export async function detectHostLayout(): Promise<HostLayout> {
  const symlinks: Array<[string, string]> = [];
  const systemDirs = ['/usr'];
  for (const p of ROOT_LINKS) {
    const st = await lstat(p).catch(() => undefined);
    if (st === undefined) continue;
    if (st.isSymbolicLink()) {
      const target = await readlink(p);
      // Only links into /usr are mirrored; anything else is left out rather than followed.
      if (/^(\/?usr\/)[a-z0-9_]+$/.test(target)) symlinks.push([target.replace(/^\//, ''), p]);
    } else if (st.isDirectory()) {
      systemDirs.push(p);
    }
  }
  const hiddenProc: string[] = [];
  for (const p of HIDDEN_PROC_FILES)
    if ((await lstat(p).catch(() => undefined)) !== undefined) hiddenProc.push(p);
  return { symlinks, systemDirs, etc: ETC, etcNetwork: ETC_NETWORK, hiddenProc };
}

/** Is `p` the same as or below one of `dirs`? */
export function isUnder(p: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => p === d || p.startsWith(d.endsWith('/') ? d : `${d}/`));
}
