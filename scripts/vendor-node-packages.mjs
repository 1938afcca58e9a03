#!/usr/bin/env node
// Vendors the npm packages that Platypus plugins import and that Toolhost supplies when a
// plugin does not bring its own copy: the Vercel AI SDK (`ai`, `@ai-sdk/provider`,
// `@ai-sdk/provider-utils`), zod (every public entry point) and zod-to-json-schema (which
// Toolhost's loader uses for zod 3 copies older than 3.24). Run by hand
// (`node scripts/vendor-node-packages.mjs`) when a version changes, and commit the result:
// `cargo build` never needs Node.js or the network, and a plugin never triggers an install.
//
// The packages are bundled by esbuild into ES modules that share chunks, so `zod` and
// `zod/v4/core` are one zod, and `ai` uses that same zod. Output goes to
// crates/runtime/src/node/vendor/: `packages.json` maps each bare specifier to its file;
// `LICENSES.txt` holds every bundled package's licence. The runtime embeds the folder and
// installs it beside the worker harness.
//
// Versions: ai 7.0.173 (the newest; it declares `engines >=22` but runs on Node.js 20, which
// the plugin tests check), zod 4.6.7, zod-to-json-schema 3.25.2, and the provider packages
// ai 7.0.173 pins. esbuild 0.28.2 does the bundling.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = {
  ai: '7.0.173',
  '@ai-sdk/provider': '4.0.38',
  '@ai-sdk/provider-utils': '5.0.81',
  zod: '4.6.7',
  'zod-to-json-schema': '3.25.2',
};
const ESBUILD = '0.28.2';

// Bare specifier → output file name (without extension).
const ENTRIES = {
  ai: 'ai',
  '@ai-sdk/provider': 'ai-sdk-provider',
  '@ai-sdk/provider-utils': 'ai-sdk-provider-utils',
  zod: 'zod',
  'zod/mini': 'zod-mini',
  'zod/v3': 'zod-v3',
  'zod/v4': 'zod-v4',
  'zod/v4/core': 'zod-v4-core',
  'zod/v4/mini': 'zod-v4-mini',
  'zod/v4-mini': 'zod-v4-mini-alias',
  'zod-to-json-schema': 'zod-to-json-schema',
};

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(repo, 'crates/runtime/src/node/vendor');
const work = mkdtempSync(join(tmpdir(), 'toolhost-vendor-node-'));
try {
  writeFileSync(
    join(work, 'package.json'),
    JSON.stringify({ name: 'vendor', private: true, type: 'module', dependencies: { ...PACKAGES, esbuild: ESBUILD } }, null, 2),
  );
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact'], { cwd: work, stdio: 'inherit' });
  const mod = (name) => join(work, 'node_modules', name);
  for (const [name, version] of Object.entries({ ...PACKAGES, esbuild: ESBUILD })) {
    const found = JSON.parse(readFileSync(join(mod(name), 'package.json'), 'utf8')).version;
    if (found !== version) throw new Error(`${name}: wanted ${version}, npm installed ${found}`);
  }

  // One re-exporting module per entry point: `export *` leaves out a default export, so
  // it is re-exported by name where the package has one.
  const entries = join(work, 'entries');
  mkdirSync(entries);
  for (const [specifier, file] of Object.entries(ENTRIES)) {
    const probe = join(work, `probe-${file}.mjs`);
    writeFileSync(probe, `import * as m from ${JSON.stringify(specifier)}; process.stdout.write(String('default' in m));`);
    const hasDefault = execFileSync(process.execPath, [probe], { cwd: work, encoding: 'utf8' }) === 'true';
    writeFileSync(
      join(entries, `${file}.mjs`),
      `export * from ${JSON.stringify(specifier)};\n` + (hasDefault ? `export { default } from ${JSON.stringify(specifier)};\n` : ''),
    );
  }

  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  execFileSync(
    join(work, 'node_modules/.bin/esbuild'),
    [
      ...Object.values(ENTRIES).map((f) => join(entries, `${f}.mjs`)),
      '--bundle',
      '--splitting',
      '--format=esm',
      '--platform=node',
      '--target=node20',
      '--minify',
      '--keep-names',
      '--legal-comments=none',
      `--outdir=${out}`,
      '--chunk-names=chunks/[hash]',
      '--out-extension:.js=.mjs',
      // CommonJS dependencies inside the bundle call require() for Node's built-ins.
      "--banner:js=import{createRequire as __toolhostCreateRequire}from'node:module';const require=__toolhostCreateRequire(import.meta.url);",
      '--log-level=warning',
    ],
    { cwd: work, stdio: 'inherit' },
  );

  const map = Object.fromEntries(Object.entries(ENTRIES).map(([s, f]) => [s, `${f}.mjs`]));
  writeFileSync(join(out, 'packages.json'), `${JSON.stringify({ versions: PACKAGES, entries: map }, null, 2)}\n`);

  // Every package in the bundle, with its licence text.
  const bundled = readdirSync(join(work, 'node_modules'))
    .flatMap((n) => (n.startsWith('@') ? readdirSync(mod(n)).map((m) => `${n}/${m}`) : [n]))
    .filter((n) => !n.startsWith('.') && !n.startsWith('esbuild') && !n.startsWith('@esbuild'))
    .sort();
  let licences = 'Licences of the npm packages bundled in this folder (by scripts/vendor-node-packages.mjs).\n';
  for (const name of bundled) {
    const pkg = JSON.parse(readFileSync(join(mod(name), 'package.json'), 'utf8'));
    const file = readdirSync(mod(name)).find((f) => /^licen[cs]e/i.test(f));
    licences += `\n==== ${name}@${pkg.version} (${pkg.license ?? 'see below'}) ====\n`;
    licences += file ? readFileSync(join(mod(name), file), 'utf8') : `${pkg.license ?? 'no licence file'}\n`;
  }
  writeFileSync(join(out, 'LICENSES.txt'), licences);
  if (!existsSync(join(out, 'ai.mjs'))) throw new Error('esbuild wrote no ai.mjs');
  console.log(`vendored into ${out}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
