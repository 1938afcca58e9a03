// Toolhost's Node.js worker: loads tool entry files and runs their `execute` for the host.
//
// argv: <transpile cache dir> <unix socket path> [plugin]. The host listens on the socket and
// accepts exactly this process's connection. Frames in both directions are a 4-byte
// big-endian length and a UTF-8 JSON object whose first field is `type`. The messages
// are typed on the host's side in `protocol.rs`, which reads them strictly (an unknown
// type, field or error kind stops the worker) and whose tests check this file against
// them:
//   host → worker: {type:'call', id, entry, version, toolCallId, params, maxText, plugin?}
//                  (`plugin`: {op, settings, set?, tool?, turn?, ctx?}, an operation of the
//                  Platypus plugin whose entry file is `entry`: see plugins.mjs)
//                  {type:'cancel', id}
//   worker → host: {type:'ready', pid, node}
//                  {type:'progress', id, content}
//                  {type:'log', id, level, text}          (console and stdout/stderr; id null
//                                                         when no call can be tied to it)
//                  {type:'result', id, truncated, originalLength?, value}  (what execute returned)
//                  {type:'error', id, kind, message, stack?}  (kind: load, export, cancelled,
//                                                         throw, serialize, plugin)
// The socket, unlike inherited fds, is close-on-exec: processes a tool spawns never see it.

import { register } from 'node:module';
import { AsyncLocalStorage } from 'node:async_hooks';
import { pathToFileURL } from 'node:url';
import { format } from 'node:util';
import net from 'node:net';

const [cacheDir, socketPath, mode] = process.argv.splice(2, process.argv.length - 2);
// A worker for a Platypus plugin resolves modules as Node.js does, plus Toolhost's copies of
// the plugin SDK, `ai` and `zod` for a plugin that lacks its own.
const pluginMode = mode === 'plugin';
register(new URL('./hooks.mjs', import.meta.url), { data: { cacheDir, plugins: pluginMode } });
let plugins = null;

const MAX_LOG = 8 * 1024;
const MAX_LOGS_PER_CALL = 1000;
const MAX_PROGRESS_TEXT = 64 * 1024;
const PROGRESS_INTERVAL_MS = 10;

const als = new AsyncLocalStorage();
const calls = new Map();
// Loaded entry modules by path and code version: a dynamic import() of a
// known URL would still make a round trip to the hooks thread.
const modules = new Map();
// Frames are read with `onread` straight from one reused buffer, skipping the stream
// machinery of 'data' events (a measurable part of a warm call's round trip).
const socket = net.createConnection({
  path: socketPath,
  onread: { buffer: Buffer.allocUnsafe(64 * 1024), callback: onRead },
});

function frame(json) {
  const length = Buffer.byteLength(json, 'utf8');
  const buf = Buffer.allocUnsafe(4 + length);
  buf.writeUInt32BE(length, 0);
  buf.write(json, 4, 'utf8');
  socket.write(buf);
}

function send(message) {
  frame(JSON.stringify(message));
}

// --- console and stdio capture: output belongs to the call it came from -------------

function capture(level, text) {
  const id = als.getStore() ?? null;
  const call = id === null ? null : calls.get(id);
  if (call) {
    call.logs += 1;
    if (call.logs > MAX_LOGS_PER_CALL) {
      if (call.logs === MAX_LOGS_PER_CALL + 1) send({ type: 'log', id, level: 'warn', text: 'toolhost: further output of this call dropped' });
      return;
    }
  }
  const cut = text.length > MAX_LOG ? `${text.slice(0, MAX_LOG)}… (${text.length} characters)` : text;
  send({ type: 'log', id, level, text: cut });
}

for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  console[level] = (...args) => capture(level, format(...args));
}
for (const [stream, level] of [[process.stdout, 'stdout'], [process.stderr, 'stderr']]) {
  stream.write = (chunk, encoding, callback) => {
    capture(level, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done);
    return true;
  };
}

// --- progress: immediate, in order, coalesced under flood, last one never lost ------

function progressContent(partial) {
  const content = Array.isArray(partial?.content) ? partial.content : [{ type: 'text', text: String(partial) }];
  return content.map((block) =>
    typeof block?.text === 'string' && block.text.length > MAX_PROGRESS_TEXT
      ? { ...block, text: `${block.text.slice(0, MAX_PROGRESS_TEXT)}…` }
      : block,
  );
}

function flushProgress(id, call) {
  if (call.timer) {
    clearTimeout(call.timer);
    call.timer = null;
  }
  if (call.pending !== null) {
    const partial = call.pending;
    call.pending = null;
    call.lastSent = Date.now();
    try {
      send({ type: 'progress', id, content: progressContent(partial) });
    } catch (e) {
      capture('warn', `toolhost: progress update could not be serialised: ${e?.message ?? e}`);
    }
  }
}

function onUpdateFor(id, call) {
  return (partial) => {
    if (call.done) return;
    call.pending = partial;
    const wait = PROGRESS_INTERVAL_MS - (Date.now() - call.lastSent);
    if (wait <= 0 && !call.timer) flushProgress(id, call);
    else if (!call.timer) call.timer = setTimeout(() => flushProgress(id, call), Math.max(wait, 0));
  };
}

// --- results ------------------------------------------------------------------------

function cutContent(value, maxText) {
  let budget = maxText;
  const content = value.content.map((block) => {
    if (typeof block?.text !== 'string') return block;
    const text = block.text.length > budget ? block.text.slice(0, budget) : block.text;
    budget -= text.length;
    return { ...block, text };
  });
  return { ...value, content, structuredContent: undefined };
}

