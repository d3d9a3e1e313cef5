/** Bounds on what one HTTP client can make the server hold. */
export interface HttpLimits {
  /** Largest request body accepted; a larger one gets 413 and the connection is closed. */
  maxBodyBytes: number;
  /** Largest request head (request line + headers); Node answers 431 past it. */
  maxHeaderBytes: number;
  /**
   * POSTs in flight per client, past which a request gets 429. A client is a legacy session; for modern
   * (stateless) requests it is the principal (token), or the peer address when there is no token. People who share
   * one token are one client, so the default leaves room for a small team.
   */
  maxInFlightPerClient: number;
  /**
   * `subscriptions/listen` streams (2026-07-28 era) open at once per client (token, or peer address without one);
   * more get 429. Each stays open as long as its client keeps it, so without a cap one client could hold every
   * connection the server has.
   */
  maxListenStreamsPerClient: number;
  /** Legacy sessions open at once; a new `initialize` past it gets 503. */
  maxSessions: number;
  /** Legacy sessions per client (token and peer address); past it, the client's least recently used idle one is closed. */
  maxSessionsPerClient: number;
  /** A legacy session with no request in flight for this long is closed, even if it holds an idle GET stream. */
  sessionIdleMs: number;
  /** How long shutdown waits for running requests before it closes their connections. */
  shutdownGraceMs: number;
  /** How long a client may take to send a whole request (head and body). */
  requestTimeoutMs: number;
  /** How long a client may take to send a request's head (request line and headers). */
  headersTimeoutMs: number;
  /**
   * Connections open at once. At the cap, the oldest connection that has not yet delivered a whole, authenticated
   * request is closed for the newcomer, else the oldest of the client holding the most. One client holds at most
   * three quarters of them (past that, its own oldest is closed). Also kept under half the process's open-file limit.
   */
  maxConnections: number;
  /** `/healthz` reports session and in-flight counts to callers without a token (no token configured). */
  healthDetails: boolean;
  /**
   * Idle time after a busy spell before the server collects garbage and gives the memory back. A full collection of
   * an idle heap also drops most of V8's optimized code, so a pause of a few seconds between calls (a model thinking)
   * is not taken for idleness: the next calls would run slower while their code compiles again.
   */
  reclaimIdleMs: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxInFlightPerClient: 64,
  maxListenStreamsPerClient: 32,
  maxSessions: 1000,
  maxSessionsPerClient: 100,
  sessionIdleMs: 30 * 60 * 1000,
  shutdownGraceMs: 10_000,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  maxConnections: 1024,
  healthDetails: false,
  reclaimIdleMs: 10_000,
};
