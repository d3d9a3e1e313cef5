import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe } from 'vitest';
import { tcpListener, udpListener, unixListener } from './harness/host.js';
import { blocked, blockedIf, securitySuite } from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

describe('network', () => {
  securityControl(
    {
      id: 'net-control-full',
      category: 'network',
      title: 'with the network profile, the host loopback listener is reached (what "full" gives up)',
    },
    async (ctx) => {
      const l = await tcpListener();
      ctx.defer(() => l.close());
      const r = await ctx.probe<{ errno: number }>(
        'tcp',
        { port: l.port, allow_host_net: true },
        { plan: { network: 'full', profile: 'network' } },
      );
      return r.errno === 0 && l.connections === 1;
    },
  );

  securityCase(
    { id: 'net-tcp-loopback', category: 'network', title: 'connect to a host 127.0.0.1 TCP listener' },
    async (ctx) => {
      const l = await tcpListener();
      ctx.defer(() => l.close());
      ctx.untouched('listener saw no connection', () => l.connections === 0);
      const r = await ctx.probe<{ errno: number }>('tcp', { port: l.port });
      return blockedIf(r.errno !== 0, `connect failed (errno ${r.errno}): own network namespace`);
    },
  );

  securityCase(
    {
      id: 'net-udp-loopback',
      category: 'network',
      title: 'send a datagram to a host 127.0.0.1 UDP listener',
    },
    async (ctx) => {
      const l = await udpListener();
      ctx.defer(() => l.close());
      ctx.untouched('listener received nothing', () => l.connections === 0);
      await ctx.probe('udp', { port: l.port });
      return blocked("the datagram went to the sandbox's own lo");
    },
  );

  securityCase(
    { id: 'net-only-lo', category: 'network', title: 'the only network interface is lo' },
    async (ctx) => {
      const r = await ctx.probe<{ interfaces: string[] }>('interfaces');
      return blockedIf(r.interfaces.join(',') === 'lo', `interfaces: ${r.interfaces.join(', ')}`);
    },
  );

  securityCase(
    { id: 'net-dns', category: 'network', title: 'DNS lookups fail (no resolver, no route)' },
    async (ctx) => {
      const r = await ctx.probe<{ results: Record<string, unknown> }>('dns');
      const invalid = r.results['skills-mcp-canary.invalid'];
      return blockedIf(
        typeof invalid === 'string' && r.results['resolv.conf'] === false,
        `lookup: ${String(invalid)}; localhost from the synthesized /etc/hosts`,
      );
    },
  );

  securityCase(
    { id: 'net-unix-path', category: 'network', title: 'connect to a host unix socket by path' },
    async (ctx) => {
      const dir = await ctx.h.dirs.make('skills-mcp-sec-sock-', 0o777);
      const path = join(dir, 'agent.sock');
      const l = await unixListener(path);
      ctx.defer(() => l.close());
      ctx.untouched('socket saw no connection', () => l.connections === 0);
      const r = await ctx.probe<{ results: Record<string, number> }>('unix', { path });
      return blockedIf(r.results.path !== 0, 'the socket path is not mounted');
    },
  );

  securityCase(
    { id: 'net-unix-abstract', category: 'network', title: 'connect to a host abstract unix socket' },
    async (ctx) => {
      const name = `skmcp-abstract-${randomBytes(6).toString('hex')}`;
      const l = await unixListener(`\0${name}`);
      ctx.defer(() => l.close());
      ctx.untouched('socket saw no connection', () => l.connections === 0);
      const r = await ctx.probe<{ results: Record<string, number> }>('unix', { abstract: name });
      return blockedIf(r.results.abstract !== 0, 'abstract sockets belong to the network namespace');
    },
  );

  securityCase(
    {
      id: 'net-socket-families',
      category: 'network',
      title: 'AF_VSOCK, AF_PACKET, raw, AF_ALG, Bluetooth, CAN sockets',
    },
    async (ctx) => {
      const r = await ctx.probe<{ results: Record<string, number> }>('families');
      const open = Object.entries(r.results).filter(([, e]) => e === 0);
      return blockedIf(open.length === 0, 'refused (seccomp: EAFNOSUPPORT; raw needs CAP_NET_RAW)');
    },
  );

  securityCase(
    { id: 'net-io-uring', category: 'network', title: 'io_uring (bypasses socket syscall filters)' },
    async (ctx) => {
      const r = await ctx.probe<{ errno: number }>('io_uring');
      return blockedIf(r.errno !== 0, `io_uring_setup → errno ${r.errno} (seccomp)`);
    },
  );
});
