import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

type Block = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };
type ToolResult = { content: Block[]; isError?: boolean };
type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  action: string;
  url?: string;
  tab_id?: string;
  ref?: number;
  selector?: string;
  text?: string;
  key?: string;
  expression?: string;
  full_page?: boolean;
  output_path?: string;
  timeout_ms?: number;
};

const HOME = process.env.HOME || '/officer/user';
const DEFAULT_PORT = 18792;
const COMMAND_TIMEOUT_MS = 30_000;
const MAX_TEXT = 20_000;

class ToolError extends Error {}

function ok(text: string, ...more: Block[]): ToolResult {
  return { content: [{ type: 'text', text }, ...more] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

type Relay = { host: string; port: number; token: string };

function relayConfig(): Relay {
  const port = Number(process.env.OFFICER_BROWSER_RELAY_PORT || DEFAULT_PORT);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new ToolError(
      `OFFICER_BROWSER_RELAY_PORT is ${JSON.stringify(process.env.OFFICER_BROWSER_RELAY_PORT)}: set it to the Browser Relay's port (18792 by default).`,
    );
  }
  const token = process.env.OFFICER_BROWSER_RELAY_TOKEN || '';
  if (!token) {
    throw new ToolError(
      'No Browser Relay token: set OFFICER_BROWSER_RELAY_TOKEN to the relay token shown in the Browser Relay extension\'s options (Settings → Integrations).',
    );
  }
  return { host: process.env.OFFICER_BROWSER_RELAY_HOST || '127.0.0.1', port, token };
}

/** The relay's own token, derived from the gateway token as the relay derives it. */
function derived(relay: Relay): string {
  return createHmac('sha256', relay.token).update(`openclaw-extension-relay-v1:${relay.port}`).digest('hex');
}

/** GETs a relay path with a token; the status and the parsed body. */
async function relayGet(relay: Relay, path: string, token: string, signal?: AbortSignal): Promise<{ status: number; body: any }> {
  let res: Response;
  try {
    res = await fetch(`http://${relay.host}:${relay.port}${path}`, {
      headers: { 'x-openclaw-relay-token': token },
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(10_000)]) : AbortSignal.timeout(10_000),
    });
  } catch (e) {
    if (signal?.aborted) throw e;
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new ToolError(
      `The Browser Relay is not reachable at ${relay.host}:${relay.port} (${cause?.code ?? cause?.message ?? String(e)}): is it running, with the Chrome extension installed? Its port is OFFICER_BROWSER_RELAY_PORT.`,
    );
  }
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body };
}

/** Which form of the token the relay takes (derived first, then as given), and whether Chrome is attached. */
async function connectRelay(relay: Relay, signal?: AbortSignal): Promise<string> {
  for (const token of [derived(relay), relay.token]) {
    const r = await relayGet(relay, '/json/version', token, signal);
    if (r.status === 401 || r.status === 403) continue;
    if (r.status !== 200) {
      throw new ToolError(`The Browser Relay answered ${r.status} to /json/version: ${String(typeof r.body === 'string' ? r.body : JSON.stringify(r.body)).slice(0, 300)}`);
    }
    if (!r.body || typeof r.body !== 'object' || !r.body.webSocketDebuggerUrl) {
      throw new ToolError(
        'The Browser Relay is running, but no Chrome tab is attached: click the Browser Relay extension\'s icon on the tab to share, then try again.',
      );
    }
    return token;
  }
  throw new ToolError(
    'The Browser Relay refused the token: check OFFICER_BROWSER_RELAY_TOKEN against the token in the Browser Relay extension\'s options.',
  );
}

