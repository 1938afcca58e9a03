import { spawn } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';

type ToolResult = {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
};

type OnUpdate = (partial: { content: Array<{ type: string; text: string }> }) => void;

type Params = {
  source_dir: string;
  categories?: string;
  rules?: string;
  mode?: string;
  dest_dir?: string;
  recursive?: boolean;
  ocr_fallback?: boolean;
  language?: string;
  output_path?: string;
};

type Outcome = {
  file: string;
  category?: string;
  score: number;
  keywords: string[];
  method?: string;
  dest?: string;
  error?: string;
};

const HOME = process.env.HOME || process.env.OFFICER_USER_ROOT || '/officer/user';
const DEFAULT_CATEGORIES = 'invoice,receipt,contract,bank_statement,other';
const FALLBACK = 'other';
const TEXT_PAGES = 3;
const OCR_PAGES = 2;
const MIN_TEXT_CHARS = 32;
const MAX_FILES = 5000;
const STEP_TIMEOUT_MS = 180_000;

// Built-in keywords (lower case, accents ignored); a phrase counts more than a word.
const BUILTIN: Record<string, string[]> = {
  invoice: [
    'invoice', 'invoice number', 'invoice no', 'invoice date', 'bill to', 'amount due', 'total due',
    'due date', 'payment terms', 'vat', 'tax id', 'rechnung', 'rechnungsnummer', 'facture', 'factura',
  ],
  receipt: [
    'receipt', 'payment received', 'amount paid', 'paid', 'thank you for your purchase', 'cashier',
    'change due', 'card payment', 'transaction approved', 'quittung', 'kassenbon', 'beleg', 'recu',
  ],
  contract: [
    'contract', 'agreement', 'hereby', 'parties', 'party', 'terms and conditions', 'governing law',
    'signature', 'signed', 'effective date', 'termination', 'whereas', 'vertrag', 'vereinbarung', 'contrat',
  ],
  bank_statement: [
    'bank statement', 'statement', 'account number', 'opening balance', 'closing balance', 'balance',
    'iban', 'bic', 'transactions', 'statement period', 'kontoauszug', 'releve de compte',
  ],
};

class ToolError extends Error {}

function ok(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

function err(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function run(
  bin: string,
  args: string[],
  signal: AbortSignal | undefined,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    if (signal?.aborted) return reject(new ToolError('Cancelled.'));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    let errBytes = 0;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      if (errBytes < 64 * 1024) errs.push(d);
      errBytes += d.length;
    });
    let timedOut = false;
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, STEP_TIMEOUT_MS);
    signal?.addEventListener('abort', kill, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
    };
    child.on('error', (e) => {
      done();
      reject(e);
    });
    child.on('close', (code) => {
      done();
      if (signal?.aborted) return reject(new ToolError('Cancelled.'));
      resolvePromise({
        code: timedOut ? 124 : (code ?? 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: timedOut ? `timed out after ${STEP_TIMEOUT_MS / 1000} s` : Buffer.concat(errs).toString('utf8'),
      });
    });
  });
}

