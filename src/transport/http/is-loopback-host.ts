import { isIP } from 'node:net';

/**
 * Whether a bind address only accepts connections from this machine: `localhost`, 127.0.0.0/8, `::1` (with or
 * without brackets) and IPv4-mapped loopback. Wildcards (`0.0.0.0`, `::`) and every other address are not loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h) || h === '0:0:0:0:0:0:0:1';
  return false;
}