/** A CDP connection over the relay's WebSocket. */
class Cdp {
  private next = 1;
  private pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void; method: string }>();
  private closed: Error | undefined;

  private constructor(private ws: WebSocket) {
    ws.addEventListener('message', (ev: MessageEvent) => {
      let msg: any;
      try {
        msg = JSON.parse(typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data as ArrayBuffer).toString('utf8'));
      } catch {
        return;
      }
      if (typeof msg.id !== 'number') return;
      const waiting = this.pending.get(msg.id);
      if (!waiting) return;
      this.pending.delete(msg.id);
      if (msg.error) waiting.reject(new ToolError(`${waiting.method} failed: ${msg.error.message ?? JSON.stringify(msg.error)}`));
      else waiting.resolve(msg.result ?? {});
    });
    const gone = () => {
      this.closed = new ToolError('The Browser Relay closed the connection (was the tab closed, or the extension detached?).');
      for (const p of this.pending.values()) p.reject(this.closed);
      this.pending.clear();
    };
    ws.addEventListener('close', gone);
    ws.addEventListener('error', gone);
  }

  static open(url: string, signal?: AbortSignal): Promise<Cdp> {
    if (typeof WebSocket === 'undefined') {
      throw new ToolError('This Node.js has no global WebSocket (Node.js 22, or 20 with --experimental-websocket, has one).');
    }
    return new Promise((resolvePromise, reject) => {
      const ws = new WebSocket(url);
      const timer = setTimeout(() => {
        ws.close();
        reject(new ToolError('The Browser Relay did not open its CDP WebSocket within 10 s.'));
      }, 10_000);
      const abort = () => {
        clearTimeout(timer);
        ws.close();
        reject(new ToolError('Cancelled.'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      ws.addEventListener('open', () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        resolvePromise(new Cdp(ws));
      }, { once: true });
      ws.addEventListener('error', () => {
        clearTimeout(timer);
        reject(new ToolError('The Browser Relay refused the CDP WebSocket (a wrong token, or the extension detached).'));
      }, { once: true });
    });
  }

  send(method: string, params: object = {}, sessionId?: string): Promise<any> {
    if (this.closed) return Promise.reject(this.closed);
    const id = this.next++;
    const message: Record<string, unknown> = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ToolError(`${method} got no answer within ${COMMAND_TIMEOUT_MS / 1000} s.`));
      }, COMMAND_TIMEOUT_MS);
      this.pending.set(id, {
        method,
        resolve: (v) => { clearTimeout(timer); resolvePromise(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.ws.send(JSON.stringify(message));
    });
  }

  close(): void {
    this.ws.close();
  }
}

type Tab = { id: string; title: string; url: string };

async function tabs(cdp: Cdp): Promise<Tab[]> {
  const { targetInfos } = await cdp.send('Target.getTargets');
  return (targetInfos ?? [])
    .filter((t: any) => t.type === 'page')
    .map((t: any) => ({ id: t.targetId, title: t.title ?? '', url: t.url ?? '' }));
}

/** A session on the tab asked for, or the first one. */
async function attach(cdp: Cdp, tabId: string | undefined): Promise<{ session: string; tab: Tab }> {
  const all = await tabs(cdp);
  if (all.length === 0) {
    throw new ToolError('No tab is shared with the Browser Relay: click the extension\'s icon on a tab first.');
  }
  const tab = tabId ? all.find((t) => t.id === tabId) : all[0];
  if (!tab) {
    throw new ToolError(`No tab ${tabId}: the shared tabs are ${all.map((t) => `${t.id} (${t.title || t.url})`).join(', ')}.`);
  }
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: tab.id, flatten: true });
  return { session: sessionId, tab };
}

async function evaluate(cdp: Cdp, session: string, expression: string): Promise<any> {
  const r = await cdp.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true, userGesture: true }, session);
  if (r.exceptionDetails) {
    const e = r.exceptionDetails;
    throw new ToolError(`The page's JavaScript threw: ${e.exception?.description ?? e.text ?? 'an exception'}`);
  }
  return r.result?.value;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the page is loaded (readyState complete), up to `timeout` ms. */
async function settle(cdp: Cdp, session: string, timeout: number): Promise<void> {
  const until = Date.now() + timeout;
  for (;;) {
    let state: string | undefined;
    try {
      state = await evaluate(cdp, session, 'document.readyState');
    } catch {
      // mid-navigation: the context is being replaced
    }
    if (state === 'complete') return;
    if (Date.now() > until) throw new ToolError(`The page did not finish loading within ${timeout} ms.`);
    await sleep(100);
  }
}

