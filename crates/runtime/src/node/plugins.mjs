// Platypus plugins in Toolhost's Node.js worker: load a plugin package as Platypus does,
// check its manifest, resolve its configuration with its own schemas, describe its tool
// sets' AI SDK tools as JSON Schema, call factories per turn, run the turn's closers, and
// execute tools the way the AI SDK does. Imported by harness.mjs, which owns the socket:
// every operation here is one `call` message whose `plugin` field says which.
//
// A worker that runs plugins serves exactly one plugin package at one code version (the
// host starts a fresh worker when its files change), so module state is per plugin.

import Module, { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';

// The plugin API window Toolhost accepts: Platypus's current version and the one before.
export const PLUGIN_API_VERSION = 3;
export const OLDEST_SUPPORTED_API_VERSION = 2;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 24;
const TOOL_KEY = /^[a-zA-Z0-9_-]+$/;
const MAX_TOOL_KEY = 32;
const CLOSER_DEADLINE_MS = 5000;
const AI_SCHEMA = Symbol.for('vercel.ai.schema');

/** A failure the host reports as the plugin's, with a message naming it. */
export class PluginError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

// CommonJS plugins get the same copies as ES modules do (hooks.mjs): module.register()'s
// hooks do not see require() on Node.js 20, so its resolver is wrapped instead. The copies
// are ES modules, which require() loads from Node.js 20.19 on.
{
  const map = JSON.parse(readFileSync(new URL('./vendor/packages.json', import.meta.url), 'utf8'));
  const copies = new Map(Object.entries(map.entries).map(([s, f]) => [s, fileURLToPath(new URL(`./vendor/${f}`, import.meta.url))]));
  copies.set('@platypuschat/plugin-sdk', fileURLToPath(new URL('./plugin-sdk.mjs', import.meta.url)));
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    try {
      return resolveFilename.call(this, request, ...rest);
    } catch (error) {
      const copy = copies.get(request);
      if (copy && error?.code === 'MODULE_NOT_FOUND') return copy;
      throw error;
    }
  };
}

// entry path → { manifest, pluginCtx, sets: Map(id → contribution), described }
const plugins = new Map();
// turn id → { tools: Map(set → Map(key → tool)), closers: Set(fn), closed }
const turns = new Map();

let capture = (level, text) => process.stderr.write(`${level}: ${text}\n`);

/** Sets how plugin logs reach the host (the harness's per-call log capture). */
export function setCapture(fn) {
  capture = fn;
}

