import type { GatedFixture } from '../../helpers/gated-fixture.js';

/** `status:decision:reason:channel` per call of the fixture's audit log, oldest first. */
export function callDecisions(fx: GatedFixture): string[] {
  const a = fx.audit();
  try {
    return a.listCalls().map((r) => {
      const channel = a.getCall(r.callId)?.approval?.channel ?? '-';
      return `${r.status ?? r.state}:${r.approvalDecision ?? '-'}:${r.approvalReason ?? '-'}:${channel}`;
    });
  } finally {
    a.close();
  }
}