/** Collects the page's text and numbers its visible interactive elements. */
const SNAPSHOT = `(() => {
  for (const e of document.querySelectorAll('[data-officer-ref]')) e.removeAttribute('data-officer-ref');
  const wanted = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=link], [role=checkbox], [role=tab], [onclick], [contenteditable=""], [contenteditable=true]';
  const items = [];
  let n = 0;
  for (const el of document.querySelectorAll(wanted)) {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if ((box.width === 0 && box.height === 0) || style.visibility === 'hidden' || style.display === 'none') continue;
    n += 1;
    el.setAttribute('data-officer-ref', String(n));
    const tag = el.tagName.toLowerCase();
    const kind = tag === 'a' ? 'link' : tag === 'input' ? 'input ' + (el.type || 'text') : (el.getAttribute('role') || tag);
    const labelled = el.id && document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
    const label = (el.getAttribute('aria-label') || (labelled && labelled.innerText) || el.innerText || el.placeholder || el.title || el.name || el.alt || '').trim().replace(/\\s+/g, ' ').slice(0, 100);
    const item = { ref: n, kind, label };
    if (tag === 'a') item.href = el.href;
    if ('value' in el && tag !== 'button' && el.value) item.value = String(el.value).slice(0, 100);
    if (el.disabled) item.disabled = true;
    items.push(item);
  }
  return { title: document.title, url: location.href, text: (document.body ? document.body.innerText : '').trim(), items };
})()`;

/** The element's centre in the viewport after scrolling it into view, or why not. */
function locate(target: string): string {
  return `(() => {
    const el = document.querySelector(${JSON.stringify(target)});
    if (!el) return null;
    el.scrollIntoView({ block: 'center', inline: 'center' });
    const b = el.getBoundingClientRect();
    return { x: b.left + b.width / 2, y: b.top + b.height / 2, disabled: !!el.disabled };
  })()`;
}

function targetOf(params: Params): { css: string; what: string } {
  if (params.ref !== undefined && params.ref !== null) {
    if (!Number.isInteger(params.ref) || params.ref < 1) throw new ToolError('`ref` is an element number from the last snapshot (1, 2, …).');
    return { css: `[data-officer-ref="${params.ref}"]`, what: `element [${params.ref}]` };
  }
  if (params.selector) return { css: params.selector, what: `\`${params.selector}\`` };
  throw new ToolError(`${params.action} needs \`ref\` (a number from a snapshot) or \`selector\` (CSS).`);
}

async function find(cdp: Cdp, session: string, params: Params): Promise<{ x: number; y: number; what: string; css: string }> {
  const t = targetOf(params);
  let at: any;
  try {
    at = await evaluate(cdp, session, locate(t.css));
  } catch (e) {
    if (e instanceof ToolError && /SyntaxError|not a valid selector/.test(e.message)) {
      throw new ToolError(`\`${params.selector}\` is not a valid CSS selector.`);
    }
    throw e;
  }
  if (!at) {
    throw new ToolError(
      params.ref !== undefined
        ? `There is no element [${params.ref}] on the page now: take a new snapshot (numbers change when the page does).`
        : `No element matches ${t.what}.`,
    );
  }
  if (at.disabled) throw new ToolError(`${t.what} is disabled.`);
  return { x: at.x, y: at.y, what: t.what, css: t.css };
}