function sendResult(id, value, maxText) {
  let json;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (e) {
    send({ type: 'error', id, kind: 'serialize', message: `execute returned a value that cannot be turned into JSON: ${e?.message ?? e}` });
    return;
  }
  if (json === undefined) json = 'null';
  if (json.length <= maxText + 64 * 1024) {
    frame(`{"type":"result","id":${id},"truncated":false,"value":${json}}`);
  } else if (Array.isArray(value?.content)) {
    send({ type: 'result', id, truncated: true, originalLength: json.length, value: cutContent(value, maxText) });
  } else {
    send({ type: 'result', id, truncated: true, originalLength: json.length, value: json.slice(0, maxText) });
  }
}

function describe(error) {
  if (error instanceof Error) return { message: error.message || error.name, stack: error.stack ?? '' };
  if (error?.name === 'AbortError') return { message: 'aborted', stack: '' };
  return { message: typeof error === 'string' ? error : format(error), stack: '' };
}

// The common path (module already loaded) creates as few promises as it can: with
// AsyncLocalStorage on Node.js 20, every promise costs an async hook.
function runCall({ id, entry, version, toolCallId, params, maxText, plugin }) {
  const call = { controller: new AbortController(), pending: null, timer: null, lastSent: 0, logs: 0, done: false };
  calls.set(id, call);
  if (plugin) {
    runPlugin(id, call, { entry, toolCallId, params, maxText, plugin });
    return;
  }
  const key = `${entry}?v=${version}`;
  const mod = modules.get(key);
  if (mod) {
    startExecute(id, call, mod, toolCallId, params, maxText);
    return;
  }
  als.run(id, () => import(`${pathToFileURL(entry).href}?v=${version}`)).then(
    (loaded) => {
      modules.set(key, loaded);
      startExecute(id, call, loaded, toolCallId, params, maxText);
    },
    (e) => finish(id, call, { type: 'error', id, kind: 'load', ...describe(e) }),
  );
}

function startExecute(id, call, mod, toolCallId, params, maxText) {
  if (typeof mod.execute !== 'function') {
    const found = Object.keys(mod).join(', ') || 'nothing';
    finish(id, call, { type: 'error', id, kind: 'export', message: `the entry file has no named export \`execute\` (it exports: ${found})`, stack: '' });
    return;
  }
  if (call.controller.signal.aborted) {
    finish(id, call, { type: 'error', id, kind: 'cancelled', message: 'cancelled before it started', stack: '' });
    return;
  }
  let returned;
  try {
    returned = als.run(id, () => mod.execute(toolCallId, params, call.controller.signal, onUpdateFor(id, call)));
  } catch (e) {
    finish(id, call, { type: 'error', id, kind: 'throw', ...describe(e) });
    return;
  }
  if (typeof returned?.then !== 'function') {
    finish(id, call, null, () => sendResult(id, returned, maxText));
    return;
  }
  try {
    returned.then(
      (value) => finish(id, call, null, () => sendResult(id, value, maxText)),
      (e) => finish(id, call, { type: 'error', id, kind: 'throw', ...describe(e) }),
    );
  } catch (e) {
    // A thenable whose `then` throws.
    finish(id, call, { type: 'error', id, kind: 'throw', ...describe(e) });
  }
}

// A Platypus plugin's operation (plugins.mjs): loading it, a factory, closers, a tool.
// Once plugins.mjs is loaded, an operation whose answer is at hand costs no promise here.
let pluginsModule = null;
function runPlugin(id, call, message) {
  if (!pluginMode) {
    finish(id, call, { type: 'error', id, kind: 'plugin', message: 'this worker does not run plugins', stack: '' });
    return;
  }
  const failed = (e) => {
    const kind = e?.kind === undefined ? 'throw' : e.kind === 'load' ? 'load' : 'plugin';
    finish(id, call, { type: 'error', id, kind, ...describe(e) });
  };
  const done = (value) => finish(id, call, null, () => sendResult(id, value, message.maxText));
  if (pluginsModule === null) {
    plugins ??= import('./plugins.mjs').then((m) => {
      m.setCapture(capture);
      pluginsModule = m;
      return m;
    });
    plugins.then(() => runPlugin(id, call, message), failed);
    return;
  }
  let returned;
  try {
    returned = als.run(id, () => pluginsModule.run(message, call.controller.signal, onUpdateFor(id, call)));
  } catch (e) {
    failed(e);
    return;
  }
  if (typeof returned?.then === 'function') returned.then(done, failed);
  else done(returned);
}

// Ends a call: the last progress first, then the error or the result.
function finish(id, call, error, sendValue) {
  call.done = true;
  flushProgress(id, call);
  if (error) send(error);
  else sendValue();
  calls.delete(id);
}

function dispatch(message) {
  if (message.type === 'call') {
    runCall(message);
  } else if (message.type === 'cancel') {
    calls.get(message.id)?.controller.abort();
  }
}

// The start of a frame that arrived incomplete (copied: the read buffer is reused).
let partial = null;

function onRead(length, buffer) {
  let chunk = buffer.subarray(0, length);
  if (partial !== null) {
    chunk = Buffer.concat([partial, chunk]);
    partial = null;
  }
  let at = 0;
  while (chunk.length - at >= 4) {
    const size = chunk.readUInt32BE(at);
    if (chunk.length - at - 4 < size) break;
    const body = chunk.toString('utf8', at + 4, at + 4 + size);
    at += 4 + size;
    dispatch(JSON.parse(body));
  }
  if (at < chunk.length) partial = Buffer.from(chunk.subarray(at));
}

// The host went away: nothing left to serve.
socket.on('close', () => process.exit(0));
socket.on('error', () => process.exit(0));
socket.on('connect', () => send({ type: 'ready', pid: process.pid, node: process.version }));
