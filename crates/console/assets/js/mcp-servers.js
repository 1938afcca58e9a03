// The MCP server form: reads the fields into the API's body (secrets left empty are
// sent as null, which keeps the stored value), saves with the version read (a 409 says
// someone else changed it), tests the settings as they stand in the form (the server
// lists its tools; none is called), and removes the server.
(function () {
  'use strict';
  const form = document.getElementById('server-form');
  if (!form) return;
  const { api, problem, el } = window.Toolhost;
  const name = form.getAttribute('data-name');
  const fromConfig = form.getAttribute('data-config') === 'true';
  let version = Number(form.getAttribute('data-version'));
  const error = document.getElementById('server-error');
  const status = document.getElementById('server-status');
  const say = (p, text) => { p.textContent = text; p.hidden = !text; };

  // Only the chosen transport's fields show.
  const kind = () => form.querySelector('input[name=kind]:checked')?.value ?? 'stdio';
  const showKind = () => {
    for (const box of form.querySelectorAll('[data-kind]')) box.hidden = box.getAttribute('data-kind') !== kind();
  };
  form.addEventListener('change', (e) => { if (e.target.name === 'kind') showKind(); });
  showKind();

  let rows = 0;
  form.addEventListener('click', (e) => {
    const add = e.target.closest('[data-add]');
    if (add) {
      rows += 1;
      const list = form.querySelector(`[data-pairs="${add.getAttribute('data-add')}"]`);
      const k = `new-k-${rows}`;
      const v = `new-v-${rows}`;
      list.append(el('div', { class: 'row pair' },
        el('label', { class: 'sr', for: k, text: 'Name' }), el('input', { id: k, 'data-key': true }),
        el('label', { class: 'sr', for: v, text: 'Value' }), el('input', { id: v, 'data-value': true, type: 'password', autocomplete: 'off' }),
        el('button', { type: 'button', class: 'secondary', 'data-remove': true, 'aria-label': 'Remove', text: '×' })));
      list.lastChild.querySelector('[data-key]').focus();
    }
    const remove = e.target.closest('[data-remove]');
    if (remove) remove.closest('.pair').remove();
  });

  function pairs(which) {
    const out = {};
    for (const row of form.querySelectorAll(`[data-pairs="${which}"] .pair`)) {
      const key = row.querySelector('[data-key]').value.trim();
      if (!key) continue;
      const value = row.querySelector('[data-value]').value;
      out[key] = value === '' && row.hasAttribute('data-stored') ? null : value;
    }
    return out;
  }

  function body() {
    const f = new FormData(form);
    const b = {};
    if (name) { b.name = name; b.version = version; } else { b.name = (f.get('name') || '').trim(); }
    if (kind() === 'http') {
      b.url = (f.get('url') || '').trim();
      b.headers = pairs('headers');
      const token = f.get('bearer_token');
      if (f.get('remove_bearer')) b.bearer_token = '';
      else if (token) b.bearer_token = token;
    } else {
      b.command = (f.get('command') || '').split('\n').map((s) => s.trim()).filter(Boolean);
      b.env = pairs('env');
      if (f.get('cwd')) b.cwd = f.get('cwd').trim();
      b.sandbox = f.get('sandbox') !== null;
      b.network = f.get('network') !== null;
    }
    if (f.get('icon')) b.icon = f.get('icon').trim();
    if (f.get('description')) b.description = f.get('description').trim();
    if (f.get('timeout')) b.timeout = Number(f.get('timeout'));
    return b;
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    say(error, ''); say(status, '');
    const b = body();
    const res = name
      ? await api('PUT', `/mcp-servers/${encodeURIComponent(name)}`, b)
      : await api('POST', '/mcp-servers', (() => { delete b.version; return b; })());
    if (res.status === 409) {
      say(error, `${problem(res)}. Your edits are still here: reload the page in another tab to see the other change, then save again here.`);
      return;
    }
    if (!res.ok) { say(error, problem(res)); return; }
    if (!name) { window.location.assign(`/mcp-servers/${encodeURIComponent(res.body.name)}?saved=1`); return; }
    version = res.body.version;
    say(status, 'Saved. Agents granted this server get the change from their next turn.');
  });

  document.getElementById('server-test').addEventListener('click', async () => {
    say(error, '');
    const section = document.getElementById('test-result');
    const summary = document.getElementById('test-summary');
    const list = document.getElementById('test-tools');
    section.hidden = false;
    summary.textContent = 'Connecting…';
    list.replaceChildren();
    const res = fromConfig
      ? await api('POST', `/mcp-servers/${encodeURIComponent(name)}/test`)
      : await api('POST', '/mcp-servers/test', (() => { const b = body(); delete b.version; return b; })());
    if (!res.ok) { summary.textContent = ''; say(error, problem(res)); return; }
    if (!res.body.success) {
      summary.textContent = `It failed: ${res.body.error}`;
      summary.className = 'error';
      return;
    }
    summary.className = '';
    summary.textContent = `It answered with ${res.body.tools.length} tools (none was called).`;
    for (const t of res.body.tools) {
      list.append(el('li', { 'data-tool': t.name }, el('strong', { text: t.name }), el('p', { text: t.description })));
    }
  });

  const remove = document.getElementById('server-remove');
  if (remove) {
    remove.addEventListener('click', async () => {
      if (!window.confirm(`Remove the MCP server ${name}? Agents granted it lose its tools from their next turn.`)) return;
      const res = await api('DELETE', `/mcp-servers/${encodeURIComponent(name)}?version=${version}`);
      if (!res.ok) { say(error, problem(res)); return; }
      window.location.assign('/mcp-servers');
    });
  }
})();