const KEYS: Record<string, { code: string; keyCode: number; text?: string }> = {
  Enter: { code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { code: 'Tab', keyCode: 9 },
  Escape: { code: 'Escape', keyCode: 27 },
  Backspace: { code: 'Backspace', keyCode: 8 },
  Delete: { code: 'Delete', keyCode: 46 },
  ArrowUp: { code: 'ArrowUp', keyCode: 38 },
  ArrowDown: { code: 'ArrowDown', keyCode: 40 },
  ArrowLeft: { code: 'ArrowLeft', keyCode: 37 },
  ArrowRight: { code: 'ArrowRight', keyCode: 39 },
  Home: { code: 'Home', keyCode: 36 },
  End: { code: 'End', keyCode: 35 },
  PageUp: { code: 'PageUp', keyCode: 33 },
  PageDown: { code: 'PageDown', keyCode: 34 },
  Space: { code: 'Space', keyCode: 32, text: ' ' },
};

async function press(cdp: Cdp, session: string, key: string): Promise<void> {
  let k = KEYS[key];
  let name = key;
  if (!k && [...key].length === 1) {
    k = { code: '', keyCode: key.toUpperCase().charCodeAt(0), text: key };
  }
  if (!k) throw new ToolError(`Unknown key ${JSON.stringify(key)}: use one of ${Object.keys(KEYS).join(', ')}, or a single character.`);
  if (key === 'Space') name = ' ';
  const base = { key: name, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode };
  await cdp.send('Input.dispatchKeyEvent', { type: k.text ? 'keyDown' : 'rawKeyDown', ...base, text: k.text, unmodifiedText: k.text }, session);
  await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', ...base }, session);
}

/** A path the user named, under their home. */
function homePath(p: string): string {
  return isAbsolute(p) ? p : resolve(HOME, p);
}

function describeItems(items: any[]): string {
  return items
    .map((i) => {
      const extra = [i.href ? `→ ${i.href}` : '', i.value ? `value "${i.value}"` : '', i.disabled ? '(disabled)' : '']
        .filter(Boolean)
        .join(' ');
      return `[${i.ref}] ${i.kind} "${i.label}"${extra ? ' ' + extra : ''}`;
    })
    .join('\n');
}

async function act(cdp: Cdp, params: Params, onUpdate?: OnUpdate): Promise<ToolResult> {
  const timeout = Math.max(100, Math.min(Number(params.timeout_ms ?? 15000), 110_000));
  if (params.action === 'tabs') {
    const all = await tabs(cdp);
    if (all.length === 0) return ok('No tab is shared with the Browser Relay: click the extension\'s icon on a tab.');
    return ok(all.map((t) => `${t.id}  ${t.title || '(untitled)'}  ${t.url}`).join('\n'));
  }
  const { session, tab } = await attach(cdp, params.tab_id);
  switch (params.action) {
    case 'navigate': {
      if (!params.url) throw new ToolError('navigate needs `url`.');
      let url: URL;
      try {
        url = new URL(params.url);
      } catch {
        throw new ToolError(`${JSON.stringify(params.url)} is not a URL: give it with its scheme, like https://example.com.`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError('navigate opens http and https pages only.');
      onUpdate?.({ content: [{ type: 'text', text: `opening ${url.href}` }] });
      const r = await cdp.send('Page.navigate', { url: url.href }, session);
      if (r.errorText) throw new ToolError(`${url.href} did not load: ${r.errorText}.`);
      await settle(cdp, session, timeout);
      const now = await evaluate(cdp, session, '({ title: document.title, url: location.href })');
      return ok(`Opened ${now.url} in tab ${tab.id}: "${now.title}". Take a snapshot to read it.`);
    }
    case 'snapshot': {
      const s = await evaluate(cdp, session, SNAPSHOT);
      const head = `${s.title || '(untitled)'}\n${s.url}\n`;
      const list = s.items.length ? `\nInteractive elements (use the number as \`ref\`):\n${describeItems(s.items)}\n` : '\nNo interactive elements.\n';
      if (params.output_path) {
        const file = homePath(params.output_path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, `${head}\n${s.text}\n${list}`);
        return ok(`${head}Wrote the page's text (${s.text.length} characters) and ${s.items.length} elements to ${file}.${list}`);
      }
      const text = s.text.length > MAX_TEXT
        ? `${s.text.slice(0, MAX_TEXT)}\n[… ${s.text.length - MAX_TEXT} more characters: take the snapshot with output_path to get all of it]`
        : s.text;
      return ok(`${head}\n${text}\n${list}`);
    }
    case 'click': {
      const at = await find(cdp, session, params);
      const mouse = { x: at.x, y: at.y, button: 'left', clickCount: 1 };
      await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at.x, y: at.y }, session);
      await cdp.send('Input.dispatchMouseEvent', { type: 'mousePressed', ...mouse }, session);
      await cdp.send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...mouse }, session);
      await sleep(150);
      await settle(cdp, session, timeout);
      const now = await evaluate(cdp, session, '({ title: document.title, url: location.href })');
      return ok(`Clicked ${at.what}. The page is now ${now.url} ("${now.title}").`);
    }
    case 'type': {
      if (params.text === undefined) throw new ToolError('type needs `text`.');
      const t = await find(cdp, session, params);
      await evaluate(cdp, session, `document.querySelector(${JSON.stringify(t.css)}).focus()`);
      await cdp.send('Input.insertText', { text: params.text }, session);
      const value = await evaluate(cdp, session, `(() => { const e = document.querySelector(${JSON.stringify(t.css)}); return e && 'value' in e ? e.value : e && e.innerText; })()`);
      return ok(`Typed into ${t.what}; its value is now ${JSON.stringify(value)}.`);
    }
    case 'press': {
      if (!params.key) throw new ToolError('press needs `key`, such as Enter.');
      await press(cdp, session, params.key);
      await sleep(150);
      await settle(cdp, session, timeout);
      const now = await evaluate(cdp, session, '({ title: document.title, url: location.href })');
      return ok(`Pressed ${params.key}. The page is now ${now.url} ("${now.title}").`);
    }
    case 'evaluate': {
      if (!params.expression) throw new ToolError('evaluate needs `expression`.');
      const value = await evaluate(cdp, session, params.expression);
      return ok(value === undefined ? 'undefined' : JSON.stringify(value, null, 2));
    }
    case 'screenshot': {
      const args: Record<string, unknown> = { format: 'png' };
      if (params.full_page) {
        const m = await cdp.send('Page.getLayoutMetrics', {}, session);
        const size = m.cssContentSize ?? m.contentSize;
        args.captureBeyondViewport = true;
        args.clip = { x: 0, y: 0, width: Math.ceil(size.width), height: Math.ceil(Math.min(size.height, 16384)), scale: 1 };
      }
      const { data } = await cdp.send('Page.captureScreenshot', args, session);
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const file = homePath(params.output_path || join('screenshots', `${stamp}.png`));
      mkdirSync(dirname(file), { recursive: true });
      const bytes = Buffer.from(data, 'base64');
      writeFileSync(file, bytes);
      return ok(`Saved a screenshot of tab ${tab.id} (${bytes.length} bytes) to ${file}.`, { type: 'image', data, mimeType: 'image/png' });
    }
    case 'wait': {
      if (params.selector) {
        const until = Date.now() + timeout;
        for (;;) {
          const found = await evaluate(cdp, session, `!!document.querySelector(${JSON.stringify(params.selector)})`);
          if (found) return ok(`\`${params.selector}\` is on the page.`);
          if (Date.now() > until) throw new ToolError(`\`${params.selector}\` did not appear within ${timeout} ms.`);
          await sleep(100);
        }
      }
      await sleep(timeout);
      return ok(`Waited ${timeout} ms.`);
    }
    case 'back': {
      const h = await cdp.send('Page.getNavigationHistory', {}, session);
      if (!h.currentIndex) throw new ToolError('There is no previous page in this tab.');
      await cdp.send('Page.navigateToHistoryEntry', { entryId: h.entries[h.currentIndex - 1].id }, session);
      await sleep(150);
      await settle(cdp, session, timeout);
      const now = await evaluate(cdp, session, '({ title: document.title, url: location.href })');
      return ok(`Went back to ${now.url} ("${now.title}").`);
    }
    default:
      throw new ToolError(`Unknown action ${JSON.stringify(params.action)}: use tabs, navigate, snapshot, click, type, press, evaluate, screenshot, wait or back.`);
  }
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  let cdp: Cdp | undefined;
  const abort = () => cdp?.close();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    const relay = relayConfig();
    const token = await connectRelay(relay, signal);
    cdp = await Cdp.open(`ws://${relay.host}:${relay.port}/cdp?token=${encodeURIComponent(token)}`, signal);
    return await act(cdp, params, onUpdate);
  } catch (e) {
    if (signal?.aborted) return err('Cancelled.');
    if (e instanceof ToolError) return err(e.message);
    return err(`The browser tool failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    signal?.removeEventListener('abort', abort);
    cdp?.close();
  }
}
