// The tokens page: making a token (its secret shown once, in this page only), revoking
// one, and, for admins, users' roles. Every change is an API call with the session cookie.
(function () {
  'use strict';
  const { api, problem } = window.Toolhost;
  const show = (id, text) => {
    const p = document.getElementById(id);
    if (!p) return;
    p.textContent = text;
    p.hidden = !text;
  };

  const form = document.getElementById('token-form');
  if (form) {
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      show('token-error', '');
      const data = new FormData(form);
      const body = { name: data.get('name').trim(), scopes: data.getAll('scopes') };
      if (data.get('agent')) body.agent = data.get('agent');
      if (data.get('user')) body.user = data.get('user').trim();
      const days = Number(data.get('expires'));
      if (days) body.expires_at = Date.now() + days * 86400000;
      if (!body.scopes.length) { show('token-error', 'Pick at least one scope.'); return; }
      const res = await api('POST', '/tokens', body);
      if (!res.ok) { show('token-error', problem(res)); return; }
      const made = document.getElementById('token-made');
      document.getElementById('token-secret').value = res.body.secret;
      made.hidden = false;
      document.getElementById('token-secret').select();
      form.reset();
    });
    document.getElementById('token-copy').addEventListener('click', async () => {
      const input = document.getElementById('token-secret');
      input.select();
      try { await navigator.clipboard.writeText(input.value); } catch (_) { /* selected for the user to copy */ }
    });
  }

  for (const button of document.querySelectorAll('[data-revoke]')) {
    button.addEventListener('click', async () => {
      const id = button.getAttribute('data-revoke');
      if (!window.confirm('Revoke this token? Whatever uses it stops working at once.')) return;
      const res = await api('DELETE', `/tokens/${encodeURIComponent(id)}`);
      if (!res.ok) { show('revoke-error', problem(res)); return; }
      const row = button.closest('tr');
      const status = row.querySelector('[data-status]');
      status.textContent = 'revoked';
      status.className = 'badge bad';
      button.remove();
    });
  }

  for (const select of document.querySelectorAll('[data-role-of]')) {
    select.addEventListener('change', async () => {
      const name = select.getAttribute('data-role-of');
      const res = await api('PUT', `/users/${encodeURIComponent(name)}`, { role: select.value });
      show('user-error', res.ok ? '' : problem(res));
    });
  }
  const users = document.getElementById('user-form');
  if (users) {
    users.addEventListener('submit', async (e) => {
      e.preventDefault();
      const data = new FormData(users);
      const res = await api('PUT', `/users/${encodeURIComponent(data.get('name').trim())}`, { role: data.get('role') });
      if (!res.ok) { show('user-error', problem(res)); return; }
      window.location.reload();
    });
  }
})();
