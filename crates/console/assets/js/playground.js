// The playground: checks the arguments before anything is sent (each error beside its
// field), runs the call through the API (POST /api/v1/calls, then its event stream), shows
// its progress (a bar that is determinate when the message says "N of M"), the elapsed
// time, a Cancel button, and the result: text as text, JSON pretty-printed, images as
// images, errors as errors. The form is drawn by the server from the tool's schema; the
// raw JSON editor holds the same arguments and is always one click away.
(function () {
  'use strict';
  const T = window.Toolhost;
  const root = document.querySelector('[data-playground]');
  if (!T || !root) return;

  const form = root.querySelector('form[data-run]');
  const fieldsBox = root.querySelector('[data-fields]');
  const rawBox = root.querySelector('[data-raw]');
  const raw = document.getElementById('raw');
  const rawError = document.getElementById('err-raw');
  const toggle = root.querySelector('[data-toggle]');
  const runButton = root.querySelector('[data-run-button]');
  const cancelButton = root.querySelector('[data-cancel]');
  const state = root.querySelector('[data-state]');
  const bar = root.querySelector('[data-progress]');
  const message = root.querySelector('[data-progress-message]');
  const elapsed = root.querySelector('[data-elapsed]');
  const resultBox = root.querySelector('[data-result]');
  const tool = root.dataset.tool;
  const agent = root.dataset.agent || undefined;
  const required = (root.dataset.required || '').split(',').filter(Boolean);
  const fields = [...root.querySelectorAll('[data-field]')];

  let running = null; // { id, timer }

  // --- Checking arguments -------------------------------------------------------------

  function showError(box, text) {
    const p = box.querySelector('.field-error');
    box.classList.toggle('invalid', Boolean(text));
    if (p) {
      p.textContent = text || '';
      p.hidden = !text;
    }
  }

  // The value of one field: { value } to send, { skip } when left out, { error }.
  function readField(box) {
    const kind = box.dataset.kind;
    const input = box.querySelector('input, select, textarea');
    const name = box.dataset.field;
    const isRequired = box.hasAttribute('data-required');
    if (kind === 'boolean') return { value: input.checked };
    if (kind === 'enum') {
      if (input.value === '') return isRequired ? { error: `${name} is required.` } : { skip: true };
      return { value: JSON.parse(input.value) };
    }
    const text = input.value;
    if (text === '') return isRequired ? { error: `${name} is required.` } : { skip: true };
    if (kind === 'number' || kind === 'integer') {
      const n = Number(text.trim());
      if (text.trim() === '' || !Number.isFinite(n)) return { error: `“${text}” is not a number.` };
      if (kind === 'integer' && !Number.isInteger(n)) return { error: `${name} must be a whole number.` };
      return checkNumber(box, n);
    }
    return checkText(box, text);
  }

  function checkNumber(box, n) {
    const { min, max } = box.querySelector('input').dataset;
    if (min !== undefined && n < Number(min)) return { error: `At least ${min}.` };
    if (max !== undefined && n > Number(max)) return { error: `At most ${max}.` };
    return { value: n };
  }

  function checkText(box, text) {
    const d = box.querySelector('input, textarea').dataset;
    const length = [...text].length;
    if (d.minLength !== undefined && length < Number(d.minLength)) return { error: `At least ${d.minLength} characters.` };
    if (d.maxLength !== undefined && length > Number(d.maxLength)) return { error: `At most ${d.maxLength} characters (${length} now).` };
    return { value: text };
  }

  // The form's arguments, or null with each error shown beside its field.
  function fromForm() {
    const args = {};
    let ok = true;
    for (const box of fields) {
      const r = readField(box);
      showError(box, r.error);
      if (r.error) ok = false;
      else if (!r.skip) args[box.dataset.field] = r.value;
    }
    return ok ? args : null;
  }

  // A JSON.parse error with its line and column.
  function parseError(text, e) {
    const m = /position (\d+)/.exec(e.message);
    if (!m) return `Not JSON: ${e.message}`;
    const at = Number(m[1]);
    const before = text.slice(0, at).split('\n');
    return `Not JSON at line ${before.length}, column ${before[before.length - 1].length + 1}: ${e.message.replace(/\s*\(line \d+ column \d+\)/, '')}`;
  }

  // The raw editor's arguments, checked against what the form knows of the schema.
  function fromRaw() {
    let args;
    try {
      args = JSON.parse(raw.value);
    } catch (e) {
      showError(rawBox, parseError(raw.value, e));
      return null;
    }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      showError(rawBox, 'The arguments must be a JSON object: { "name": value, … }.');
      return null;
    }
    const missing = required.filter((name) => !(name in args));
    if (missing.length) {
      showError(rawBox, `Missing required ${missing.map((n) => `“${n}”`).join(', ')}.`);
      return null;
    }
    for (const box of fields) {
      const name = box.dataset.field;
      if (!(name in args)) continue;
      const problem = typeProblem(box, args[name]);
      if (problem) {
        showError(rawBox, `“${name}”: ${problem}`);
        return null;
      }
    }
    showError(rawBox, '');
    return args;
  }

  function typeProblem(box, v) {
    switch (box.dataset.kind) {
      case 'boolean': return typeof v === 'boolean' ? null : 'must be true or false.';
      case 'integer':
      case 'number': {
        if (typeof v !== 'number') return 'must be a number.';
        if (box.dataset.kind === 'integer' && !Number.isInteger(v)) return 'must be a whole number.';
        return checkNumber(box, v).error || null;
      }
      case 'enum': {
        const options = [...box.querySelectorAll('option')].map((o) => o.value).filter(Boolean);
        return options.includes(JSON.stringify(v)) ? null : `must be one of ${options.join(', ')}.`;
      }
      default: return typeof v === 'string' ? checkText(box, v).error || null : 'must be a string.';
    }
  }

  // --- Form ⇄ JSON ------------------------------------------------------------------------

  const rawMode = () => !rawBox.hidden;

  function fill(args) {
    for (const box of fields) {
      const input = box.querySelector('input, select, textarea');
      const v = args[box.dataset.field];
      if (box.dataset.kind === 'boolean') input.checked = v === true;
      else if (box.dataset.kind === 'enum') input.value = v === undefined ? '' : JSON.stringify(v);
      else input.value = v === undefined || v === null ? '' : String(v);
      showError(box, '');
    }
  }

  if (toggle) {
    toggle.addEventListener('click', () => {
      if (rawMode()) {
        const args = fromRaw();
        if (!args) return;
        const unknown = Object.keys(args).filter((k) => !fields.some((b) => b.dataset.field === k));
        if (unknown.length) {
          showError(rawBox, `The form has no field for ${unknown.map((n) => `“${n}”`).join(', ')}: edit them here.`);
          return;
        }
        fill(args);
      } else {
        const args = fromForm();
        if (!args) return;
        raw.value = JSON.stringify(args, null, 2);
        showError(rawBox, '');
      }
      rawBox.hidden = !rawBox.hidden;
      fieldsBox.hidden = !rawBox.hidden;
      toggle.querySelector('span').textContent = rawMode() ? 'Edit as a form' : 'Edit as JSON';
      (rawMode() ? raw : fieldsBox.querySelector('input, select, textarea') || toggle).focus();
    });
  }

  // --- Running ------------------------------------------------------------------------------

  // "step 3 of 5", "3/5": the progress as a fraction, when the message says it.
  function fraction(text) {
    const m = /(\d+(?:\.\d+)?)\s*(?:of|\/)\s*(\d+(?:\.\d+)?)/.exec(text);
    if (!m) return null;
    const [done, total] = [Number(m[1]), Number(m[2])];
    return total > 0 && done <= total ? { done, total } : null;
  }

  function onProgress(update) {
    message.textContent = update.message || `update ${update.seq}`;
    const f = fraction(update.message || '');
    if (f) {
      bar.max = f.total;
      bar.value = f.done;
    } else {
      bar.removeAttribute('value');
    }
  }

  function pretty(v) {
    return T.el('pre', { class: 'json', text: JSON.stringify(v, null, 2) });
  }

  function drawBlock(b) {
    if (b && b.type === 'text') {
      const text = String(b.text ?? '');
      if (/^\s*[[{]/.test(text)) {
        try { return pretty(JSON.parse(text)); } catch { /* not JSON: text */ }
      }
      return T.el('pre', { class: 'text', text });
    }
    if (b && b.type === 'image' && /^image\/[\w.+-]+$/.test(b.mimeType || '') && /^[A-Za-z0-9+/=]+$/.test(b.data || '')) {
      return T.el('img', { src: `data:${b.mimeType};base64,${b.data}`, alt: 'An image the tool returned' });
    }
    return pretty(b);
  }

  function onResult(r) {
    const failed = r.is_error || r.outcome !== 'success';
    bar.max = 1;
    bar.value = failed ? bar.value || 0 : 1;
    message.textContent = { success: 'Done.', error: 'Failed.', cancelled: 'Cancelled.', timeout: 'Timed out.' }[r.outcome] || r.outcome;
    const box = T.el('div', { class: failed ? 'result error' : 'result', 'data-outcome': r.outcome, role: failed ? 'alert' : null },
      T.el('p', { class: 'head' },
        T.el('span', { class: `badge ${failed ? 'bad' : 'good'}`, text: r.outcome }),
        T.el('span', { class: 'muted', text: T.duration(r.duration_ms) }),
        T.el('a', { href: `/history/${encodeURIComponent(running.id)}`, text: 'In the history' })));
    for (const b of r.content || []) box.append(drawBlock(b));
    if (r.structured_content !== undefined) {
      box.append(T.el('h4', { text: 'Structured content' }), pretty(r.structured_content));
    }
    resultBox.replaceChildren(box);
  }

  function finish() {
    if (running) clearInterval(running.timer);
    running = null;
    runButton.disabled = false;
    cancelButton.disabled = true;
  }

  function failed(text) {
    message.textContent = '';
    bar.max = 1;
    bar.value = 0;
    resultBox.replaceChildren(T.el('p', { class: 'error', role: 'alert', text }));
    finish();
  }

  // Follows the call's events to its result, resuming after a dropped stream.
  async function follow(call) {
    let last = null;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const headers = { accept: 'text/event-stream' };
      if (last) headers['last-event-id'] = last;
      let done = false;
      try {
        const res = await fetch(call.events, { credentials: 'same-origin', headers });
        if (!res.ok) {
          const type = res.headers.get('content-type') || '';
          return failed(T.problem({ status: res.status, body: type.includes('json') ? await res.json() : await res.text() }));
        }
        await T.readEvents(res, (ev) => {
          if (ev.id) last = ev.id;
          const data = JSON.parse(ev.data);
          if (ev.event === 'progress') onProgress(data);
          else if (ev.event === 'result') {
            done = true;
            onResult(data);
          }
        });
      } catch (e) {
        message.textContent = `The stream broke (${e.message}); reconnecting…`;
      }
      if (done) return finish();
    }
    failed('The call’s events could not be followed; the history has its outcome.');
  }

  async function run() {
    const args = rawMode() ? fromRaw() : fromForm();
    if (!args) {
      const first = root.querySelector('.invalid input, .invalid select, .invalid textarea');
      if (first) first.focus();
      return;
    }
    runButton.disabled = true;
    state.hidden = false;
    resultBox.replaceChildren();
    message.textContent = 'Starting…';
    bar.removeAttribute('value');
    const started = performance.now();
    const timer = setInterval(() => { elapsed.textContent = T.duration(performance.now() - started); }, 100);
    elapsed.textContent = T.duration(0);
    running = { id: null, timer };
    const answer = await T.api('POST', '/calls', { tool, arguments: args, agent });
    if (!answer.ok) return failed(T.problem(answer));
    running.id = answer.body.id;
    state.dataset.call = answer.body.id;
    cancelButton.disabled = false;
    message.textContent = 'Running…';
    await follow(answer.body);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!running) run().catch((err) => failed(String(err && err.message ? err.message : err)));
  });

  cancelButton.addEventListener('click', async () => {
    if (!running || !running.id) return;
    cancelButton.disabled = true;
    message.textContent = 'Cancelling…';
    const answer = await T.api('DELETE', `/calls/${encodeURIComponent(running.id)}`);
    // 409: it ended meanwhile; its result is on its way.
    if (!answer.ok && answer.status !== 409) message.textContent = `Cancel failed: ${T.problem(answer)}`;
  });
})();
