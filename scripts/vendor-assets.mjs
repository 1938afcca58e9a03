#!/usr/bin/env node
// Vendors the console's third-party front-end files into crates/console/assets/vendor/,
// each at an exact version and with its licence. Run by hand (`node scripts/vendor-assets.mjs`)
// when a version changes, and commit the result: `cargo build` never needs Node.js or the
// network, and the console never fetches anything at run time.
//
// Versions:
// - htmx.org 2.0.11, the newest 2.x. htmx 4 is stable on the registry (4.0.1), but
//   htmx-ext-sse (which the playground's live progress will use) declares
//   `"htmx.org": "^2.0.2"` as its peer: htmx 4 rewrote the extension API and moved
//   server-sent events into its core. Moving to 4 means dropping the extension, in one step.
// - htmx-ext-sse 2.2.4, the newest.
// - lucide-static 1.62.0 (ISC): every icon, since a tool set may name any of them. They are
//   packed into one text file, `lucide-icons.txt`: a line per icon, `NAME<TAB>INNER`, where
//   INNER is the SVG's inner elements (every icon shares the same <svg> attributes, which
//   the console writes once). The console puts only the icons a page uses into that page,
//   as an inline sprite of <symbol>s.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync, mkdirSync, rmSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = {
  'htmx.org': '2.0.11',
  'htmx-ext-sse': '2.2.4',
  'lucide-static': '1.62.0',
};

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(repo, 'crates/console/assets/vendor');
const work = mkdtempSync(join(tmpdir(), 'toolhost-vendor-'));
try {
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'vendor', private: true, dependencies: PACKAGES }, null, 2));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', '--save-exact'], { cwd: work, stdio: 'inherit' });
  const mod = (name) => join(work, 'node_modules', name);
  for (const [name, version] of Object.entries(PACKAGES)) {
    const found = JSON.parse(readFileSync(join(mod(name), 'package.json'), 'utf8')).version;
    if (found !== version) throw new Error(`${name}: wanted ${version}, npm installed ${found}`);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  const licence = (name, target) => {
    const file = readdirSync(mod(name)).find((f) => /^licen[cs]e/i.test(f));
    if (!file) throw new Error(`${name} has no licence file`);
    copyFileSync(join(mod(name), file), join(out, target));
  };

  copyFileSync(join(mod('htmx.org'), 'dist/htmx.min.js'), join(out, 'htmx.min.js'));
  licence('htmx.org', 'htmx.LICENSE');

  const sse = ['dist/sse.min.js', 'sse.min.js', 'dist/sse.js', 'sse.js'].map((p) => join(mod('htmx-ext-sse'), p)).find(existsSync);
  if (!sse) throw new Error('htmx-ext-sse: no sse.js found');
  copyFileSync(sse, join(out, sse.endsWith('.min.js') ? 'htmx-ext-sse.min.js' : 'htmx-ext-sse.js'));
  licence('htmx-ext-sse', 'htmx-ext-sse.LICENSE');

  const icons = join(mod('lucide-static'), 'icons');
  const lines = [];
  for (const file of readdirSync(icons).filter((f) => f.endsWith('.svg')).sort()) {
    const svg = readFileSync(join(icons, file), 'utf8');
    const inner = svg.replace(/<!--[\s\S]*?-->/g, '').match(/<svg[^>]*>([\s\S]*)<\/svg>/);
    if (!inner) throw new Error(`${file}: not an <svg>`);
    const body = inner[1].replace(/\s*\n\s*/g, '').trim();
    if (body.includes('\t') || body.includes('\n')) throw new Error(`${file}: tab or newline inside`);
    lines.push(`${file.slice(0, -4)}\t${body}`);
  }
  if (!lines.some((l) => l.startsWith('wrench\t'))) throw new Error('lucide-static has no wrench');
  writeFileSync(join(out, 'lucide-icons.txt'), lines.join('\n') + '\n');
  // The names alone, sorted by code unit (as Rust compares strings), for the tool-set
  // layer's checks (`toolhost check` and `doctor` name an unknown icon).
  const names = lines.map((l) => l.split('\t')[0]).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  writeFileSync(join(repo, 'crates/toolsets/src/lucide-names.txt'), names.join('\n') + '\n');
  licence('lucide-static', 'lucide.LICENSE');

  writeFileSync(
    join(out, 'VERSIONS'),
    Object.entries(PACKAGES).map(([n, v]) => `${n} ${v}`).join('\n') + '\n',
  );
  console.log(`vendored ${Object.keys(PACKAGES).length} packages and ${lines.length} icons into ${out}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
