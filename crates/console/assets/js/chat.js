// The chat page: keeps the conversation (OpenAI chat-completions messages) in memory,
// posts it with each message to the page's turn URL, and renders what streams back:
// the model's text as it comes, and a card per tool call that moves through the states
// pending → running (with progress) → completed or error. Stop aborts the stream, which
// the server takes as "cancel this turn" (the model's request and any running tool).
(function () {
  'use strict';
  const root = document.querySelector('[data-chat]');
  if (!root) return;
  const { el, icon, readEvents, duration } = window.Toolhost;
  const url = root.getAttribute('data-chat');
  const transcript = document.getElementById('transcript');
  const form = document.getElementById('chat-form');
  const prompt = document.getElementById('prompt');
  const send = document.getElementById('send');
  const stop = document.getElementById('stop');
  const error = document.getElementById('chat-error');
  const messages = [];
  let running = null;

  const STATES = {
    pending: ['circle-dashed', 'Pending'],
    running: ['loader-circle', 'Running'],
    completed: ['circle-check', 'Completed'],
    error: ['circle-x', 'Error'],
  };

  function say(role, text) {
    const body = el('p', { class: 'text', text });
    const li = el('li', { class: `msg ${role}` },
      el('span', { class: 'who-said' }, icon(role === 'user' ? 'user' : 'bot'), role === 'user' ? 'You' : 'Agent'),
      body);
    transcript.append(li);
    return { li, body };
  }

  function json(value) {
    return el('pre', { text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) });
  }

  // The card of one tool call, found again by its id.
  const cards = new Map();
  function card(ev) {
    let c = cards.get(ev.id);
    if (!c) {
      const state = el('span', { class: 'state' });
      const progress = el('p', { class: 'progress', hidden: true });
      const params = el('details', {}, el('summary', { text: 'Parameters' }), json(ev.arguments ?? {}));
      const result = el('details', { hidden: true }, el('summary', { text: 'Result' }));
      const li = el('li', { class: 'tool-card', 'data-tool': ev.name, 'data-call': ev.id },
        el('div', { class: 'head' }, icon(ev.icon || 'wrench'), el('span', { class: 'name', text: ev.name }), state),
        progress, params, result);
      transcript.append(li);
      c = { li, state, progress, result, began: performance.now() };
      cards.set(ev.id, c);
    }
    return c;
  }

  function setState(c, state) {
    const [name, label] = STATES[state] || STATES.pending;
    c.li.setAttribute('data-state', state);
    const i = icon(name);
    if (state === 'running') i.classList.add('spin');
    c.state.replaceChildren(i, label);
  }

  function showResult(c, result, ms) {
    const blocks = (result && result.content) || [];
    const parts = blocks.map((b) => {
      if (b.type === 'text') return el('pre', { text: b.text });
      if (b.type === 'image' && /^image\/(png|jpeg|gif|webp)$/.test(b.mimeType || '')) {
        return el('img', { src: `data:${b.mimeType};base64,${b.data}`, alt: 'an image the tool returned' });
      }
      return json(b);
    });
    if (result && result.structuredContent) parts.push(json(result.structuredContent));
    c.result.replaceChildren(el('summary', { text: `Result${ms !== undefined ? ` · ${duration(ms)}` : ''}` }), ...parts);
    c.result.hidden = false;
    if (result && result.isError) c.result.open = true;
  }

  function finish(note) {
    running = null;
    send.disabled = false;
    stop.disabled = true;
    prompt.disabled = false;
    if (note) {
      error.textContent = note;
      error.hidden = false;
    }
    prompt.focus();
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = prompt.value.trim();
    if (!text || running) return;
    error.hidden = true;
    prompt.value = '';
    say('user', text);
    const asked = [...messages, { role: 'user', content: text }];
    let answer = null;
    const controller = new AbortController();
    running = controller;
    send.disabled = true;
    stop.disabled = false;
    prompt.disabled = true;
    let kept = false;
    try {
      const res = await fetch(url, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ messages: asked }),
        signal: controller.signal,
      });
      if (!res.ok) {
        finish(`The chat refused: ${await res.text()}`);
        return;
      }
      let failed = null;
      await readEvents(res, (ev) => {
        const data = ev.data ? JSON.parse(ev.data) : {};
        if (ev.event === 'text') {
          if (!answer) answer = say('assistant', '');
          answer.body.textContent += data.text;
        } else if (ev.event === 'tool') {
          const c = card(data);
          setState(c, data.state);
          if (data.state === 'running') c.began = performance.now();
          if (data.state === 'completed' || data.state === 'error') {
            c.progress.hidden = true;
            showResult(c, data.result, data.duration_ms);
          }
          answer = null; // text after tools is a new message
        } else if (ev.event === 'progress') {
          const c = cards.get(data.id);
          if (c) {
            c.progress.hidden = false;
            c.progress.textContent = `${data.message || 'Working…'} · ${duration(performance.now() - c.began)}`;
          }
        } else if (ev.event === 'messages') {
          // A round is whole: keep it (the user's message first, once).
          if (!kept) { messages.push(asked[asked.length - 1]); kept = true; }
          messages.push(...data.messages);
        } else if (ev.event === 'failed') {
          failed = data.message;
        }
      });
      finish(failed);
    } catch (err) {
      if (err.name === 'AbortError') {
        if (answer) answer.li.classList.add('stopped');
        for (const c of cards.values()) {
          const s = c.li.getAttribute('data-state');
          if (s === 'pending' || s === 'running') { setState(c, 'error'); c.state.lastChild.textContent = 'Stopped'; }
        }
        finish(null);
      } else {
        finish(`The chat failed: ${err.message}`);
      }
    }
  });

  stop.addEventListener('click', () => { if (running) running.abort(); });
  prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
})();
