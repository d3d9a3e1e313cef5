/**
 * The browser half of the passkey ceremonies, served from the secret path (no inline code, CSP `script-src 'self'`).
 * Enrolment: the `#enroll` button creates a credential and posts it to `enroll/finish`. Approval: a console
 * decision form marked `data-passkey` sends an approving decision only with an assertion over the challenge the
 * server issued for that call and decision (`…/passkey-options`, then `…/passkey`); the other buttons post as usual.
 * WebAuthn takes `localhost` as a secure origin and an RP id, not `127.0.0.1`: a page opened there moves over.
 */
export const PASSKEY_JS = `(() => {
  const b64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  const bytes = (s) => {
    const t = s.replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(t + '='.repeat((4 - (t.length % 4)) % 4)), (c) => c.charCodeAt(0));
  };
  const say = (el, text) => { if (el) el.textContent = text; };
  const post = async (url, body) => {
    const res = await fetch(url, {
      method: 'POST', credentials: 'omit', headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || 'refused (' + res.status + ')');
    return data;
  };
  const marked = document.querySelector('#enroll, form.decide[data-passkey]');
  if (marked && location.hostname === '127.0.0.1') {
    location.replace(location.href.replace('//127.0.0.1:', '//localhost:'));
    return;
  }
  const enroll = document.getElementById('enroll');
  if (enroll) {
    const status = document.getElementById('enroll-status');
    enroll.addEventListener('click', async () => {
      enroll.disabled = true;
      say(status, 'Follow your browser or device to create the passkey…');
      try {
        const o = await post('enroll/options', {});
        const cred = await navigator.credentials.create({ publicKey: {
          ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) },
          excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
        } });
        const r = cred.response;
        const done = await post('enroll/finish', {
          id: cred.id, rawId: b64u(cred.rawId), type: cred.type,
          clientExtensionResults: cred.getClientExtensionResults(),
          response: {
            clientDataJSON: b64u(r.clientDataJSON), attestationObject: b64u(r.attestationObject),
            transports: r.getTransports ? r.getTransports() : [],
          },
        });
        // The link is spent: no button left that could only fail.
        enroll.hidden = true;
        say(status, 'Enrolled: ' + done.label + '. You can close this page.');
      } catch (e) {
        enroll.disabled = false;
        say(status, 'Not enrolled: ' + e.message);
      }
    });
  }
  for (const form of document.querySelectorAll('form.decide[data-passkey]')) {
    const status = document.createElement('p');
    status.setAttribute('role', 'status');
    form.after(status);
    form.addEventListener('submit', async (ev) => {
      const button = ev.submitter;
      if (!button || !String(button.value).startsWith('approved')) return;
      ev.preventDefault();
      const csrf = form.querySelector('input[name=csrf]').value;
      const decision = button.value;
      // One ceremony at a time: a second click would ask the server for another challenge meanwhile.
      const buttons = [...form.querySelectorAll('button')];
      for (const b of buttons) b.disabled = true;
      say(status, 'Confirm with your passkey…');
      try {
        const o = await post(form.action + '/passkey-options', { csrf, decision });
        const cred = await navigator.credentials.get({ publicKey: {
          ...o, challenge: bytes(o.challenge),
          allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
        } });
        const r = cred.response;
        await post(form.action + '/passkey', { csrf, decision, response: {
          id: cred.id, rawId: b64u(cred.rawId), type: cred.type,
          clientExtensionResults: cred.getClientExtensionResults(),
          response: {
            clientDataJSON: b64u(r.clientDataJSON), authenticatorData: b64u(r.authenticatorData),
            signature: b64u(r.signature), userHandle: r.userHandle ? b64u(r.userHandle) : undefined,
          },
        } });
        location.assign(form.action);
      } catch (e) {
        for (const b of buttons) b.disabled = false;
        say(status, 'Not approved: ' + e.message);
      }
    });
  }
})();
`;
