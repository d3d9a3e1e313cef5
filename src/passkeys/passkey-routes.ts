import { timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import type { CallLog } from '../audit/call-log.js';
import { isSkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ApprovalQueue } from '../console/approval-queue.js';
import type { SharedApprovals } from '../console/inbound-approvals.js';
import type { RouteRequest, RouteResponse } from '../console/route-types.js';
import type { ConsolePasskeys } from './console-passkeys.js';

const PasskeyRequestSchema = z.strictObject({
  csrf: z.string().min(1).max(200).describe('The token bound to this approval, from the form'),
  decision: z.enum(['approved', 'approved_for_session']).describe('The approving decision to sign'),
  response: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The browser's assertion (PublicKeyCredential as JSON); absent when asking for the challenge"),
});

export interface PasskeyRouteDeps {
  queue: ApprovalQueue;
  /** Approvals waiting on other server processes (a shared log): decided here, recorded for the one holding it. */
  shared: Pick<SharedApprovals, 'get' | 'decide'>;
  passkeys: ConsolePasskeys;
  audit: () => Promise<CallLog>;
  log: Logger;
  /** `http://localhost:PORT`: the page's origin, as WebAuthn reports it. */
  origin: () => string;
}

const json = (status: number, value: unknown): RouteResponse => ({
  status,
  type: 'application/json; charset=utf-8',
  body: JSON.stringify(value),
});

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * `POST approvals/ID/passkey-options` (the challenge for this call and decision) and `POST approvals/ID/passkey`
 * (the assertion): only then is the approving decision handed to the queue, with the evidence for the audit log.
 */
export async function routePasskey(
  id: string,
  step: 'passkey-options' | 'passkey',
  req: RouteRequest,
  deps: PasskeyRouteDeps,
): Promise<RouteResponse> {
  if (req.contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/json')
    return json(415, { error: 'send JSON' });
  let body: unknown;
  try {
    body = JSON.parse(req.body ?? '');
  } catch {
    return json(400, { error: 'not JSON' });
  }
  const parsed = PasskeyRequestSchema.safeParse(body);
  if (!parsed.success) return json(400, { error: 'incomplete request: reload the page' });
  const { csrf, decision, response } = parsed.data;
  const own = deps.queue.get(id);
  const a = own ?? deps.shared.get(id);
  if (a === undefined) return json(404, { error: 'no such approval here' });
  if (!same(csrf, a.csrf)) return json(403, { error: 'this form does not belong to that approval' });
  if (a.state !== 'pending') return json(409, { error: 'this approval is no longer waiting' });
  try {
    if (step === 'passkey-options') {
      const c = (await (await deps.audit()).getCall(a.callId))?.call;
      if (c?.approvalKey == null || c.bundleSha256 === null)
        return json(409, { error: 'the call is not in the audit log' });
      const binding = {
        call_id: a.callId,
        approval_key: c.approvalKey,
        bundle_sha256: c.bundleSha256,
        input_sha256: c.inputSha256,
      };
      return json(200, await deps.passkeys.options(id, binding, decision));
    }
    if (response === undefined) return json(400, { error: 'no assertion' });
    const evidence = await deps.passkeys.verify(id, decision, response, deps.origin());
    const r =
      own !== undefined
        ? await deps.queue.decide(id, csrf, decision, evidence)
        : await deps.shared.decide(id, csrf, decision, evidence);
    if (r !== 'decided') return json(409, { error: 'this approval is no longer waiting' });
    deps.log.info(
      { approval: id, decision, credential: evidence.credential_id, approver: evidence.person?.name },
      'console passkey decision',
    );
    return json(200, { decided: decision });
  } catch (err) {
    if (!isSkillsError(err)) throw err;
    deps.log.warn({ approval: id, reason: err.message }, 'approval console refused a passkey');
    return json(403, { error: err.message });
  }
}

/**
 * Marks the console's decision forms on a page as passkey forms (the page script then asks for an assertion), each
 * with a line saying so: the person knows before pressing Approve that their passkey will be asked for.
 */
export const markPasskeyForms = (page: string): string =>
  page.replaceAll(
    '<form class="decide" method="post"',
    '<p class="muted">Approving asks for your enrolled passkey.</p>\n  <form class="decide" data-passkey method="post"',
  );