function logger(name) {
  const at = (level) => (obj, msg) => {
    let text;
    if (typeof obj === 'string') text = msg === undefined ? obj : format(obj, msg);
    else if (msg === undefined) text = safeJson(obj);
    else text = `${msg} ${safeJson(obj)}`;
    capture(level, `[plugin ${name}] ${text}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function safeJson(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return format(v);
  }
}

// --- loading -----------------------------------------------------------------------

/**
 * Platypus's manifest rules. Messages say what is wrong and with what value; the host
 * prefixes them with the plugin's name and entry file.
 */
function checkManifest(entry, mod) {
  let fail = (message) => {
    throw new PluginError('manifest', message);
  };
  if (!mod || typeof mod !== 'object' || !('plugin' in mod)) {
    const hint = mod && 'default' in mod ? ' (it has only a default export; Platypus reads the named export `plugin`)' : '';
    fail(`the module must export a named \`plugin\`${hint}`);
  }
  const p = mod.plugin;
  if (!p || typeof p !== 'object') fail('`plugin` must be an object');
  const name = typeof p.name === 'string' ? p.name : '';
  if (!name.trim()) fail('plugin.name must be a non-empty string');
  if (SLUG.test(name)) {
    // From here on the host can name the plugin by its manifest (see `named` in Rust).
    const unnamed = fail;
    fail = (message) => unnamed(`plugin "${name}": ${message}`);
  }
  if (typeof p.version !== 'string' || !p.version.trim()) fail('plugin.version must be a non-empty string');
  if (!SLUG.test(name) || name.length > MAX_NAME) {
    fail(
      `its name "${name}" must be a slug (lowercase letters, digits and single dashes: ^[a-z0-9]+(-[a-z0-9]+)*$) of at most ${MAX_NAME} characters, as third-party plugin names are`,
    );
  }
  if (!Number.isInteger(p.apiVersion) || p.apiVersion < 1) {
    fail(`plugin.apiVersion must be a positive integer (found ${safeJson(p.apiVersion)})`);
  }
  if (p.apiVersion < OLDEST_SUPPORTED_API_VERSION || p.apiVersion > PLUGIN_API_VERSION) {
    fail(
      `it targets plugin API ${p.apiVersion}, but Toolhost supports ${OLDEST_SUPPORTED_API_VERSION} to ${PLUGIN_API_VERSION}` +
        (p.apiVersion > PLUGIN_API_VERSION ? ': it needs a newer Toolhost' : ': rebuild it against a newer @platypuschat/plugin-sdk'),
    );
  }
  if (!p.contributes || typeof p.contributes !== 'object' || Array.isArray(p.contributes)) {
    fail('plugin.contributes must be an object');
  }
  for (const key of ['toolSets', 'sandboxBackends', 'webBackends']) {
    const v = p.contributes[key];
    if (v !== undefined && !Array.isArray(v)) fail(`plugin.contributes.${key} must be an array`);
  }
  const ids = new Set();
  for (const [i, set] of (p.contributes.toolSets ?? []).entries()) {
    const at = `contributes.toolSets[${i}]`;
    if (!set || typeof set !== 'object') fail(`${at} must be an object`);
    if (typeof set.id !== 'string' || !set.id) fail(`${at}.id must be a non-empty string`);
    if (ids.has(set.id)) fail(`${at}: tool set id "${set.id}" is used twice`);
    ids.add(set.id);
    if (typeof set.name !== 'string' || !set.name) fail(`${at} ("${set.id}").name must be a non-empty string`);
    if (typeof set.category !== 'string' || !set.category.trim()) fail(`${at} ("${set.id}").category must be a non-empty string`);
    const t = set.tools;
    if (typeof t !== 'function' && (!t || typeof t !== 'object')) {
      fail(`${at} ("${set.id}").tools must be an object of tools or a factory function`);
    }
  }
  return p;
}

/** `schema.safeParse(value ?? {})` when the manifest has a schema, else the raw value. */
function resolveSettings(name, what, schema, value) {
  if (!schema) return value;
  if (typeof schema.safeParse !== 'function') {
    throw new PluginError('config', `its ${what}Schema has no safeParse (is it a zod schema?)`);
  }
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  throw new PluginError('config', `[plugins.${name}] ${what} is invalid: ${issues(parsed.error)}`);
}

function issues(error) {
  const list = error?.issues ?? error?.errors;
  if (!Array.isArray(list) || list.length === 0) return error?.message ?? String(error);
  return list
    .map((i) => {
      const path = Array.isArray(i.path) && i.path.length ? i.path.map((p) => (typeof p === 'object' ? p.key : p)).join('.') : '(root)';
      return `${path}: ${i.message}`;
    })
    .join('; ');
}

const imported = new Map();

/** The plugin's module, imported, with its manifest checked. */
async function manifestOf(entry) {
  let manifest = imported.get(entry);
  if (manifest) return manifest;
  let mod;
  try {
    mod = await import(pathToFileURL(entry).href);
  } catch (e) {
    throw new PluginError('load', `it failed to load: ${e?.stack ?? e}`);
  }
  manifest = checkManifest(entry, mod);
  imported.set(entry, manifest);
  return manifest;
}

/** The plugin with its settings parsed (once per worker: a worker serves one plugin). */
async function loaded(entry, settings) {
  let p = plugins.get(entry);
  if (p) return p;
  const manifest = await manifestOf(entry);
  const config = resolveSettings(manifest.name, 'config', manifest.configSchema, settings?.config);
  const credentials = resolveSettings(manifest.name, 'credentials', manifest.credentialsSchema, settings?.credentials);
  const pluginCtx = { config, credentials, logger: logger(manifest.name) };
  p = { entry, manifest, pluginCtx, sets: new Map((manifest.contributes.toolSets ?? []).map((s) => [s.id, s])) };
  plugins.set(entry, p);
  return p;
}

// --- describing tools ---------------------------------------------------------------

