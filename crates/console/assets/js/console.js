// What the console's page scripts share, as `window.Toolhost`: calling the API with the
// session cookie (the browser never holds a token), reading its problem+json errors, and
// small formatting helpers. Loaded with `defer` before any page script.
(function () {
  'use strict';

  // Calls `/api/v1` + `path`; resolves to { status, ok, body } (body parsed when JSON).
  async function api(method, path, body, signal) {
    const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' }, signal };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch('/api/v1' + path, init);
    const type = res.headers.get('content-type') || '';
    let parsed = null;
    if (type.includes('json')) {
      parsed = await res.json();
    } else if (res.status !== 204) {
      parsed = await res.text();
    }
    return { status: res.status, ok: res.ok, body: parsed };
  }

  // A problem+json answer as one sentence (with the field it is about).
  function problem(answer) {
    const b = answer && answer.body;
    if (b && typeof b === 'object') {
      const where = b.field ? ` (at ${b.field})` : '';
      return (b.detail || b.title || `HTTP ${answer.status}`) + where;
    }
    return typeof b === 'string' && b ? b : `HTTP ${answer ? answer.status : '?'}`;
  }

  // 1234 → "1.2 s"; 56 → "56 ms".
  function duration(ms) {
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  }

  // An element: el('li', { class: 'x', text: 'y' }, child...).
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') node.textContent = v;
      else if (k === 'class') node.className = v;
      else node.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children) if (c) node.append(c);
    return node;
  }

  // A Lucide icon from the page's sprite (the server put every icon the page may need
  // into it), the wrench when the sprite lacks it.
  function icon(name) {
    const id = document.getElementById('i-' + name) ? name : 'wrench';
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('class', 'icon');
    svg.setAttribute('aria-hidden', 'true');
    const use = document.createElementNS('http://www.w3.org/2000/svg', 'use');
    use.setAttribute('href', '#i-' + id);
    svg.append(use);
    return svg;
  }

  // Reads a `text/event-stream` response body, calling `onEvent({event, data, id})`.
  async function readEvents(response, onEvent) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
        const ev = { event: 'message', data: '', id: null };
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(':')) continue;
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          if (field === 'event') ev.event = val;
          else if (field === 'data') data.push(val);
          else if (field === 'id') ev.id = val;
        }
        ev.data = data.join('\n');
        if (data.length || ev.event !== 'message') onEvent(ev);
      }
    }
  }

  window.Toolhost = { api, problem, duration, el, icon, readEvents };
})();
