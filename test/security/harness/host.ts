/** Host-side canaries for the security suite: what the verdicts are judged by. */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

export const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/** A secret value the probes recognise only by shape (`SKMCP-CANARY-<32 hex>`) and report as a hash. */
export function canaryToken(): string {
  return `SKMCP-CANARY-${randomBytes(16).toString('hex')}`;
}

export async function hostNamespaces(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of ['mnt', 'pid', 'uts', 'net', 'user', 'ipc', 'cgroup']) {
    out[k] = await readlink(`/proc/self/ns/${k}`);
  }
  return out;
}

/** Hash of a folder tree: paths, types, modes, contents and link targets. */
export async function treeHash(dir: string): Promise<string> {
  const h = createHash('sha256');
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      const p = join(d, name);
      const st = await lstat(p);
      h.update(`${rel}/${name}\0${st.mode}\0`);
      if (st.isDirectory()) await walk(p, `${rel}/${name}`);
      else if (st.isSymbolicLink()) h.update(await readlink(p));
      else h.update(await readFile(p));
    }
  };
  await walk(dir, '');
  return h.digest('hex');
}

export const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/** Counts connections and bytes a listener saw; stops itself on close(). */
export interface Listener {
  connections: number;
  received: string;
  close(): Promise<void>;
}

function track(server: Server, l: { connections: number; received: string }) {
  server.on('connection', (sock) => {
    l.connections++;
    sock.on('data', (d) => (l.received += d.toString()));
    sock.on('error', () => undefined);
  });
}

export async function tcpListener(): Promise<Listener & { port: number }> {
  const server = createServer();
  const l = { connections: 0, received: '', port: 0 };
  track(server, l);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  l.port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  server.unref();
  return Object.assign(l, { close: () => new Promise<void>((r) => server.close(() => r())) });
}

export async function unixListener(path: string): Promise<Listener> {
  const server = createServer();
  const l = { connections: 0, received: '' };
  track(server, l);
  await new Promise<void>((r) => server.listen(path, r));
  server.unref();
  return Object.assign(l, { close: () => new Promise<void>((r) => server.close(() => r())) });
}

export async function udpListener(): Promise<Listener & { port: number }> {
  const sock = createSocket('udp4');
  const l = { connections: 0, received: '', port: 0 };
  sock.on('message', (m) => {
    l.connections++;
    l.received += m.toString('hex');
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  l.port = sock.address().port;
  sock.unref();
  return Object.assign(l, { close: () => new Promise<void>((r) => sock.close(() => r())) });
}

/** A harmless host process (`sleep`) a probe may try to see or kill. Stopped by pid. */
export function canaryProcess(): { pid: number; alive(): boolean; stop(): void } {
  const child = spawn('/bin/sleep', ['300'], { argv0: 'skmcp-canary-sleeper', stdio: 'ignore' });
  const pid = child.pid!;
  let exited = false;
  child.on('exit', () => (exited = true));
  child.unref();
  return {
    pid,
    alive: () => !exited,
    stop: () => {
      if (!exited) process.kill(pid, 'SIGKILL');
    },
  };
}