/** Sets `additionalProperties: false` on every object schema, as the AI SDK does. */
function closeObjects(schema) {
  if (Array.isArray(schema)) {
    schema.forEach(closeObjects);
  } else if (schema && typeof schema === 'object') {
    if (schema.type === 'object' && schema.additionalProperties === undefined) schema.additionalProperties = false;
    for (const v of Object.values(schema)) closeObjects(v);
  }
  return schema;
}

/** The ES module entry of `pkg` (or `pkg/sub`) as the plugin at `entry` resolves it. */
async function importFrom(entry, specifier) {
  const require = createRequire(entry);
  const [scope, rest] = specifier.startsWith('@') ? [specifier.split('/').slice(0, 2).join('/'), specifier.split('/').slice(2)] : [specifier.split('/')[0], specifier.split('/').slice(1)];
  const pkgJson = require.resolve(`${scope}/package.json`);
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8'));
  const sub = rest.length ? `./${rest.join('/')}` : '.';
  let target = pkg.exports?.[sub] ?? (sub === '.' ? pkg.exports : undefined);
  const pick = (t) => (typeof t === 'string' ? t : t && (pick(t.import) ?? pick(t.default) ?? pick(t.node)));
  target = pick(target) ?? (sub === '.' ? pkg.module ?? pkg.main : undefined);
  if (!target) throw new Error(`${specifier} has no ES module entry`);
  return import(pathToFileURL(join(dirname(pkgJson), target)).href);
}

const zodConverters = new Map();

/** The JSON Schema of a tool's input, converted with the zod copy the plugin uses. */
async function inputJsonSchema(entry, schema) {
  if (schema === undefined || schema === null) return { type: 'object', properties: {}, additionalProperties: false };
  if (typeof schema === 'object' && schema[AI_SCHEMA]) return structuredClone(await schema.jsonSchema);
  if (typeof schema === 'object' && '_zod' in schema) {
    const standard = schema['~standard']?.jsonSchema?.input;
    if (typeof standard === 'function') return closeObjects(standard({ target: 'draft-07' }));
    // zod 4 before 4.2: its own toJSONSchema keeps the descriptions its own registry holds.
    let convert = zodConverters.get(entry);
    if (!convert) {
      const zod = await importFrom(entry, 'zod');
      convert = zod.toJSONSchema ?? zod.z?.toJSONSchema;
      if (typeof convert !== 'function') throw new Error('the plugin\'s zod has no toJSONSchema');
      zodConverters.set(entry, convert);
    }
    return closeObjects(convert(schema, { target: 'draft-7', io: 'input', reused: 'inline' }));
  }
  if (typeof schema === 'object' && '_def' in schema && typeof schema.safeParse === 'function') {
    // zod 3, any minor: converted structurally.
    const { zodToJsonSchema } = await import('./vendor/zod-to-json-schema.mjs');
    return closeObjects(zodToJsonSchema(schema, { $refStrategy: 'none', target: 'jsonSchema7' }));
  }
  const standard = schema?.['~standard']?.jsonSchema?.input;
  if (typeof standard === 'function') return closeObjects(standard({ target: 'draft-07' }));
  if (typeof schema === 'function') return inputJsonSchema(entry, schema());
  throw new Error('its input schema is neither a zod schema, an AI SDK jsonSchema() nor a Standard Schema with JSON Schema');
}

/** What the host needs of one tool, or why it is left out. */
async function describeTool(entry, key, tool) {
  if (!TOOL_KEY.test(key) || key.length > MAX_TOOL_KEY) {
    return { skip: `tool key "${key}" must match ^[a-zA-Z0-9_-]+$ and have at most ${MAX_TOOL_KEY} characters` };
  }
  if (!tool || typeof tool !== 'object') return { skip: 'is not an AI SDK tool object' };
  if (tool.type === 'provider' || tool.type === 'provider-defined') return { skip: 'is a provider tool: it runs at the model provider, not here' };
  if (typeof tool.execute !== 'function') return { skip: 'has no execute (a client-side tool): there is nothing for Toolhost to run' };
  let description = tool.description;
  if (typeof description === 'function') description = description({ context: undefined, experimental_sandbox: undefined });
  let inputSchema;
  try {
    inputSchema = await inputJsonSchema(entry, tool.inputSchema ?? tool.parameters);
  } catch (e) {
    return { skip: `its input schema cannot be represented as JSON Schema: ${e?.message ?? e}` };
  }
  return { tool: { key, description: typeof description === 'string' ? description : '', inputSchema } };
}

