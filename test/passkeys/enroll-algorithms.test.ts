import { describe, expect, it } from 'vitest';
import { createEnrolment } from '../../src/passkeys/enroll-ceremony.js';

describe('passkey enrolment options', () => {
  it('offers only EdDSA, ES256 and RS256 on every Node line, never ML-DSA (signatures too big to record)', async () => {
    const enrolment = createEnrolment({ label: 'alice', origin: 'http://localhost:4000', enrolled: [] });
    const o = (await enrolment.options()) as { pubKeyCredParams: { alg: number; type: string }[] };
    expect(o.pubKeyCredParams).toEqual([
      { alg: -8, type: 'public-key' },
      { alg: -7, type: 'public-key' },
      { alg: -257, type: 'public-key' },
    ]);
  });
});
