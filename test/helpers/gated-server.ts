import { afterEach } from 'vitest';
import { gatedFixture, type GatedFixture } from './gated-fixture.js';
import { startServer, type Connected, type Era } from './server-under-test.js';
import type { ConnectOptions } from './stdio-client.js';

export interface GatedServerOptions {
  /** Protocol era the client negotiates; `auto` unless given. */
  era?: Era;
  /** Whether the client declares form elicitation (it does unless `false`). */
  elicitation?: boolean;
  /** The client's capabilities instead (e.g. URL-mode elicitation); `elicitation` is then not read. */
  capabilities?: ConnectOptions['capabilities'];
  /** Edits the fixture (adds skills, …) before the server starts. */
  setup?: (fx: GatedFixture) => void;
  /** More server arguments, after the fixture's (or made from the fixture). */
  args?: string[] | ((fx: GatedFixture) => string[]);
  env?: Record<string, string>;
}

export interface GatedServer {
  fx: GatedFixture;
  c: Connected;
  /** Closes the client (the server exits) and removes the fixture. */
  close: () => Promise<void>;
}

/** The built binary over stdio on a fresh gated fixture (see `gatedFixture`), with a real MCP client. */
export async function startGatedServer(config: string, opts: GatedServerOptions = {}): Promise<GatedServer> {
  const fx = gatedFixture(config);
  try {
    opts.setup?.(fx);
    const c = await startServer({
      transport: 'stdio',
      era: opts.era ?? 'auto',
      args: [...fx.args, ...(typeof opts.args === 'function' ? opts.args(fx) : (opts.args ?? []))],
      capabilities: opts.capabilities ?? (opts.elicitation === false ? {} : { elicitation: { form: {} } }),
      ...(opts.env === undefined ? {} : { env: opts.env }),
    });
    return {
      fx,
      c,
      close: async () => {
        // A test may have closed the client already to read the audit log; closing again is harmless.
        await c.close().catch(() => undefined);
        fx.cleanup();
      },
    };
  } catch (e) {
    fx.cleanup();
    throw e;
  }
}

/** `startGatedServer` for the tests of a describe block: every server started is closed after each test. */
export function gatedServers(): (config: string, opts?: GatedServerOptions) => Promise<GatedServer> {
  const started: GatedServer[] = [];
  afterEach(async () => {
    for (const s of started.splice(0)) await s.close();
  });
  return async (config, opts) => {
    const s = await startGatedServer(config, opts);
    started.push(s);
    return s;
  };
}

/** Answers every approval form the client is shown with `decision`. */
export function approveEvery(c: Connected, decision = 'approved'): void {
  c.client.setRequestHandler('elicitation/create', () =>
    Promise.resolve({ action: 'accept', content: { decision } }),
  );
}