async function describeMap(entry, map) {
  const tools = [];
  const skipped = [];
  for (const [key, tool] of Object.entries(map ?? {})) {
    const d = await describeTool(entry, key, tool);
    if (d.tool) tools.push(d.tool);
    else skipped.push({ tool: key, reason: d.skip });
  }
  return { tools, skipped };
}

async function load(entry, settings) {
  const p = await loaded(entry, settings);
  const m = p.manifest;
  const toolSets = [];
  for (const set of m.contributes.toolSets ?? []) {
    const view = { id: set.id, name: set.name, category: set.category, description: set.description ?? '', factory: typeof set.tools === 'function' };
    if (!view.factory) {
      const { tools, skipped } = await describeMap(entry, set.tools);
      const bad = skipped.find((s) => s.reason.startsWith('tool key'));
      if (bad) throw new PluginError('manifest', `tool set "${set.id}": ${bad.reason}`);
      Object.assign(view, { tools, skipped });
    }
    toolSets.push(view);
  }
  const backends = (list) => (list ?? []).map((b) => ({ id: String(b?.id ?? ''), name: String(b?.name ?? b?.id ?? '') }));
  return {
    name: m.name,
    version: m.version,
    apiVersion: m.apiVersion,
    toolSets,
    sandboxBackends: backends(m.contributes.sandboxBackends),
    webBackends: backends(m.contributes.webBackends),
  };
}

// --- turns --------------------------------------------------------------------------

function turnOf(id) {
  let t = turns.get(id);
  if (!t) {
    t = { tools: new Map(), closers: new Set(), closed: false };
    turns.set(id, t);
  }
  return t;
}

function context(turn, ctx) {
  return {
    workspaceId: ctx?.workspaceId ?? '',
    agentId: ctx?.agentId ?? '',
    orgId: ctx?.orgId ?? '',
    frontendUrl: ctx?.frontendUrl ?? undefined,
    userId: ctx?.userId ?? '',
    registerCloser: (close) => {
      if (typeof close !== 'function') return;
      if (turn.closed) void runClosers(new Set([close]), turn.logger);
      else turn.closers.add(close);
    },
  };
}

function factoryFailed(p, set, e) {
  return new PluginError('factory', `tool set "${p.manifest.name}.${set}": its factory failed: ${e?.message ?? e}`);
}

async function factoryTools(p, setId, turnId, ctx) {
  const set = p.sets.get(setId);
  if (!set) throw new PluginError('turn', `the plugin "${p.manifest.name}" has no tool set "${setId}"`);
  if (typeof set.tools !== 'function') return set.tools;
  const turn = turnOf(turnId);
  turn.logger = p.pluginCtx.logger;
  const built = turn.tools.get(setId);
  if (built) return built;
  const tools = await set.tools(context(turn, ctx), p.pluginCtx);
  if (!tools || typeof tools !== 'object') throw new Error(`the factory returned ${safeJson(tools)}, not an object of tools`);
  turn.tools.set(setId, tools);
  return tools;
}

async function factory(entry, settings, { set, turn, ctx }) {
  const p = await loaded(entry, settings);
  let tools;
  try {
    tools = await factoryTools(p, set, turn, ctx);
  } catch (e) {
    throw factoryFailed(p, set, e);
  }
  return describeMap(entry, tools);
}

