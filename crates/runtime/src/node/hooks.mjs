// Toolhost's module hooks for tool code, registered by harness.mjs (Node.js 20.6+).
//
// - TypeScript: Toolhost transpiles every .ts file of a tool folder with oxc before the
//   first call and stores the JavaScript as <cacheDir>/<sha256 of the source>.js (the
//   worker's user's own directory: a worker serves one user). This
//   hook serves it under the original file URL, so `import.meta.url` (and the `__dirname`
//   the transpiler derives from it) still point into the tool folder.
// - Versions: an entry is imported as `file:///…/index.ts?v=<hash>`; the version is
//   propagated to the tool's own relative imports so an edited tool reloads as a whole.
// - .js files of a tool folder are ES modules (tools use `export`), whatever Node's
//   package.json lookup would say; node_modules keep Node's normal rules.
// - Relative imports may omit the extension or name `.js` for a `.ts` file, as tsc allows.
//
// In a worker that runs a Platypus plugin (`plugins` in the data), a plugin package is not
// a tool folder: its .js files follow Node's rules (CommonJS or ES module by package.json),
// no version is appended (a fresh worker serves each code version), and what the plugin
// cannot resolve itself is supplied: `@platypuschat/plugin-sdk` (not published on npm)
// always, unless the plugin ships its own copy; `ai`, `@ai-sdk/*` and `zod` from the copies
// vendored beside this file. The plugin's own copies always win.

import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

let cacheDir = '';
let plugins = false;
let vendored = null;

export async function initialize(data) {
  cacheDir = data.cacheDir;
  plugins = Boolean(data.plugins);
  if (plugins) {
    const map = JSON.parse(await readFile(new URL('./vendor/packages.json', import.meta.url), 'utf8'));
    vendored = new Map(Object.entries(map.entries).map(([s, f]) => [s, new URL(`./vendor/${f}`, import.meta.url).href]));
    vendored.set('@platypuschat/plugin-sdk', new URL('./plugin-sdk.mjs', import.meta.url).href);
  }
}

function supplied(specifier) {
  return vendored?.get(specifier) ?? null;
}

const TS = /\.(ts|mts|cts|tsx)$/;
const TOOL_JS = /\.(js|mjs)$/;

function versionOf(url) {
  const q = url.indexOf('?');
  if (q < 0) return null;
  return new URLSearchParams(url.slice(q + 1)).get('v');
}

function ownCode(url) {
  return url.startsWith('file:') && !url.includes('/node_modules/');
}

function withVersion(result, version) {
  if (!version || !ownCode(result.url) || result.url.includes('?')) return result;
  return { ...result, url: `${result.url}?v=${version}` };
}

function alternatives(specifier) {
  const out = [];
  const m = specifier.match(/^(.*)\.(m?)js$/);
  if (m) out.push(`${m[1]}.${m[2]}ts`);
  if (!/\.[cm]?[jt]sx?$/.test(specifier)) {
    out.push(`${specifier}.ts`, `${specifier}.js`, `${specifier}/index.ts`, `${specifier}/index.js`);
  }
  return out;
}

export async function resolve(specifier, context, nextResolve) {
  if (plugins) return resolvePlugin(specifier, context, nextResolve);
  const parent = context.parentURL;
  const version = parent && ownCode(parent) ? versionOf(parent) : null;
  try {
    return withVersion(await nextResolve(specifier, context), version);
  } catch (error) {
    const relative = specifier.startsWith('./') || specifier.startsWith('../');
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !relative) throw error;
    for (const candidate of alternatives(specifier)) {
      try {
        return withVersion(await nextResolve(candidate, context), version);
      } catch {
        // try the next spelling
      }
    }
    throw error;
  }
}

async function resolvePlugin(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const copy = supplied(specifier);
    if (copy && error?.code === 'ERR_MODULE_NOT_FOUND') return { url: copy, format: 'module', shortCircuit: true };
    const relative = specifier.startsWith('./') || specifier.startsWith('../');
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !relative) throw error;
    for (const candidate of alternatives(specifier)) {
      try {
        return await nextResolve(candidate, context);
      } catch {
        // try the next spelling
      }
    }
    throw error;
  }
}

export async function load(url, context, nextLoad) {
  if (plugins) {
    if (ownCode(url) && TS.test(fileURLToPath(url.split('?')[0]))) return transpiled(url);
    return nextLoad(url, context);
  }
  if (ownCode(url)) {
    const path = fileURLToPath(url.split('?')[0]);
    if (TS.test(path)) return transpiled(url);
    if (TOOL_JS.test(path)) {
      // Served from the cache when Toolhost prepared it (to define __dirname and friends),
      // else as it is.
      const source = await readFile(path);
      const digest = createHash('sha256').update(source).digest('hex');
      const prepared = await readFile(join(cacheDir, `${digest}.js`), 'utf8').catch(() => null);
      return { format: 'module', source: prepared ?? source, shortCircuit: true };
    }
  }
  return nextLoad(url, context);
}

async function transpiled(url) {
  const path = fileURLToPath(url.split('?')[0]);
  const source = await readFile(path);
  const digest = createHash('sha256').update(source).digest('hex');
  let js;
  try {
    js = await readFile(join(cacheDir, `${digest}.js`), 'utf8');
  } catch {
    throw new Error(`toolhost: ${path} changed after it was transpiled; call the tool again`);
  }
  return { format: 'module', source: js, shortCircuit: true };
}
