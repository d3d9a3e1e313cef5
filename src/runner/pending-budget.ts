/** Limits on approvals waiting for an answer: each keeps its call (raw input included) in memory until then. */
export interface PendingLimits {
  perSession: number;
  perSessionBytes: number;
  total: number;
  totalBytes: number;
}

interface Held {
  sessionId: string;
  bytes: number;
}

/**
 * The runner's pending approvals, keyed by call id, within budgets of count and input bytes per session and
 * overall. `reserve` before `set`: it returns why a new one does not fit (then nothing is asked or kept); `delete`
 * and `clear` give the room back.
 */
export class PendingApprovals<V> extends Map<string, V> {
  private readonly held = new Map<string, Held>();
  private readonly limits: PendingLimits;

  constructor(limits: PendingLimits) {
    super();
    this.limits = limits;
  }

  /** Takes room for `callId`, or returns why there is none. */
  reserve(callId: string, sessionId: string, bytes: number): string | undefined {
    let count = 0;
    let sessionBytes = 0;
    let totalBytes = 0;
    for (const h of this.held.values()) {
      totalBytes += h.bytes;
      if (h.sessionId !== sessionId) continue;
      count++;
      sessionBytes += h.bytes;
    }
    const l = this.limits;
    if (count >= l.perSession)
      return `this session already has ${count} approvals waiting (limit ${l.perSession})`;
    if (sessionBytes + bytes > l.perSessionBytes)
      return `this session's waiting approvals would hold more than ${l.perSessionBytes} bytes of input`;
    if (this.held.size >= l.total) return `the server already has ${this.held.size} approvals waiting`;
    if (totalBytes + bytes > l.totalBytes)
      return `the server's waiting approvals would hold more than ${l.totalBytes} bytes of input`;
    this.held.set(callId, { sessionId, bytes });
    return undefined;
  }

  override delete(callId: string): boolean {
    this.held.delete(callId);
    return super.delete(callId);
  }

  override clear(): void {
    this.held.clear();
    super.clear();
  }
}