async function runClosers(closers, log) {
  const report = { ran: closers.size, failed: [], timedOut: 0 };
  await Promise.all(
    [...closers].map(async (close) => {
      let timer;
      const deadline = new Promise((resolve) => {
        timer = setTimeout(() => resolve('timeout'), CLOSER_DEADLINE_MS);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(() => close()), deadline]);
        if (outcome === 'timeout') {
          report.timedOut += 1;
          log?.warn(`a closer was still running after ${CLOSER_DEADLINE_MS / 1000} s: abandoned`);
        }
      } catch (e) {
        report.failed.push(e?.message ?? String(e));
        log?.warn(`a closer failed: ${e?.message ?? e}`);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return report;
}

async function close(entry, settings, { turn }) {
  const t = turns.get(turn);
  if (!t) return { ran: 0, failed: [], timedOut: 0 };
  t.closed = true;
  turns.delete(turn);
  const closers = t.closers;
  t.closers = new Set();
  return runClosers(closers, t.logger);
}

// --- calls --------------------------------------------------------------------------

/** The tool's own schema parses the arguments (defaults, transforms) before execute. */
async function parseInput(schema, input) {
  if (schema === undefined || schema === null) return { ok: true, value: input };
  if (typeof schema === 'object' && schema[AI_SCHEMA]) {
    if (typeof schema.validate !== 'function') return { ok: true, value: input };
    const r = await schema.validate(input);
    return r.success ? { ok: true, value: r.value } : { ok: false, message: r.error?.message ?? String(r.error) };
  }
  if (typeof schema?.safeParseAsync === 'function') {
    const r = await schema.safeParseAsync(input);
    return r.success ? { ok: true, value: r.data } : { ok: false, message: issues(r.error) };
  }
  const standard = schema?.['~standard'];
  if (typeof standard?.validate === 'function') {
    const r = await standard.validate(input);
    return r.issues ? { ok: false, message: issues(r) } : { ok: true, value: r.value };
  }
  if (typeof schema === 'function') return parseInput(schema(), input);
  return { ok: true, value: input };
}

/** A JSON round trip, as Platypus normalises tool results (Date → ISO string). */
function plain(value) {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value));
}

function textOf(value) {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** An AI SDK `ToolResultOutput` as MCP content. */
function fromModelOutput(out) {
  switch (out?.type) {
    case 'text':
      return { content: [{ type: 'text', text: String(out.value ?? '') }] };
    case 'json': {
      const value = plain(out.value);
      return { content: [{ type: 'text', text: textOf(value) }], structuredContent: isPlainObject(value) ? value : undefined };
    }
    case 'error-text':
      return { content: [{ type: 'text', text: String(out.value ?? '') }], isError: true };
    case 'error-json':
      return { content: [{ type: 'text', text: textOf(plain(out.value)) }], isError: true };
    case 'execution-denied':
      return { content: [{ type: 'text', text: `execution denied${out.reason ? `: ${out.reason}` : ''}` }], isError: true };
    case 'content':
      return { content: (out.value ?? []).map(contentPart) };
    default:
      throw new Error(`toModelOutput returned an output of unknown type ${safeJson(out?.type)}`);
  }
}

function contentPart(part) {
  switch (part?.type) {
    case 'text':
      return { type: 'text', text: String(part.text ?? '') };
    case 'image-data':
      return { type: 'image', data: part.data, mimeType: part.mediaType };
    case 'file-data':
    case 'media':
      return part.mediaType?.startsWith('image/')
        ? { type: 'image', data: part.data, mimeType: part.mediaType }
        : { type: 'resource', resource: { uri: `data:${part.mediaType};base64,`, mimeType: part.mediaType, blob: part.data } };
    case 'file': {
      // ai 7's form: `data` says whether it is inline bytes or a URL.
      const data = part.data;
      if (data?.type === 'data' || typeof data === 'string') {
        return contentPart({ type: 'file-data', data: typeof data === 'string' ? data : data.data, mediaType: part.mediaType });
      }
      if (data?.type === 'url') return contentPart({ type: 'file-url', url: String(data.url), mediaType: part.mediaType });
      return { type: 'text', text: safeJson(part) };
    }
    case 'image-url':
    case 'file-url':
      return { type: 'resource_link', uri: part.url, name: part.url, mimeType: part.mediaType };
    default:
      return { type: 'text', text: safeJson(part) };
  }
}

function aiMajor(entry) {
  try {
    const require = createRequire(entry);
    return Number(JSON.parse(readFileSync(require.resolve('ai/package.json'), 'utf8')).version.split('.')[0]);
  } catch {
    return 7;
  }
}

async function modelResult(entry, tool, toolCallId, input, output) {
  if (typeof tool.toModelOutput === 'function') {
    const out = aiMajor(entry) <= 5 ? await tool.toModelOutput(output) : await tool.toModelOutput({ toolCallId, input, output });
    return fromModelOutput(out);
  }
  const value = plain(output);
  return { content: [{ type: 'text', text: textOf(value) }], structuredContent: isPlainObject(value) ? value : undefined };
}

/** The tools of `set` for this call, without a promise when they are at hand. */
function toolsNow(p, set, turn, ctx) {
  const contribution = p.sets.get(set);
  if (contribution && typeof contribution.tools !== 'function') return contribution.tools;
  const built = turns.get(turn)?.tools.get(set);
  if (built) return built;
  // A factory's tools for a turn this worker has not seen (it is new): built again.
  return factoryTools(p, set, turn ?? 0, ctx).catch((e) => {
    throw factoryFailed(p, set, e);
  });
}

/** The tool's own schema parses the arguments: synchronously when it can. */
function parseNow(schema, input) {
  if (schema !== null && typeof schema === 'object' && typeof schema.safeParse === 'function' && !schema[AI_SCHEMA]) {
    try {
      const r = schema.safeParse(input);
      return r.success ? { ok: true, value: r.data } : { ok: false, message: issues(r.error) };
    } catch {
      // An async refinement or transform: the async parser handles it.
    }
  }
  return parseInput(schema, input);
}

/**
 * Runs a tool of the plugin: returns the call's result (a string as it is, anything else
 * as MCP content). `onUpdate` takes progress; `signal` is the call's abort signal. A throw
 * is the call's error (the harness reports it). The common case (plugin loaded, a static
 * tool or a known turn's, a synchronous schema) awaits only the tool.
 */
function execute(entry, settings, op, toolCallId, params, signal, onUpdate) {
  const p = plugins.get(entry);
  if (!p) return loaded(entry, settings).then(() => execute(entry, settings, op, toolCallId, params, signal, onUpdate));
  const tools = toolsNow(p, op.set, op.turn, op.ctx);
  if (typeof tools?.then === 'function') return tools.then((t) => callTool(entry, p, t, op, toolCallId, params, signal, onUpdate));
  return callTool(entry, p, tools, op, toolCallId, params, signal, onUpdate);
}

function callTool(entry, p, tools, { set, tool: key }, toolCallId, params, signal, onUpdate) {
  const tool = tools?.[key];
  if (!tool || typeof tool.execute !== 'function') {
    throw new PluginError('turn', `tool set "${p.manifest.name}.${set}" has no tool "${key}" now`);
  }
  const parsed = parseNow(tool.inputSchema ?? tool.parameters, params);
  if (typeof parsed.then === 'function') return parsed.then((r) => runTool(entry, tool, toolCallId, r, signal, onUpdate));
  return runTool(entry, tool, toolCallId, parsed, signal, onUpdate);
}

function runTool(entry, tool, toolCallId, parsed, signal, onUpdate) {
  if (!parsed.ok) return { content: [{ type: 'text', text: `invalid arguments: ${parsed.message}` }], isError: true };
  const options = { toolCallId, messages: [], abortSignal: signal, context: undefined, experimental_context: undefined };
  const output = tool.execute.call(tool, parsed.value, options);
  const done = (value) => {
    if (typeof value === 'string' && typeof tool.toModelOutput !== 'function') return value;
    return modelResult(entry, tool, toolCallId, parsed.value, value);
  };
  if (output && typeof output[Symbol.asyncIterator] === 'function' && typeof output.then !== 'function') {
    return lastYield(output, onUpdate).then(done);
  }
  if (typeof output?.then === 'function') return output.then(done);
  return done(output);
}

// Every yield is a preliminary result; the last one is the output (a generator's return
// value is not: the AI SDK discards it).
async function lastYield(generator, onUpdate) {
  let last;
  for await (const part of generator) {
    last = part;
    onUpdate({ content: [{ type: 'text', text: textOf(plain(part)) }] });
  }
  return last;
}

/** One plugin operation: its value, or a promise of it. */
export function run(message, signal, onUpdate) {
  const { entry, toolCallId, params, plugin } = message;
  switch (plugin.op) {
    case 'manifest':
      return manifestOf(entry).then((m) => ({ name: m.name }));
    case 'load':
      return load(entry, plugin.settings);
    case 'factory':
      return factory(entry, plugin.settings, plugin);
    case 'close':
      return close(entry, plugin.settings, plugin);
    case 'execute':
      return execute(entry, plugin.settings, plugin, toolCallId, params, signal, onUpdate);
    default:
      return Promise.reject(new PluginError('protocol', `unknown plugin operation ${safeJson(plugin.op)}`));
  }
}