/** Lower case, accents removed, runs of non-letters one space: what keywords match against. */
function fold(s: string): string {
  return ` ${s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;
}

function isPdf(file: string): boolean {
  const fd = openSync(file, 'r');
  const b = Buffer.alloc(5);
  try {
    readSync(fd, b, 0, 5, 0);
  } finally {
    closeSync(fd);
  }
  return b.toString('latin1') === '%PDF-';
}

function listPdfs(dir: string, recursive: boolean, skip: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) {
        if (recursive && full !== skip && !entry.name.startsWith('.')) walk(full);
      } else if (entry.isFile() && extname(entry.name).toLowerCase() === '.pdf') {
        found.push(full);
        if (found.length > MAX_FILES) {
          throw new ToolError(`More than ${MAX_FILES} PDFs under ${dir}: sort a smaller folder at a time.`);
        }
      }
    }
  };
  walk(dir);
  return found;
}

function parseRules(categories: string[], rules: string | undefined): Map<string, string[]> {
  let custom: Record<string, unknown> = {};
  if (rules && rules.trim()) {
    try {
      custom = JSON.parse(rules) as Record<string, unknown>;
    } catch (e) {
      throw new ToolError(`rules is not valid JSON (${e instanceof Error ? e.message : e}); write it like {"tax": ["tax return", "irs"]}.`);
    }
    if (!custom || typeof custom !== 'object' || Array.isArray(custom)) {
      throw new ToolError('rules must be a JSON object of category → list of keywords.');
    }
  }
  const out = new Map<string, string[]>();
  for (const c of categories) {
    const given = custom[c];
    if (given !== undefined && (!Array.isArray(given) || given.some((k) => typeof k !== 'string'))) {
      throw new ToolError(`rules["${c}"] must be a list of keyword strings.`);
    }
    const words = (given as string[] | undefined) ?? BUILTIN[c] ?? [c.replace(/[_-]+/g, ' ')];
    out.set(c, words.map((w) => fold(w).trim()).filter(Boolean));
  }
  for (const c of Object.keys(custom)) {
    if (!categories.includes(c)) {
      throw new ToolError(`rules names "${c}", which is not in categories (${categories.join(', ')}); add it there.`);
    }
  }
  return out;
}

function score(text: string, rules: Map<string, string[]>, fallback: string | undefined): { category?: string; score: number; keywords: string[] } {
  const folded = fold(text);
  let best: { category?: string; score: number; keywords: string[] } = { score: 0, keywords: [] };
  for (const [category, words] of rules) {
    if (category === fallback) continue;
    let total = 0;
    const hit: string[] = [];
    for (const w of words) {
      const n = folded.split(` ${w} `).length - 1;
      if (n > 0) {
        hit.push(w);
        total += Math.min(n, 5) * w.split(' ').length;
      }
    }
    if (total > best.score) best = { category, score: total, keywords: hit };
  }
  if (!best.category) best.category = fallback;
  return best;
}

async function extract(
  file: string,
  tools: { pdftotext: string; pdftoppm?: string; tesseract?: string },
  ocr: boolean,
  language: string,
  work: string,
  signal: AbortSignal | undefined,
): Promise<{ text: string; method: string }> {
  const r = await run(tools.pdftotext, ['-l', String(TEXT_PAGES), '-enc', 'UTF-8', file, '-'], signal);
  if (r.code !== 0) {
    const why = r.stderr.trim().split('\n').slice(-2).join(' ');
    if (/incorrect password|encrypt/i.test(why)) throw new ToolError('encrypted (needs a password); left where it is');
    throw new ToolError(`not a readable PDF (${why || `pdftotext exit status ${r.code}`}); left where it is`);
  }
  if (r.stdout.replace(/\s/g, '').length >= MIN_TEXT_CHARS || !ocr) {
    return { text: r.stdout, method: 'text' };
  }
  if (!tools.pdftoppm || !tools.tesseract) {
    throw new ToolError(
      'no text layer, and OCR is unavailable: install the Debian packages tesseract-ocr and poppler-utils, or pass ocr_fallback=false',
    );
  }
  const prefix = join(work, 'page');
  const raster = await run(tools.pdftoppm, ['-r', '200', '-gray', '-png', '-f', '1', '-l', String(OCR_PAGES), file, prefix], signal);
  if (raster.code !== 0) throw new ToolError(`could not render it for OCR: ${raster.stderr.trim()}`);
  let text = r.stdout;
  for (const png of readdirSync(work).filter((f) => f.endsWith('.png')).sort()) {
    const t = await run(tools.tesseract, [join(work, png), 'stdout', '-l', language], signal);
    if (t.code !== 0) throw new ToolError(`tesseract failed: ${t.stderr.trim().split('\n').slice(-2).join(' ')}`);
    text += `\n${t.stdout}`;
    rmSync(join(work, png), { force: true });
  }
  return { text, method: 'ocr' };
}

/** Copies or moves `src` into `dir` under its own name, or "name (2).pdf"… when taken; never overwrites. */
function place(src: string, dir: string, move: boolean): string {
  mkdirSync(dir, { recursive: true });
  const ext = extname(src);
  const stem = basename(src, ext);
  for (let n = 1; n < 10_000; n++) {
    const target = join(dir, n === 1 ? `${stem}${ext}` : `${stem} (${n})${ext}`);
    try {
      if (move) {
        // link() fails with EEXIST rather than replace: the no-overwrite check and the
        // placing are one step.
        try {
          linkSync(src, target);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EXDEV' && (e as NodeJS.ErrnoException).code !== 'EPERM') throw e;
          copyFileSync(src, target, constants.COPYFILE_EXCL);
        }
        unlinkSync(src);
      } else {
        copyFileSync(src, target, constants.COPYFILE_EXCL);
      }
      return target;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw e;
    }
  }
  throw new ToolError(`no free name for ${basename(src)} in ${dir}`);
}

function inHome(p: string): string {
  return isAbsolute(p) ? p : resolve(HOME, p);
}

export async function execute(
  _toolCallId: string,
  params: Params,
  signal?: AbortSignal,
  onUpdate?: OnUpdate,
): Promise<ToolResult> {
  try {
    if (!params.source_dir || !params.source_dir.trim()) {
      return err('source_dir is required: the folder of PDFs to sort (relative paths are in the user\'s home).');
    }
    const source = inHome(params.source_dir);
    if (!existsSync(source)) return err(`No such folder: ${source}.`);
    if (!statSync(source).isDirectory()) return err(`${source} is not a folder: source_dir names the folder holding the PDFs.`);
    const mode = params.mode || 'dry_run';
    if (!['dry_run', 'copy', 'move'].includes(mode)) return err(`Unknown mode "${mode}": use dry_run, copy or move.`);
    const categories = (params.categories || DEFAULT_CATEGORIES)
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    if (!categories.length) return err('categories is empty: give a comma-separated list such as invoice,receipt,other.');
    const bad = categories.find((c) => !/^[\p{L}\p{N}_ .-]+$/u.test(c) || c === '.' || c === '..');
    if (bad) return err(`Category "${bad}" cannot be a folder name: use letters, digits, _ - . and spaces.`);
    const rules = parseRules(categories, params.rules);
    const fallback = categories.includes(FALLBACK) ? FALLBACK : undefined;
    const dest = inHome(params.dest_dir || join(source, 'sorted'));
    const language = (params.language || 'eng').trim();
    const ocr = params.ocr_fallback ?? true;

    const pdftotext = findProgram('pdftotext');
    if (!pdftotext) {
      return err('pdftotext is not installed: install the Debian package `poppler-utils` (apt-get install poppler-utils).');
    }
    const tools = { pdftotext, pdftoppm: findProgram('pdftoppm'), tesseract: findProgram('tesseract') };

    const files = listPdfs(source, params.recursive ?? false, dest);
    if (!files.length) {
      return ok(`No PDF files in ${source}${params.recursive ? ' or its subfolders' : ' (pass recursive=true to look in subfolders)'}.`);
    }
    const outcomes: Outcome[] = [];
    const work = mkdtempSync(join(tmpdir(), 'pdf-categorizer-'));
    try {
      for (const [i, file] of files.entries()) {
        if (signal?.aborted) return err(`Cancelled after ${i} of ${files.length} files; the files handled so far stay where they were put.`);
        const name = relative(source, file);
        onUpdate?.({ content: [{ type: 'text', text: `${i + 1}/${files.length}: reading ${name}` }] });
        const outcome: Outcome = { file: name, score: 0, keywords: [] };
        try {
          if (!isPdf(file)) throw new ToolError('not a PDF (its contents do not start with %PDF-); left where it is');
          const { text, method } = await extract(file, tools, ocr, language, work, signal);
          const s = score(text, rules, fallback);
          Object.assign(outcome, s, { method });
          if (!s.category) {
            outcome.error = 'no keyword of any category matched, and there is no "other" category; left where it is';
          } else if (mode !== 'dry_run') {
            outcome.dest = relative(dest, place(file, join(dest, s.category), mode === 'move'));
          }
        } catch (e) {
          if (signal?.aborted) throw e;
          outcome.error = e instanceof Error ? e.message : String(e);
        }
        outcomes.push(outcome);
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    const counts = new Map<string, number>();
    for (const o of outcomes) {
      const k = o.error ? 'not sorted' : (o.category ?? 'not sorted');
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    const verb = mode === 'dry_run' ? 'would go to' : mode === 'copy' ? 'copied to' : 'moved to';
    const lines = outcomes.map((o) => {
      if (o.error) return `${o.file} → not sorted: ${o.error}`;
      const why = o.keywords.length ? `score ${o.score}: ${o.keywords.join(', ')}` : 'no keywords matched';
      const where = mode === 'dry_run' ? `${verb} ${join(relative(source, dest) || '.', o.category ?? '')}/` : `${verb} ${o.dest}`;
      return `${o.file} → ${o.category} (${why}; ${o.method === 'ocr' ? 'read by OCR' : 'text layer'}) ${where}`;
    });
    const summary = [
      `${mode === 'dry_run' ? 'Dry run (nothing was changed; pass mode=copy or mode=move to sort)' : mode === 'copy' ? 'Copied' : 'Moved'}: ` +
        `${files.length} PDF${files.length === 1 ? '' : 's'} in ${source}` +
        (mode === 'dry_run' ? '' : `, into ${dest}`),
      [...counts].map(([k, n]) => `${k}: ${n}`).join(', '),
    ].join('\n');
    if (params.output_path) {
      const file = inHome(params.output_path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ mode, source, dest, files: outcomes }, null, 2));
      return ok(`${summary}\nThe per-file report is in ${file} (JSON).`);
    }
    return ok(`${summary}\n\n${lines.join('\n')}`);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return err(e instanceof ToolError ? message : `pdf_categorizer failed: ${message}`);
  }
}
